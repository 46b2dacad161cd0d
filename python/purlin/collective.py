"""A compiled collective loaded on a communicator, called with buffers and
parameters by the names its source gives them:

    coll = comm.load("my.purlin")
    coll(x=[x0, x1, x2, x3], y=[y0, y1, y2, y3], root=3)

Each buffer is a list of one array per rank (virtual ranks of one process).
Counts the call leaves out are solved from the buffers' sizes; the element
type comes from the arrays; an ``op`` parameter takes an op name ("sum",
"max", ...). Every mistake is a Python exception that names the buffer,
rank and parameter: TypeError for element types and array kinds,
ValueError for sizes, rank counts, devices, layouts and unknown names,
PurlinError for what the runtime refuses."""
import sys

from . import _arrays
from .errors import PurlinError


class Binding:
    """One call's parameter values: R and the counts, roots and group sizes
    (``scalars``), tables (row-major lists), the element type and op."""
    __slots__ = ("scalars", "tables", "dtype", "op", "type_param", "op_param")

    def __init__(self, type_param, op_param):
        self.scalars, self.tables = {}, {}
        self.dtype = self.op = None
        self.type_param, self.op_param = type_param, op_param

    def copy(self):
        b = Binding(self.type_param, self.op_param)
        b.scalars, b.tables = dict(self.scalars), dict(self.tables)
        b.dtype, b.op = self.dtype, self.op
        return b


