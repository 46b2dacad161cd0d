"""The CUDA runtime's C API (runtime/include/purlin/purlin.h and
collective_source.h) through ctypes, and a collective on it whose kernels
NVRTC compiles from purlinc's output at first use (no nvcc)."""
import ctypes
import functools
import struct

from . import _arrays, _host, _paths
from .errors import bind_signatures, check_status

_p, _i, _i64, _c = ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_char_p


class Args(ctypes.Structure):
    """purlinArgs."""
    _fields_ = [("dtype", _i), ("op", _i), ("scalars", ctypes.POINTER(_i64)),
                ("nscalars", _i), ("tables", ctypes.POINTER(_i64)),
                ("ntableWords", _i), ("buffers", ctypes.POINTER(_p)),
                ("streams", ctypes.POINTER(_p))]


# purlinBootstrapCallbacks: the application's all-gather (and barrier).
ALLGATHER = ctypes.CFUNCTYPE(_i, _p, _p, ctypes.c_size_t, _p)
BARRIER = ctypes.CFUNCTYPE(_i, _p)


class BootstrapCallbacks(ctypes.Structure):
    _fields_ = [("allgather", ALLGATHER), ("barrier", BARRIER), ("ctx", _p)]


@functools.lru_cache(maxsize=None)
def lib():
    _host.lib()  # loaded globally first: a collective's host build needs it
    path = _paths.require("cuda_lib", "the CUDA runtime (libpurlin_cuda.so)")
    L = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    sig = {
        "purlinGetLastError": (_c, []),
        "purlinCommCreate": (_i, [ctypes.POINTER(_p), _i, ctypes.POINTER(_i)]),
        "purlinCommDestroy": (_i, [_p]),
        "purlinCommCheck": (_i, [_p]),
        "purlinCollectiveFromSource": (_i, [_p, _c, _c, ctypes.POINTER(_p)]),
        "purlinCollectiveFree": (_i, [_p]),
        "purlinCollCreate": (_i, [ctypes.POINTER(_p), _p, _p, _c]),
        "purlinCollDestroy": (_i, [_p]),
        "purlinCollScalarCount": (_i, [_p]),
        "purlinCollScalarName": (_c, [_p, _i]),
        "purlinCollPrepare": (_i, [_p, ctypes.POINTER(_i), _i, ctypes.POINTER(_i), _i]),
        "purlinCollLastPlan": (_c, [_p]),
        "purlinLaunch": (_i, [_p, ctypes.POINTER(Args)]),
        # one process per GPU (process.py)
        "purlinCommInitRankCallbacks": (_i, [ctypes.POINTER(_p), _i, _i, _i,
                                             ctypes.POINTER(BootstrapCallbacks)]),
        "purlinCommAbort": (_i, [_p]),
        "purlinCommRank": (_i, [_p]),
        "purlinMemAlloc": (_i, [_p, ctypes.c_size_t, ctypes.POINTER(_p)]),
        "purlinMemFree": (_i, [_p, _p]),
        "purlinCommRegister": (_i, [_p, _p, ctypes.c_size_t]),
        "purlinCommDeregister": (_i, [_p, _p]),
        "purlinCommRegisterGraphBuffers": (_i, [_p]),
    }
    return bind_signatures(L, sig)


def check(status, what):
    check_status(status, what, lib().purlinGetLastError)


def _untyped(L, name):
    """L's function `name` without argtypes (a copy: lib()'s keeps them),
    for a call made very often whose arguments are exactly the C types
    already (a c_void_p, a byref()): ctypes then passes them as they are,
    skipping from_param (about a third of the call's ctypes cost). Anything
    else than a CDLL (a test's stand-in) gives its function as it is."""
    if not isinstance(L, ctypes.CDLL):
        return getattr(L, name)
    f = L[name]
    f.restype = getattr(L, name).restype
    return f


