"""Virtual ranks on one GPU: ``Communicator.local(nranks, "cuda:0")``.

Every rank's buffer is a torch tensor on that GPU (one per rank, in a
list); in one process every allocation is visible to every virtual rank,
so any tensor works and ``comm.empty`` is a plain allocation (one process
per GPU will need symmetric memory: ``Communicator.from_process_group``).
Launches go on the current torch stream, never synchronize the host, and
can be captured in a CUDA graph once their kernels are ready (a first call,
or ``coll.prepare``, outside the capture). Under ``torch.compile`` the calls
are the custom ops of torch_ops.py.
"""
import atexit
import ctypes
import functools
import operator

import torch

from . import _arrays, _fastpath
from .communicator import Communicator, op_name

# The standard calls: buffer sizes per rank as (x, y) in units of C.
_SHAPES = {"all_reduce": (1, 1), "broadcast": (1, 1), "reduce": (1, 1),
           "all_gather": (1, "R"), "gather": (1, "R"), "reduce_scatter": ("R", 1),
           "scatter": ("R", 1), "all_to_all": ("R", "R")}
_REDUCES = {"all_reduce", "reduce", "reduce_scatter"}
_ROOTED = {"broadcast", "reduce", "gather", "scatter"}

_COMMS = {}  # id -> communicator, for the custom ops
_COLLS = []  # index -> Collective called under torch.compile (purlin::call_)

# Bound once, as every eager call asks (Dynamo knows the function itself,
# under any name, and traces it as True).
_is_compiling = torch.compiler.is_compiling
_Tensor = torch.Tensor


def _close_all():
    for c in list(_COMMS.values()):
        try:
            c.close()
        except Exception:
            pass


def _gpu_target(index):
    import torch
    major, minor = torch.cuda.get_device_capability(index)
    cap = major * 10 + minor
    for t in (100, 90, 80):
        if cap >= t:
            return f"sm_{t}"
    raise ValueError(f"GPU {index} (sm_{cap}) is older than purlin's targets")


