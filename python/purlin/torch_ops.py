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
from typing import List

_done = False


def register():
    global _done
    if _done:
        return
    _done = True
    import torch
    from .cuda import _COLLS, _COMMS

    @torch.library.custom_op("purlin::all_reduce_", mutates_args=("tensors",))
    def all_reduce_(tensors: List[torch.Tensor], comm: int, op: str) -> None:
        _COMMS[comm].run_standard("all_reduce", tensors, tensors, 0, op)

    @all_reduce_.register_fake
    def _(tensors, comm, op):
        return None

    @torch.library.custom_op("purlin::broadcast_", mutates_args=("tensors",))
    def broadcast_(tensors: List[torch.Tensor], comm: int, src: int) -> None:
        _COMMS[comm].run_standard("broadcast", tensors, tensors, src, "sum")

    @broadcast_.register_fake
    def _(tensors, comm, src):
        return None

    @torch.library.custom_op("purlin::reduce_", mutates_args=("tensors",))
    def reduce_(tensors: List[torch.Tensor], comm: int, dst: int, op: str) -> None:
        _COMMS[comm].run_standard("reduce", tensors, tensors, dst, op)

    @reduce_.register_fake
    def _(tensors, comm, dst, op):
        return None

    @torch.library.custom_op("purlin::collective", mutates_args=("outputs",))
    def collective(inputs: List[torch.Tensor], outputs: List[torch.Tensor],
                   comm: int, name: str, root: int, op: str) -> None:
        _COMMS[comm].run_standard(name, inputs, outputs, root, op)

    @collective.register_fake
    def _(inputs, outputs, comm, name, root, op):
        return None

    @torch.library.custom_op("purlin::call_", mutates_args=("outputs",))
    def call_(inputs: List[torch.Tensor], outputs: List[torch.Tensor],
              coll: int, spec: str) -> None:
        _COLLS[coll].run(**_unflatten(inputs, outputs, spec))

    @call_.register_fake
    def _(inputs, outputs, coll, spec):
        return None


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
