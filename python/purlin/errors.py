"""The exceptions purlin raises."""


class PurlinError(RuntimeError):
    """A failure of the compiler or the runtime; ``status`` is the runtime's
    status name (``"PURLIN_ERR_UNSUPPORTED_TYPE"``, ...) when it has one."""

    def __init__(self, message, status=None):
        super().__init__(message)
        self.status = status


class CompileError(PurlinError):
    """purlinc rejected the source (its FILE:LINE:COL diagnostics are the
    message) or the host C++ compiler failed."""


STATUS_NAMES = [
    "PURLIN_SUCCESS", "PURLIN_ERR_INVALID_ARGUMENT", "PURLIN_ERR_BAD_RANK_COUNT",
    "PURLIN_ERR_NULL_BUFFER", "PURLIN_ERR_MISALIGNED",
    "PURLIN_ERR_UNSUPPORTED_TYPE", "PURLIN_ERR_UNSUPPORTED_OP",
    "PURLIN_ERR_PARAM_RANGE", "PURLIN_ERR_NO_DEVICE", "PURLIN_ERR_NO_PEER_ACCESS",
    "PURLIN_ERR_NO_PLAN", "PURLIN_ERR_CUDA", "PURLIN_ERR_TIMEOUT",
    "PURLIN_ERR_OUT_OF_MEMORY", "PURLIN_ERR_BAD_COLLECTIVE",
    "PURLIN_ERR_NOT_READY", "PURLIN_ERR_COMPILE", "PURLIN_ERR_BOOTSTRAP",
    "PURLIN_ERR_NOT_REGISTERED", "PURLIN_ERR_MISMATCH",
]


def status_name(s):
    return STATUS_NAMES[s] if 0 <= s < len(STATUS_NAMES) else f"status {s}"


def check_status(status, what, last_error):
    """Raises PurlinError for a failed C call: `what`, the library's last
    error message (`last_error()`, bytes) and the status's name."""
    if status:
        msg = last_error().decode()
        raise PurlinError(f"{what}: {msg} ({status_name(status)})",
                          status_name(status))


def bind_signatures(L, sig):
    """Sets restype and argtypes of each C function of `L` named in `sig`
    ({name: (restype, [argtypes])}); returns L."""
    for name, (res, args) in sig.items():
        f = getattr(L, name)
        f.restype, f.argtypes = res, args
    return L