class CudaCommunicator(Communicator):
    # The device type the C++ path of the eager calls (_fastpath.cpp) checks
    # the tensors against and reads the current stream of.
    fast_device_type = "cuda"
    # A fixed stream handle for the C++ path instead of the device's current
    # stream (None): for a device type without streams (the CPU tests).
    fast_stream = None

    def __init__(self, nranks, device, target=None):
        import torch
        from . import _cuda
        self.torch = torch
        dev = torch.device(device)
        index = dev.index if dev.index is not None else torch.cuda.current_device()
        if index >= torch.cuda.device_count():
            raise ValueError(f"device {device!r}: this machine has "
                             f"{torch.cuda.device_count()} GPUs")
        super().__init__(nranks, f"cuda:{index}", target or _gpu_target(index))
        self.index = index
        self.tdevice = torch.device("cuda", index)
        with torch.cuda.device(index):
            self.handle = self._create_handle()
        self.id = len(_COMMS)
        _COMMS[self.id] = self
        self._impls = []  # every CudaColl made here, closed with the comm
        self._calls = {}  # run_standard's checked constants, see _StdCall
        # The C++ path's run() once it is built (None: the Python path
        # alone); whether it is wanted (set_fast_path, PURLIN_TORCH_EXT).
        self._fast = None
        self._fast_on = _fastpath.enabled()
        if len(_COMMS) == 1:
            # Before the interpreter tears down torch and the CUDA runtime:
            # free purlin's memory while they still answer.
            atexit.register(_close_all)
        from . import torch_ops
        torch_ops.register()

    def _create_handle(self):
        """The C API's communicator: virtual ranks, all on this GPU."""
        from . import _cuda
        devs = (ctypes.c_int * self.nranks)(*([self.index] * self.nranks))
        h = ctypes.c_void_p()
        _cuda.check(_cuda.lib().purlinCommCreate(ctypes.byref(h), self.nranks, devs),
                    "purlinCommCreate")
        return h

    def load(self, path_or_compiled, **bind):
        coll = super().load(path_or_compiled, **bind)
        coll.trace_id = len(_COLLS)  # purlin::call_ names it by this
        _COLLS.append(coll)
        return coll

    def _load_impl(self, compiled):
        from ._cuda import CudaColl
        impl = CudaColl(self, compiled)
        self._impls.append(impl)
        return impl

    def close(self):
        """Frees the communicator's collectives and the communicator, after
        the GPU is done with them."""
        if self.handle is None:
            return
        from . import _cuda
        torch.cuda.synchronize(self.index)
        for impl in self._impls:
            impl.close()
        self._impls = []
        self._std = {}
        self._calls = {}
        self._release()
        _cuda.lib().purlinCommDestroy(self.handle)
        self.handle = None
        _COMMS.pop(self.id, None)

    def set_fast_path(self, on):
        """Turns the C++ path of the eager standard calls (_fastpath.cpp) on
        or off for this communicator; whether it is on (False where it is
        disabled, PURLIN_TORCH_EXT=0, or could not be built). On by default;
        off, every call takes the Python path (to compare the two: the GPU
        tests, bench.py)."""
        m = _fastpath.module() if on else None
        self._fast_on = m is not None
        self._fast = m.run if m is not None else None
        return self._fast_on

    def _release(self):
        """What the communicator holds besides its collectives (symmetric
        memory, registrations: ProcessCommunicator), freed before it."""

    def stream_getter(self):
        """The current torch stream of this GPU (its handle, an int) as a
        function of no argument, cheapest to call: torch's raw getter with
        this GPU bound, without making a Stream object (a launch asks every
        time)."""
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        if raw is not None:
            return functools.partial(raw, self.index)
        return lambda: torch.cuda.current_stream(self.index).cuda_stream

    def check_array(self, info, what, rank):
        if info.device != self.device:
            raise ValueError(f"{what} is on {info.device}; this communicator "
                             f"runs on {self.device}")
        super().check_array(info, what, rank)

    def empty(self, shape, dtype=None):
        """One tensor per rank on this GPU (symmetric: every rank's is
        reachable by every other; in one process, any allocation is)."""
        return [self.torch.empty(shape, dtype=dtype, device=self.tdevice)
                for _ in range(self.nranks)]

    def _f32(self):
        return self.torch.zeros(0, dtype=self.torch.float32)

    def _scalar_buffers(self, value, like):
        # Through empty(): symmetric memory where the ranks are processes.
        bufs = self.empty((1,), dtype=like.dtype)
        bufs = bufs if isinstance(bufs, (list, tuple)) else [bufs]
        for b in bufs:
            b.fill_(value)
        return bufs

    def check(self):
        """Raises when a device-side wait timed out (sticky); on a
        communicator of processes also when a CUDA graph was replayed
        before register_graph_buffers (once: PURLIN_ERR_NOT_REGISTERED)."""
        from . import _cuda
        _cuda.check(_cuda.lib().purlinCommCheck(self.handle), "purlinCommCheck")

    def register_graph_buffers(self):
        """After capturing CUDA graphs: makes the buffers they use reachable
        by the peers (purlinCommRegisterGraphBuffers). The ranks of one
        process reach any memory: nothing to do (a no-op)."""

    # -- the standard calls: custom ops under torch.compile, else direct --
    def _ranks(self, t):
        """One process per GPU takes this rank's tensor alone."""
        if self.local_ranks == 1 and isinstance(t, torch.Tensor):
            return [t]
        return t

    def all_reduce(self, tensors, op="sum"):
        tensors = self._ranks(tensors)
        if _is_compiling():
            return torch.ops.purlin.all_reduce_(tensors, self.id, op_name(op))
        self.run_standard("all_reduce", tensors, tensors, 0, op_name(op))

    def broadcast(self, tensors, src=0):
        tensors = self._ranks(tensors)
        if _is_compiling():
            return torch.ops.purlin.broadcast_(tensors, self.id, int(src))
        self.run_standard("broadcast", tensors, tensors, src, "sum")

    def reduce(self, tensors, dst=0, op="sum"):
        tensors = self._ranks(tensors)
        if _is_compiling():
            return torch.ops.purlin.reduce_(tensors, self.id, int(dst), op_name(op))
        self.run_standard("reduce", tensors, tensors, dst, op_name(op))

    def _out_of_place(self, name, output, input, root=0, op="sum"):
        output, input = self._ranks(output), self._ranks(input)
        if _is_compiling():
            return torch.ops.purlin.collective(input, output, self.id, name, int(root), op)
        self.run_standard(name, input, output, root, op)

    def all_gather_into_tensor(self, output, input):
        self._out_of_place("all_gather", output, input)

    def reduce_scatter_tensor(self, output, input, op="sum"):
        self._out_of_place("reduce_scatter", output, input, 0, op_name(op))

    def all_to_all_single(self, output, input):
        self._out_of_place("all_to_all", output, input)

    def gather(self, output, input, dst=0):
        self._out_of_place("gather", output, input, dst)

    def scatter(self, output, input, src=0):
        self._out_of_place("scatter", output, input, src)

    def traced_call(self, coll, kwargs):
        """Under torch.compile: the call as purlin::call_, its buffers
        flattened (inputs, then outputs; an input given as the same list as
        an output travels once, as that output) and the rest as text."""
        if not _is_compiling():
            return False
        ins, outs, layout, params = [], [], [], []
        kwargs = dict(kwargs)
        for name, _, _ in coll.buffers:
            if name in kwargs:
                kwargs[name] = self._ranks(kwargs[name])
        outputs = [n for n, o, _ in coll.buffers if o]
        for name, is_out, _ in coll.buffers:
            v = kwargs[name]
            same = next((o for o in outputs if not is_out and _same_buffers(kwargs[o], v)),
                        None)
            if same is not None:
                layout.append(name + "=@" + same)
            elif is_out:
                outs.extend(v)
                layout.append(name + "=o" + str(len(v)))
            else:
                ins.extend(v)
                layout.append(name + "=i" + str(len(v)))
        for k, v in kwargs.items():
            if k not in outputs and not any(k == n for n, _, _ in coll.buffers):
                params.append(k + "=" + str(v))
        torch.ops.purlin.call_(ins, outs, coll.trace_id,
                               ";".join(layout) + "|" + ";".join(params))
        return True

    def run_standard(self, name, xs, ys, root, op, bump=None):
        """The eager path of a standard call: one launch through the C API
        (no binding text, cached arguments). ``bump``: the torch op kernels'
        version-counter bumper, applied to the outputs (torch_ops.py).

        Once a call's constants have launched through Python, the same call
        goes to C++ (_fastpath.cpp: the checks, the addresses, the stream,
        purlinLaunch, the bump, in one C call). What C++ doubts (a bad
        tensor, a subclass, an instance grown since) comes on to the Python
        path below, which raises the exact error or launches.

        Its cost is per call, so only what can change between two calls is
        looked at every time: each tensor's class, dtype, device, contiguity,
        size and address (an existing tensor's can change: ``set_``,
        ``.data =``), in one pass that stops at the first doubt and then
        reruns the checks one by one for the exact error (_check_tensors).
        What follows from the call's constants alone (the first input's
        dtype and size, root, op: the size and root checks, the element
        type's number, the collective, its launcher) is worked out once per
        combination (self._calls)."""
        fast = self._fast
        if fast is not None:
            try:  # anything odd (not a list, not tensors): the checks below
                x0 = xs[0]
                call = self._calls[(name, x0.dtype, x0.numel(), root, op)]
            except Exception:
                call = None
            # Only on the instance the C++ call was made for: a larger one
            # made since (fit) has its own launcher, from the Python path.
            if call is not None and call.fast is not None and call.impl.coll is call.fast_coll:
                st = fast(call.fast, xs, ys, bump is not None)
                if st == 0:
                    return
                if st > 0:  # purlinLaunch failed: as the Python launcher says
                    from . import _cuda
                    _cuda.check(st, call.impl.name)
        if bump is not None:
            bump(ys)
        L = self.local_ranks
        if not isinstance(xs, (list, tuple)) or not isinstance(ys, (list, tuple)):
            raise TypeError(f"{name}: takes a list of {L} tensors, one per rank")
        if len(xs) != L or len(ys) != L:
            raise ValueError(f"{name}: {len(xs)} inputs and {len(ys)} outputs; "
                             f"the communicator has {L} ranks in this process")
        x0 = xs[0]
        if not isinstance(x0, _Tensor):
            raise TypeError(f"{name}: expected torch tensors, got {type(x0).__name__}")
        xdt, nx = x0.dtype, x0.numel()
        call = self._calls.get((name, xdt, nx, root, op))
        if call is None:
            call = self._std_call(name, xdt, nx, root, op)
        inplace = xs is ys
        ps = []
        if (_addresses(xs, xdt, self.index, call.nx, ps)
                and (inplace or _addresses(ys, xdt, self.index, call.ny, ps))):
            ptrs = call.layout[inplace](ps)
        else:
            ptrs = self._check_tensors(name, xs, ys, call)
        launch = call.impl.launchers.get(call.key) if call.impl else None
        if launch is None:
            launch = self._std_launcher(name, call)
        launch(ptrs)
        if self._fast_on and call.fast_coll is not call.impl.coll:
            self._fast_register(call, launch)

    def _fast_register(self, call, launch):
        """Hands a call's constants and launcher, after its first launch
        through Python, to the C++ path (built here at first use; where it
        cannot be, the Python path stays, warned once)."""
        call.fast_coll = call.impl.coll  # tried once per instance
        m = _fastpath.module()
        if m is None:
            self._fast_on = False
            return
        from . import _cuda
        impl, L = call.impl, self.local_ranks
        call.fast = m.make(
            _fastpath.launch_address(_cuda.lib()), impl.coll.value or 0,
            ctypes.addressof(launch.args), ctypes.addressof(impl.ptrs),
            ctypes.addressof(impl.stream), call.tdtype, self.fast_device_type,
            self.index, L, call.nx, call.ny, _order(L, True), _order(L, False),
            self.fast_stream)
        call.fast_launch = launch  # keeps the purlinArgs C++ points at
        self._fast = m.run

    def _std_call(self, name, xdt, nx, root, op):
        """run_standard's checks of the call's constants (raising as each
        call would), their results kept for the next call like it."""
        R, r0 = self.nranks, self.first_rank
        dt = _arrays._TORCH.get(str(xdt))
        if dt is None:
            raise TypeError(f"{name}: torch dtype {xdt} is not one purlin "
                            f"moves ({', '.join(_arrays.DTYPES)})")
        fx, fy = _SHAPES[name]
        fx = R if fx == "R" else fx
        fy = R if fy == "R" else fy
        C = nx // fx
        if C * fx != nx:
            raise ValueError(f"{name}: input of rank {r0} has {nx} elements, not "
                             f"a multiple of the {R} ranks")
        if name in _ROOTED and not 0 <= int(root) < R:
            raise ValueError(f"{name}: root {root} outside [0, {R})")
        call = _StdCall(xdt, fx, fy, C, int(root), _arrays.DTYPES.index(dt),
                        _arrays.OPS.index(op) if name in _REDUCES else 0,
                        (_interleave(self.local_ranks, False),
                         _interleave(self.local_ranks, True)))
        if len(self._calls) >= 4096:  # sizes without end (or odd roots): anew
            self._calls.clear()
        self._calls[(name, xdt, nx, root, op)] = call
        return call

    def _std_launcher(self, name, call):
        """The collective's launcher for a call (first use, or after its
        instance was replaced by a larger one)."""
        impl = call.impl = self.standard(name).impl
        C = call.C
        if impl.coll is None or impl.maxima.get("C", 0) < C:
            impl.fit({"C": C})
        vals = tuple(C if n == "C" else call.root for n in impl.scalar_names)
        call.key = (call.dt, call.op, vals)
        return impl.launcher(*call.key)

    def _check_tensors(self, name, xs, ys, call):
        """Every tensor checked one by one, raising for the first mistake;
        the addresses [rank * 2 + buffer] when there is none (a subclass of
        torch.Tensor: run_standard's quick pass takes torch.Tensor alone)."""
        r0, C = self.first_rank, call.C
        inplace = xs is ys
        ptrs = []
        dev = self.index
        xdt = xs[0].dtype
        for k in range(self.local_ranks):
            r = r0 + k
            for t, f, what in ((xs[k], call.fx, "input"), (ys[k], call.fy, "output")):
                if (type(t) is not torch.Tensor and not isinstance(t, torch.Tensor)):
                    raise TypeError(f"{name}: {what} of rank {r} is a "
                                    f"{type(t).__name__}, not a torch tensor")
                if t.dtype != xdt:
                    raise TypeError(f"{name}: {what} of rank {r} is {t.dtype}; "
                                    f"rank {r0}'s input is {xdt}")
                if t.get_device() != dev:
                    raise ValueError(f"{name}: {what} of rank {r} is on {t.device}; "
                                     f"this communicator runs on {self.device}")
                if not t.is_contiguous():
                    raise ValueError(f"{name}: {what} of rank {r} is not contiguous")
                if t.numel() != f * C:
                    raise ValueError(f"{name}: {what} of rank {r} has {t.numel()} "
                                     f"elements; the call needs {f * C} "
                                     f"(C={C}, from rank {r0}'s input)")
                p = t.data_ptr()
                ptrs.append(p)
                if inplace:  # the output is the input: checked once
                    ptrs.append(p)
                    break
        return ptrs


