"""The standard calls as torch custom ops (namespace ``purlin``), with fake
implementations, so that ``torch.compile(fullgraph=True)`` traces them
without graph breaks; a communicator is named by its id.

    purlin::all_reduce_(Tensor(a!)[] tensors, int comm, str op) -> ()
    purlin::broadcast_(Tensor(a!)[] tensors, int comm, int src) -> ()
    purlin::reduce_(Tensor(a!)[] tensors, int comm, int dst, str op) -> ()
    purlin::collective(Tensor[] inputs, Tensor(a!)[] outputs, int comm,
                       str name, int root, str op) -> ()
    purlin::call_(Tensor[] inputs, Tensor(a!)[] outputs, int coll,
                  str spec) -> ()   any loaded collective (cuda.traced_call)
"""
_done = False


# Each op's schema: the same as torch.library.custom_op would infer.
_SCHEMAS = {
    "all_reduce_": "(Tensor(a!)[] tensors, int comm, str op) -> ()",
    "broadcast_": "(Tensor(a!)[] tensors, int comm, int src) -> ()",
    "reduce_": "(Tensor(a!)[] tensors, int comm, int dst, str op) -> ()",
    "collective": "(Tensor[] inputs, Tensor(a!)[] outputs, int comm, str name, "
                  "int root, str op) -> ()",
    "call_": "(Tensor[] inputs, Tensor(a!)[] outputs, int coll, str spec) -> ()",
}
_lib = None  # the torch.library.Library: the ops live as long as it does


def register():
    """Defines the ops through torch.library.Library (define, impl for
    CompositeExplicitAutograd, register_fake) rather than
    torch.library.custom_op: the same schemas and fake implementations, but
    a call goes from the C++ dispatcher straight to the Python kernel.
    custom_op's kernels pass through Python autograd and ADInplaceOrView
    layers first (tens of microseconds a call on top of the launch, eager
    and compiled alike); here the C++ autograd fallback takes their place
    and the kernel bumps the mutated tensors' version counters itself, as
    custom_op's ADInplaceOrView layer did. Under torch.compile the ops are
    functionalized (auto_functionalized_v2), which Inductor turns back into
    the op on the caller's tensors: no clones or copies (aot_eager keeps
    them). The standard calls' kernels hand the bumper to run_standard:
    its C++ path (_fastpath.cpp) bumps in the same C call as the checks and
    the launch, its Python path first of all, as before."""
    global _done, _lib
    if _done:
        return
    _done = True
    import torch
    from .cuda import _COLLS, _COMMS

    bump = _version_bumper(torch)
    lib = _lib = torch.library.Library("purlin", "FRAGMENT")

    def define(name, kernel):
        lib.define(name + _SCHEMAS[name])
        lib.impl(name, kernel, "CompositeExplicitAutograd")
        torch.library.register_fake("purlin::" + name, _fake, lib=lib)

    def all_reduce_(tensors, comm, op):
        _COMMS[comm].run_standard("all_reduce", tensors, tensors, 0, op, bump)

    def broadcast_(tensors, comm, src):
        _COMMS[comm].run_standard("broadcast", tensors, tensors, src, "sum", bump)

    def reduce_(tensors, comm, dst, op):
        _COMMS[comm].run_standard("reduce", tensors, tensors, dst, op, bump)

    def collective(inputs, outputs, comm, name, root, op):
        _COMMS[comm].run_standard(name, inputs, outputs, root, op, bump)

    def call_(inputs, outputs, coll, spec):
        bump(outputs)
        _COLLS[coll].run(**_unflatten(inputs, outputs, spec))

    for kernel in (all_reduce_, broadcast_, reduce_, collective, call_):
        define(kernel.__name__, kernel)


def _fake(*args):
    """Every op's fake implementation: the ops return nothing."""
    return None


def _version_bumper(torch):
    """A function bumping the version counters of a list of tensors (what an
    in-place op does; inference tensors have none and are left alone)."""
    inc = getattr(torch._C, "_increment_version", None)
    if inc is not None:
        try:
            inc([])  # takes a list: one C call for all
            return inc
        except TypeError:
            pass
    one = torch.autograd.graph.increment_version

    def bump(tensors):  # an older torch: one tensor a call
        for t in tensors:
            if not t.is_inference():
                one(t)
    return bump


def _unflatten(inputs, outputs, spec):
    """The keyword arguments of a call from purlin::call_'s operands."""
    layout, params = spec.split("|")
    kw, i, o = {}, 0, 0
    for item in layout.split(";"):
        name, how = item.split("=")
        if how[0] == "i":
            kw[name] = list(inputs[i:i + int(how[1:])])
            i += int(how[1:])
        elif how[0] == "o":
            kw[name] = list(outputs[o:o + int(how[1:])])
            o += int(how[1:])
    for item in layout.split(";"):  # inputs given as an output's list
        name, how = item.split("=")
        if how[0] == "@":
            kw[name] = kw[how[1:]]
    for item in filter(None, params.split(";")):
        k, v = item.split("=", 1)
        kw[k] = int(v) if v.lstrip("-").isdigit() else v
    return kw
