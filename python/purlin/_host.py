"""The host target's C API (runtime/host/include/purlin/host/purlin_host.h)
through ctypes: collectives compiled for the host run with every rank and
lane as a thread of this process."""
import ctypes
import functools

from . import _paths
from .errors import bind_signatures, check_status

_c = ctypes.c_char_p
_i = ctypes.c_int
_p = ctypes.c_void_p
_i64 = ctypes.c_int64


@functools.lru_cache(maxsize=None)
def lib():
    path = _paths.require("host_lib", "the host runtime (libpurlin_host_api.so)")
    # Global: the collectives built against it resolve the element
    # arithmetic of purlin_spec (linked in whole) here.
    L = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    sig = {
        "purlinHostLastError": (_c, []),
        "purlinHostCollCreate": (_i, [ctypes.POINTER(_p), _p]),
        "purlinHostCollDestroy": (None, [_p]),
        "purlinHostCollName": (_c, [_p]),
        "purlinHostParamCount": (_i, [_p]),
        "purlinHostParamName": (_c, [_p, _i]),
        "purlinHostParamKind": (_c, [_p, _i]),
        "purlinHostParamBound": (_c, [_p, _i]),
        "purlinHostBufferCount": (_i, [_p]),
        "purlinHostBufferName": (_c, [_p, _i]),
        "purlinHostBufferIsOutput": (_i, [_p, _i]),
        "purlinHostBufferType": (_c, [_p, _i]),
        "purlinHostBufferElems": (_i, [_p, _c, _i, ctypes.POINTER(_i64)]),
        "purlinHostLaunch": (_i, [_p, _c, ctypes.POINTER(_p), _c, _i64]),
        "purlinHostCollLastPlan": (_c, [_p]),
    }
    return bind_signatures(L, sig)


def check(status, what):
    check_status(status, what, lib().purlinHostLastError)


def binding_text(b):
    """A binding (scalars, tables, dtype, op) as purlinHostLaunch takes it."""
    parts = [f"{k}={v}" for k, v in b.scalars.items()]
    parts += [f"{k}={':'.join(str(int(x)) for x in v)}" for k, v in b.tables.items()]
    if b.type_param and b.dtype:
        parts.append(f"{b.type_param}={b.dtype}")
    if b.op_param and b.op:
        parts.append(f"{b.op_param}={b.op}")
    return ",".join(parts).encode()


class HostColl:
    """One collective compiled for the host target, loaded."""

    def __init__(self, compiled):
        L = lib()
        self._so = ctypes.CDLL(compiled.lib)
        getter = getattr(self._so, f"purlin_collective_{compiled.name}")
        getter.restype = _p
        h = _p()
        check(L.purlinHostCollCreate(ctypes.byref(h), getter()),
              f"loading '{compiled.name}'")
        self.h = h
        self.name = compiled.name
        self.params = [(L.purlinHostParamName(h, i).decode(),
                        L.purlinHostParamKind(h, i).decode(),
                        L.purlinHostParamBound(h, i).decode())
                       for i in range(L.purlinHostParamCount(h))]
        self.buffers = [(L.purlinHostBufferName(h, b).decode(),
                         bool(L.purlinHostBufferIsOutput(h, b)),
                         L.purlinHostBufferType(h, b).decode())
                        for b in range(L.purlinHostBufferCount(h))]

    def __del__(self):
        h = getattr(self, "h", None)
        if h:
            lib().purlinHostCollDestroy(h)

    def elems(self, b, index):
        n = _i64()
        st = lib().purlinHostBufferElems(self.h, binding_text(b), index,
                                         ctypes.byref(n))
        return n.value if st == 0 else None

    def elems_or_raise(self, b, index):
        n = _i64()
        check(lib().purlinHostBufferElems(self.h, binding_text(b), index,
                                          ctypes.byref(n)), self.name)
        return n.value

    def launch(self, b, ptrs, strategy=None, timeout_ms=0):
        arr = (_p * len(ptrs))(*ptrs)
        check(lib().purlinHostLaunch(self.h, binding_text(b), arr,
                                     strategy.encode() if strategy else None,
                                     timeout_ms), self.name)
        return lib().purlinHostCollLastPlan(self.h).decode()
