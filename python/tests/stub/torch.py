"""A stand-in for torch, just large enough for purlin.cuda's Python side
(test_cuda_binding.py): tensors are addresses with a dtype, a device and a
size; custom ops are plain functions on torch.ops.purlin."""
import itertools
import types

_addr = itertools.count(0x10000, 0x10000)


class dtype:
    def __init__(self, n):
        self.n = n

    def __str__(self):
        return "torch." + self.n

    __repr__ = __str__


float32, float16, bfloat16, int8, complex64 = (
    dtype(n) for n in ("float32", "float16", "bfloat16", "int8", "complex64"))


class device:
    def __init__(self, t, index=None):
        if ":" in str(t):
            t, index = str(t).split(":")
            index = int(index)
        self.type, self.index = t, index

    def __eq__(self, o):
        return (self.type, self.index) == (o.type, o.index)

    def __hash__(self):  # as torch.device's
        return hash((self.type, self.index))

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"


class Tensor:
    def __init__(self, n, dt, dev, contiguous=True):
        self.n, self.dtype, self.device, self.c = n, dt, dev, contiguous
        self.p = next(_addr)

    def numel(self):
        return self.n

    def data_ptr(self):
        return self.p

    def is_contiguous(self):
        return self.c

    def get_device(self):
        return -1 if self.device.type == "cpu" else self.device.index

    @property
    def shape(self):
        return (self.n,)


Tensor.__module__ = "torch"


def empty(shape, dtype=None, device=None):
    return Tensor(shape[0], dtype, globals()["device"](str(device)))


class _Cuda:
    def get_device_capability(self, i):
        return (9, 0)

    def device_count(self):
        return 1

    def current_device(self):
        return 0

    def synchronize(self, i=None):
        pass

    class device:
        def __init__(self, i):
            pass

        def __enter__(self):
            pass

        def __exit__(self, *a):
            pass


cuda = _Cuda()
BUMPED = []  # the tensors whose version counters were bumped, in order
_C = types.SimpleNamespace(_cuda_getCurrentRawStream=lambda i: 0xABC,
                           _increment_version=BUMPED.extend)
COMPILING = [False]
compiler = types.SimpleNamespace(is_compiling=lambda: COMPILING[0])
ops = types.SimpleNamespace(purlin=types.SimpleNamespace())


class _Library:
    """torch.library: Library(ns, kind) with define and impl (the kernel
    becomes torch.ops.<ns>.<name>) and register_fake."""

    class Library:
        def __init__(self, ns, kind):
            self.ns = ns

        def define(self, schema):
            pass

        def impl(self, name, fn, key):
            ns = getattr(ops, self.ns, None)
            if ns is None:
                ns = types.SimpleNamespace()
                setattr(ops, self.ns, ns)
            setattr(ns, name, fn)

    def register_fake(self, name, fn, lib=None):
        return fn


library = _Library()
