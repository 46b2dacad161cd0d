"""What purlin needs to know of an array: address, elements, element type,
device, contiguity. numpy arrays, torch tensors, and any object with
``__dlpack__``: on the host through numpy, on a GPU through torch."""
import sys

# purlin's element types in their numbering (purlin/spec/Numbering.h).
DTYPES = ["f32", "f16", "bf16", "f8e4m3", "f8e5m2", "i8", "u8", "i32", "i64", "f64"]
DTYPE_SIZE = {"f32": 4, "f16": 2, "bf16": 2, "f8e4m3": 1, "f8e5m2": 1,
              "i8": 1, "u8": 1, "i32": 4, "i64": 8, "f64": 8}
OPS = ["copy", "sum", "prod", "min", "max", "avg"]

_NUMPY = {"float32": "f32", "float16": "f16", "bfloat16": "bf16",
          "float8_e4m3fn": "f8e4m3", "float8_e5m2": "f8e5m2", "int8": "i8",
          "uint8": "u8", "int32": "i32", "int64": "i64", "float64": "f64"}
_TORCH = {"torch." + k: v for k, v in _NUMPY.items()}


class ArrayInfo:
    __slots__ = ("ptr", "numel", "dtype", "device", "contiguous", "writable",
                 "shape", "obj")

    def __init__(self, ptr, numel, dtype, device, contiguous, writable, shape, obj):
        self.ptr, self.numel, self.dtype, self.device = ptr, numel, dtype, device
        self.contiguous, self.writable, self.shape, self.obj = (
            contiguous, writable, shape, obj)


def _is_torch(a):
    return type(a).__module__.startswith("torch") and hasattr(a, "data_ptr")


def describe(a, what):
    """ArrayInfo of `a`; TypeError naming `what` for anything else."""
    if _is_torch(a):
        dt = _TORCH.get(str(a.dtype))
        if dt is None:
            raise TypeError(f"{what}: torch dtype {a.dtype} is not one purlin "
                            f"moves ({', '.join(DTYPES)})")
        dev = a.device
        device = "cpu" if dev.type == "cpu" else f"{dev.type}:{dev.index or 0}"
        return ArrayInfo(a.data_ptr(), a.numel(), dt, device, a.is_contiguous(),
                         True, tuple(a.shape), a)
    via_dlpack = False
    if (not hasattr(a, "__array_interface__") and hasattr(a, "__dlpack__")
            and hasattr(a, "__dlpack_device__") and a.__dlpack_device__()[0] != 1):
        # Not on the host (kDLCPU = 1): a GPU array (CuPy, JAX, ...) as a
        # torch tensor, without a copy.
        torch = sys.modules.get("torch")
        if torch is None:
            raise TypeError(f"{what}: a DLPack array on a GPU needs torch")
        return describe(torch.from_dlpack(a), what)
    if not hasattr(a, "__array_interface__") and hasattr(a, "__dlpack__"):
        np = sys.modules.get("numpy") or _import_numpy(what)
        a = np.from_dlpack(a)
        via_dlpack = True  # DLPack has no read-only mark (numpy 1.x sets one)
    if hasattr(a, "__array_interface__") and hasattr(a, "dtype"):
        dt = _NUMPY.get(a.dtype.name)
        if dt is None:
            raise TypeError(f"{what}: numpy dtype {a.dtype} is not one purlin "
                            f"moves ({', '.join(DTYPES)})")
        ptr, readonly = a.__array_interface__["data"]
        return ArrayInfo(ptr, a.size, dt, "cpu", bool(a.flags["C_CONTIGUOUS"]),
                         via_dlpack or not readonly, tuple(a.shape), a)
    raise TypeError(f"{what}: expected a numpy array, a torch tensor or a "
                    f"DLPack array, got {type(a).__name__}")


def _import_numpy(what):
    try:
        import numpy
        return numpy
    except ImportError:
        raise TypeError(f"{what}: a DLPack array needs numpy on the host")