class CudaColl:
    """One collective on a CUDA communicator. The description and sizes come
    from its host build (the host C API); instances of the C API are made
    for the largest counts seen so far (a larger call makes a larger one)."""

    def __init__(self, comm, compiled):
        if not compiled.cuda_source:
            raise ValueError(f"'{compiled.name}' is compiled for {compiled.target}, "
                             "not a GPU target")
        self.comm = comm
        self.desc = _host.HostColl(compiled)  # description, sizes, checks
        self.name, self.params, self.buffers = (
            self.desc.name, self.desc.params, self.desc.buffers)
        getter = getattr(self.desc._so, f"purlin_collective_{compiled.name}")
        getter.restype = _p
        info = _p()
        check(lib().purlinCollectiveFromSource(
            getter(), compiled.target.encode(), compiled.cuda_source.encode(),
            ctypes.byref(info)), f"loading '{self.name}' for {compiled.target}")
        self.info = info
        self.coll = None
        self.maxima = {}
        self.scalar_names = []
        self.prepared = set()
        self.graveyard = []  # instances a larger one replaced (kernels may run)
        self.nbuf = len(self.buffers)
        n = comm.local_ranks * self.nbuf
        self.ptrs = (_p * n)()
        # Writes a call's n addresses into ptrs in one C call (assigning the
        # ctypes array converts element by element).
        self.pack_ptrs = functools.partial(struct.Struct(f"{n}P").pack_into, self.ptrs, 0)
        self.stream = (_p * 1)()
        self.launchers = {}  # (dt, op, vals) -> launcher(), for this instance

    # -- the generic path (Collective) -----------------------------------
    def elems(self, b, i):
        return self.desc.elems(b, i)

    def elems_or_raise(self, b, i):
        return self.desc.elems_or_raise(b, i)

    def launch(self, b, ptrs, strategy=None):
        if strategy:
            raise ValueError("the CUDA runtime chooses the plan itself "
                             "(strategy= is for the host target)")
        scalars = {k: v for k, v in b.scalars.items()}
        tables = [x for n, kind, _ in self.params if kind == "table"
                  for x in b.tables.get(n, [])]
        self.fit(scalars, tables)
        vals = tuple(scalars[n] for n in self.scalar_names)
        dt = _arrays.DTYPES.index(b.dtype)
        op = _arrays.OPS.index(b.op) if b.op else 0
        self.launch_fast(dt, op, vals, ptrs, tables)
        return self.last_plan()

    # -- instances and the fast path -------------------------------------
    def fit(self, scalars, tables=()):
        """An instance whose scratch fits these values (counts rounded up to
        a power of two, at least 4096)."""
        need = {}
        for n, kind, bound in self.params:
            if kind == "count":
                v = scalars.get(n, int(bound) if bound else 0)
                need[n] = max(4096, 1 << max(0, int(v) - 1).bit_length())
            elif kind == "root":  # the runtime takes R - 1 as a root's maximum
                need[n] = self.comm.nranks - 1
            elif kind == "table" and tables:
                need[n] = max(tables)
        if self.coll is not None and all(self.maxima.get(k, -1) >= v
                                         for k, v in need.items()):
            return
        grown = {k: max(v, self.maxima.get(k, 0)) for k, v in need.items()}
        text = ",".join(f"{k}={v}" for k, v in grown.items()).encode()
        h = _p()
        check(lib().purlinCollCreate(ctypes.byref(h), self.comm.handle, self.info,
                                     text), f"creating '{self.name}'")
        if self.coll is not None:
            self.graveyard.append(self.coll)
        self.coll, self.maxima, self.prepared = h, grown, set()
        self.launchers = {}  # they hold the instance replaced
        L = lib()
        self.scalar_names = [L.purlinCollScalarName(h, i).decode()
                             for i in range(L.purlinCollScalarCount(h))]

    def prepare(self, dtypes, ops=("sum",)):
        """Compiles (NVRTC, in parallel; cached on disk) the kernels of every
        element type and op listed, so that a later launch, also one being
        captured in a CUDA graph, finds them ready."""
        if self.coll is None:
            self.fit({})
        dts = [_arrays.DTYPES.index(d) if isinstance(d, str) else d for d in dtypes]
        ops_ = [_arrays.OPS.index(o) if isinstance(o, str) else o for o in ops]
        da, oa = (_i * len(dts))(*dts), (_i * len(ops_))(*ops_)
        check(lib().purlinCollPrepare(self.coll, da, len(dts), oa, len(ops_)),
              f"preparing '{self.name}'")
        for d in dts:
            for o in ops_:
                self.prepared.add((d, o))

    def launch_fast(self, dt, op, vals, ptrs, tables=()):
        """Launches on the current torch stream: dt, op as numbers, vals the
        scalars in the C API's order, ptrs [rank * nbuffers + buffer]."""
        self.launcher(dt, op, vals, tables)(ptrs)

    def launcher(self, dt, op, vals, tables=()):
        """launch_fast for these dt, op, vals as a function of ptrs alone:
        the arguments (purlinArgs, its pointer, the C function, the stream
        getter) bound once, so that a call repeated (the standard calls'
        eager path) does only what changes: the addresses, the stream, the C
        call. Kept in self.launchers until fit() makes a larger instance."""
        key = (dt, op, vals)
        f = self.launchers.get(key)
        if f is not None:
            return f
        if (dt, op) not in self.prepared:
            self.prepare([dt], [op if op else 1])
            self.prepared.add((dt, op))
        sc = (_i64 * max(1, len(vals)))(*vals)
        tb = (_i64 * max(1, len(tables)))(*tables)
        a = Args(dt, op, sc, len(vals), tb if tables else None, len(tables),
                 self.ptrs, self.stream)
        a._keep = (sc, tb)
        coll, ref, c_launch = self.coll, ctypes.byref(a), _untyped(lib(), "purlinLaunch")
        pack, stream, current = self.pack_ptrs, self.stream, self.comm.stream_getter()
        name = self.name

        def f(ptrs):
            pack(*ptrs)
            stream[0] = current()
            self.last_args = a
            st = c_launch(coll, ref)
            if st:
                check(st, name)

        # What the C++ path of the standard calls (cuda.py, _fastpath.cpp)
        # needs of this launcher: the purlinArgs it fills and launches.
        f.args = a
        if not tables:
            self.launchers[key] = f
        return f

    def last_plan(self):
        return lib().purlinCollLastPlan(self.coll).decode() if self.coll else None

    def close(self):
        """Frees the instances and the collective (after the GPU is done
        with them: the communicator synchronizes first)."""
        L = lib()
        for h in self.graveyard + ([self.coll] if self.coll else []):
            L.purlinCollDestroy(h)
        self.graveyard, self.coll, self.launchers = [], None, {}
        if getattr(self, "info", None):
            L.purlinCollectiveFree(self.info)
            self.info = None
