"""The C++ path of the eager standard calls (_fastpath.cpp), built at first
use with torch.utils.cpp_extension into purlin's cache, so that no install
step builds it.

The build folder is keyed by a hash of the source, torch's version and
place, and the Python version: a changed source or another torch builds
anew beside the old one; a later process imports the built library
directly (no compiler or ninja run). Where the build fails (no C++
compiler, no Python headers, no ninja) the Python path runs instead, after
one warning; ``PURLIN_TORCH_EXT=0`` skips the fast path altogether.
"""
import ctypes
import functools
import hashlib
import importlib.util
import json
import os
import sys
import threading
import time
import warnings

from . import _compile

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_fastpath.cpp")
_lock = threading.Lock()
build_seconds = None  # the first-use build's time in this process (None: none ran)


def enabled():
    """Whether the fast path is wanted (``PURLIN_TORCH_EXT`` is not 0)."""
    return os.environ.get("PURLIN_TORCH_EXT", "1") != "0"


@functools.lru_cache(maxsize=None)
def _key():
    import torch
    with open(SOURCE, "rb") as fh:
        h = hashlib.sha256(fh.read())
    h.update(json.dumps([torch.__version__, os.path.dirname(torch.__file__),
                         sys.version, sys.executable]).encode())
    return h.hexdigest()[:16]


def build_dir():
    return os.path.join(_compile.cache_dir(), "fastpath-" + _key())


_module = []  # [the module, or None where it could not be built]


def module():
    """The built extension (``run``, ``make``), or None: disabled, or its
    build failed (warned once)."""
    if _module:
        return _module[0]
    with _lock:
        if not _module:
            _module.append(_load() if enabled() else None)
    return _module[0]


def _load():
    global build_seconds
    name = "purlin_fastpath_" + _key()
    d = build_dir()
    so = os.path.join(d, name + ".so")
    try:
        import torch  # noqa: F401  (the library links to torch's)
        if os.path.isfile(so):  # built before: no compiler, no ninja run
            try:
                spec = importlib.util.spec_from_file_location(name, so)
                m = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(m)
                return m
            except ImportError:  # still being written by another process:
                pass             # cpp_extension's lock waits for it below
        from torch.utils import cpp_extension
        os.makedirs(d, exist_ok=True)
        t = time.perf_counter()
        # cpp_extension locks the folder: processes starting together build
        # once and the others wait for it.
        m = cpp_extension.load(name, [SOURCE], build_directory=d,
                               extra_cflags=["-O2"], verbose=False)
        build_seconds = time.perf_counter() - t
        return m
    except Exception as e:  # anything: the Python path still works
        lines = [x for x in str(e).splitlines() if x.strip()]
        why = " | ".join(lines[:1] + [x for x in lines if "error" in x.lower()][:3])
        warnings.warn(
            f"purlin: the C++ fast path of eager calls could not be built in {d} "
            f"({type(e).__name__}: {why[:600]}); the calls take the Python path "
            "(some microseconds more each). PURLIN_TORCH_EXT=0 skips the build.",
            RuntimeWarning, stacklevel=3)
        return None


def launch_address(lib):
    """The address of lib's purlinLaunch (or of a stand-in the tests give),
    which the C++ path calls."""
    return ctypes.cast(lib.purlinLaunch, ctypes.c_void_p).value