class Collective:
    def __init__(self, comm, impl, compiled):
        self.comm = comm
        self.impl = impl
        self.compiled = compiled
        self.name = impl.name
        self.params = {n: (k, bound) for n, k, bound in impl.params}
        self.buffers = impl.buffers  # [(name, is_output, type)]
        self.type_param = next((n for n, k, _ in impl.params if k == "type"), None)
        self.op_param = next((n for n, k, _ in impl.params if k == "redop"), None)
        self.ranks_param = next(n for n, k, _ in impl.params if k == "ranks")
        rbound = self.params[self.ranks_param][1]
        if rbound and int(rbound) != comm.nranks:
            raise PurlinError(
                f"collective '{self.name}' is compiled for {rbound} ranks "
                f"({self.ranks_param} bound at compile time), not {comm.nranks}",
                "PURLIN_ERR_BAD_RANK_COUNT")
        self.last_plan = None
        self._calls = {}  # _quick's keys -> the Binding they gave
        self._names = {n for n, _, _ in self.buffers}

    def __repr__(self):
        bufs = ", ".join(f"{'out' if o else 'in'} {n}: {t}" for n, o, t in self.buffers)
        return f"<purlin.Collective {self.name}({', '.join(self.params)}) {{{bufs}}}>"

    # -- binding ---------------------------------------------------------
    def bind(self, arrays, kwargs):
        """The Binding of a call: parameters from kwargs, the element type
        from the arrays, counts solved from the sizes."""
        b = Binding(self.type_param, self.op_param)
        b.scalars[self.ranks_param] = self.comm.nranks
        for k, v in kwargs.items():
            kind = self.params[k][0]
            if kind == "ranks":
                if int(v) != self.comm.nranks:
                    raise ValueError(f"{self.name}: {k}={v}, but the communicator "
                                     f"has {self.comm.nranks} ranks")
            elif kind == "type":
                if v not in _arrays.DTYPES:
                    raise TypeError(f"{self.name}: {k}={v!r} is not an element type "
                                    f"({', '.join(_arrays.DTYPES)})")
                b.dtype = v
            elif kind == "redop":
                if v not in _arrays.OPS[1:]:
                    raise ValueError(f"{self.name}: {k}={v!r} is not an op "
                                     f"({', '.join(_arrays.OPS[1:])})")
                b.op = v
            elif kind == "table":
                b.tables[k] = [int(x) for x in _flatten(v)]
            else:
                b.scalars[k] = int(v)
        # The element type: every buffer of the type parameter agrees, with
        # the value bound at compile time too.
        tbound = self.params[self.type_param][1] if self.type_param else ""
        if tbound and b.dtype not in (None, tbound):
            raise TypeError(f"{self.name} is compiled for {tbound} "
                            f"({self.type_param} bound at compile time), not {b.dtype}")
        if tbound:
            b.dtype = tbound
        for name, _, t in self.buffers:
            for k, a in enumerate(arrays[name]):
                r = self.comm.first_rank + k
                want = b.dtype if t == self.type_param else t
                if want is None:
                    b.dtype = want = a.dtype
                if a.dtype != want:
                    raise TypeError(
                        f"{self.name}: buffer '{name}' of rank {r} holds {a.dtype}; "
                        f"the call's element type is {want}"
                        + (f" ({t} bound at compile time)" if tbound and t == self.type_param
                           else "" if t == self.type_param else f" (declared {t})"))
        if self.op_param and b.op is None:
            bound = self.params[self.op_param][1]
            b.op = bound or "sum"
        self._solve_counts(b, arrays)
        return b

    def _solve_counts(self, b, arrays):
        """Counts not given: each solved from a buffer whose size depends on
        it alone among the unknowns (sizes are affine in the counts)."""
        unknown = [n for n, (k, bound) in self.params.items()
                   if k in ("count", "root", "group") and n not in b.scalars
                   and not bound]
        roots = [n for n in unknown if self.params[n][0] != "count"]
        if roots:
            raise ValueError(f"{self.name}: parameter '{roots[0]}' "
                             f"({self.params[roots[0]][0]}) must be given")
        while unknown:
            progress = False
            for i, (name, _, _) in enumerate(self.buffers):
                n = arrays[name][0].numel
                probe = b.copy()
                for u in unknown:
                    probe.scalars[u] = 1
                base = self.impl.elems(probe, i)
                if base is None:
                    continue
                deps = []
                for u in unknown:
                    p2 = probe.copy()
                    p2.scalars[u] = 2
                    e2 = self.impl.elems(p2, i)
                    if e2 is not None and e2 != base:
                        deps.append((u, e2 - base))
                if len(deps) != 1:
                    continue
                u, slope = deps[0]
                v = 1 + (n - base) // slope
                if v < 0 or (n - base) % slope:
                    raise ValueError(
                        f"{self.name}: buffer '{name}' has {n} elements per rank, "
                        f"not a size it can have (every {slope} elements of "
                        f"'{u}')")
                b.scalars[u] = v
                unknown.remove(u)
                progress = True
                break
            if not progress:
                raise ValueError(f"{self.name}: give parameter '{unknown[0]}' "
                                 "(no buffer's size determines it)")

    # -- a call ----------------------------------------------------------
    def __call__(self, strategy=None, **kwargs):
        # Under torch.compile, a CUDA communicator's calls are a custom op.
        if strategy is None and self.comm.traced_call(self, kwargs):
            return None
        self.run(strategy, **kwargs)

    def run(self, strategy=None, **kwargs):
        """The call itself, never traced (what purlin::call_ runs). A call
        like an earlier one (the same classes, element types, sizes,
        layouts and devices of its arrays, the same other arguments)
        launches with that call's Binding at once (_quick); any other goes
        through every check (bind), whose Binding is then kept for the
        next."""
        key, ptrs = self._quick(strategy, kwargs)
        if key is not None:
            b = self._calls.get(key)
            if b is not None:
                self.last_plan = self.impl.launch(b, ptrs, strategy)
                return None
        arrays = {}
        names = self._names
        for k in list(kwargs):
            if k in names:
                arrays[k] = self._ranks_of(k, kwargs.pop(k))
            elif k not in self.params:
                raise ValueError(
                    f"{self.name} has no buffer or parameter '{k}' (buffers: "
                    f"{', '.join(sorted(names))}; parameters: "
                    f"{', '.join(self.params)})")
        missing = [n for n in names if n not in arrays]
        if missing:
            raise ValueError(f"{self.name}: buffer '{missing[0]}' is missing")
        b = self.bind(arrays, kwargs)
        ptrs = [0] * (self.comm.local_ranks * len(self.buffers))
        nb = len(self.buffers)
        for i, (name, is_out, _) in enumerate(self.buffers):
            want = self.impl.elems(b, i)
            if want is None:
                self.impl.elems_or_raise(b, i)
            for k, a in enumerate(arrays[name]):
                r = self.comm.first_rank + k
                if a.numel != want:
                    raise ValueError(
                        f"{self.name}: buffer '{name}' of rank {r} has {a.numel} "
                        f"elements; the call needs {want} ({_show(b)})")
                if is_out and not a.writable:
                    raise ValueError(f"{self.name}: output '{name}' of rank {r} "
                                     "is read-only")
                ptrs[k * nb + i] = a.ptr
        self.last_plan = self.impl.launch(b, ptrs, strategy)
        if key is not None:
            if len(self._calls) >= 1024:  # sizes without end: anew
                self._calls.clear()
            self._calls[key] = b
        return None

    def _quick(self, strategy, kwargs):
        """The key of a call's constants and its addresses ([rank * nb +
        buffer], as run() lays them out), reading of each array only what
        can differ between two calls: its class, element type, size,
        contiguity, writability or device, and address. (None, None) where
        an argument is not a plain torch tensor or numpy array, a list of
        them, or a hashable parameter: run() then checks it all."""
        L = self.comm.local_ranks
        nb = len(self.buffers)
        ptrs = [0] * (L * nb)
        sig = []
        T = sys.modules.get("torch")
        T = T.Tensor if T is not None else None
        np = sys.modules.get("numpy")
        N = np.ndarray if np is not None else None
        for i, (name, _, _) in enumerate(self.buffers):
            v = kwargs.get(name)
            if v.__class__ is not list and v.__class__ is not tuple:
                if L != 1 or self.comm.nranks == 1 or v is None:
                    return None, None
                v = (v,)
            if len(v) != L:
                return None, None
            for k, a in enumerate(v):
                c = a.__class__
                if c is T:
                    sig.append((c, a.dtype, a.numel(), a.is_contiguous(), a.device))
                    ptrs[k * nb + i] = a.data_ptr()
                elif c is N:
                    sig.append((c, a.dtype, a.size, a.flags.c_contiguous,
                                a.flags.writeable))
                    ptrs[k * nb + i] = a.__array_interface__["data"][0]
                else:
                    return None, None
        try:
            rest = tuple(sorted((k, v) for k, v in kwargs.items() if k not in self._names))
            key = (strategy, rest, tuple(sig))
            hash(key)
        except TypeError:  # a table as a list: not a key
            return None, None
        return key, ptrs

    def _ranks_of(self, name, value):
        L = self.comm.local_ranks
        if L == 1 and self.comm.nranks > 1 and not isinstance(value, (list, tuple)):
            value = [value]  # one process per GPU: this rank's array alone
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"{self.name}: buffer '{name}' takes a list of "
                            f"{L} arrays, one per rank")
        if len(value) != L:
            raise ValueError(f"{self.name}: buffer '{name}' has {len(value)} "
                             f"arrays; the communicator has {L} ranks in "
                             "this process")
        out = []
        for i, a in enumerate(value):
            r = self.comm.first_rank + i
            info = _arrays.describe(a, f"{self.name}: buffer '{name}' of rank {r}")
            self.comm.check_array(info, f"{self.name}: buffer '{name}' of rank {r}", r)
            out.append(info)
        return out


def _flatten(v):
    if hasattr(v, "tolist"):
        v = v.tolist()
    for x in v:
        if isinstance(x, (list, tuple)):
            yield from _flatten(x)
        else:
            yield x


def _show(b):
    items = [f"{k}={v}" for k, v in b.scalars.items()]
    if b.dtype:
        items.append(b.dtype)
    return ", ".join(items)