class _StdCall:
    """What run_standard works out once for a standard call's constants
    (name, first input's dtype and size, root, op): the elements each input
    and output has (nx, ny: fx, fy times C), the element type's and op's
    numbers, and, from the first launch on, the collective (impl) and its
    launcher's key; layout[inplace] puts the addresses in the C API's
    order. fast: the C++ path's call (_fastpath.cpp's make()) for the
    instance fast_coll, with the launcher it fills (fast_launch)."""
    __slots__ = ("tdtype", "fx", "fy", "nx", "ny", "C", "root", "dt", "op", "layout",
                 "impl", "key", "fast", "fast_coll", "fast_launch")

    def __init__(self, tdtype, fx, fy, C, root, dt, op, layout):
        self.tdtype = tdtype
        self.fx, self.fy, self.nx, self.ny, self.C = fx, fy, fx * C, fy * C, C
        self.root, self.dt, self.op, self.layout = root, dt, op, layout
        self.impl = self.key = None
        self.fast = self.fast_coll = self.fast_launch = None


def _addresses(ts, dt, dev, n, out):
    """Appends each tensor's address to out while it is a torch.Tensor of
    dtype dt on device dev, contiguous, of n elements; whether all were.
    run_standard's checks as one pass with no message: a False sends the
    call through _check_tensors."""
    T = _Tensor
    for t in ts:
        if (t.__class__ is not T or t.dtype is not dt or t.get_device() != dev
                or not t.is_contiguous() or t.numel() != n):
            return False
        out.append(t.data_ptr())
    return True


@functools.lru_cache(maxsize=None)
def _order(L, inplace):
    """The C layout [rank * 2 + buffer] of the addresses run_standard gathers
    (the inputs', then the outputs' unless in place): for each slot, the
    index of the address gathered."""
    if inplace:
        return tuple(k for k in range(L) for _ in (0, 1))
    return tuple(i for k in range(L) for i in (k, L + k))


@functools.lru_cache(maxsize=None)
def _interleave(L, inplace):
    """_order as one C call on the list of addresses."""
    return operator.itemgetter(*_order(L, inplace))


def _same_buffers(a, b):
    """Whether two arguments name the same tensors: the same tensor, or lists
    of the same tensors. Compared tensor by tensor, as Dynamo traces ``is``
    between tensors but not between two lists."""
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(x is y for x, y in zip(a, b))
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        return False
    return a is b
