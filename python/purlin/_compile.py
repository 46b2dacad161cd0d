"""purlin.compile: a .purlin source to a loadable collective, cached on disk.

For the host target purlinc writes C++ (``--target=host``) and the system
C++ compiler builds it into a shared library that exports
``purlin_collective_NAME()``. For a GPU target (``sm_90``, ...) no nvcc is
needed: the same host build supplies the description and the plan table
(identical for every target: the plans are chosen before the lowering), and
purlinc's CUDA output supplies the plans' code as text (``kSource``), which
the CUDA runtime compiles with NVRTC at first use and caches
(``purlinCollectiveFromSource``, docs/python.md).

The cache (``$PURLIN_PY_CACHE``, else ``$XDG_CACHE_HOME/purlin/py``, else
``~/.cache/purlin/py``) holds one folder per compile, named by a hash of the
source text, the bindings, the target and the compilers' identities.
"""
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile

from . import _paths
from .errors import CompileError

_BIND_FLAGS = {"ranks": "--ranks", "count": "--count", "root": "--root",
               "dtype": "--dtype", "op": "--op"}


def cache_dir():
    d = os.environ.get("PURLIN_PY_CACHE")
    if not d:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
            os.path.expanduser("~"), ".cache")
        d = os.path.join(base, "purlin", "py")
    os.makedirs(d, exist_ok=True)
    return d


class Compiled:
    """A compiled collective: purlinc's output in ``folder`` (text only, so
    the folder can travel to a machine without purlinc) and, built from it
    on first use with the system C++ compiler, the host library ``lib``
    (the description and the plan table; the kernels too for the host
    target). ``cuda_source``: the plans' code for NVRTC (GPU targets)."""

    def __init__(self, folder):
        with open(os.path.join(folder, "compiled.json")) as fh:
            meta = json.load(fh)
        self.folder = folder
        self.name = meta["name"]
        self.target = meta["target"]
        self.cuda_source = None
        if meta.get("cuda_source"):
            with open(os.path.join(folder, meta["cuda_source"])) as fh:
                self.cuda_source = fh.read()
        self._lib = None

    @property
    def lib(self):
        """The shared library exporting ``purlin_collective_NAME()``, built
        when missing (keyed by the sources' and headers' hash)."""
        if self._lib is None:
            self._lib = _build_host_lib(self.folder, self.name)
        return self._lib

    def __repr__(self):
        return f"<purlin.Compiled {self.name} for {self.target} in {self.folder}>"


def load_compiled(folder):
    """A :class:`Compiled` from a folder ``compile`` wrote (``out=``, or the
    cache): what a machine without purlinc loads."""
    if not os.path.isfile(os.path.join(folder, "compiled.json")):
        raise CompileError(f"'{folder}' holds no compiled collective "
                           "(compiled.json)")
    return Compiled(folder)


def _build_host_lib(folder, name):
    p = _paths.paths()
    cxx = shutil.which(p["cxx"]) or p["cxx"]
    incs = p.get("host_includes", [])
    if not incs:
        _paths.require("host_lib", "the purlin build (purlin-paths.json)")
    cpp = os.path.join(folder, "host", name + ".purlin.cpp")
    h = hashlib.sha256()
    with open(cpp, "rb") as fh:
        h.update(fh.read())
    h.update(json.dumps([cxx, incs, _headers_stamp(p)]).encode())
    lib = os.path.join(folder, f"collective-{h.hexdigest()[:16]}.so")
    if os.path.isfile(lib):
        return lib
    flags = ["-std=c++17", "-O2", "-fPIC", "-shared"]
    flags += [f"-I{d}" for d in incs] + ["-I" + os.path.join(folder, "host")]
    tmp = lib + f".{os.getpid()}.tmp"
    _run([cxx] + flags + [cpp, "-o", tmp, "-lpthread"],
         f"{cxx} (host build of {name})")
    os.replace(tmp, lib)
    return lib


def _bind_args(bind):
    args = []
    for k, v in sorted(bind.items()):
        if v is None:
            continue
        if isinstance(v, (list, tuple)):
            v = ":".join(str(int(x)) for x in v)
        if k in _BIND_FLAGS:
            args += [_BIND_FLAGS[k], str(v)]
        else:
            args += ["-D", f"{k}={v}"]
    return args


def _identity(path):
    st = os.stat(path)
    return f"{st.st_size}:{st.st_mtime_ns}"


def _read_source(path_or_source):
    """(text, label): a path to a file, else the source text itself."""
    s = str(path_or_source)
    if "\n" not in s and "{" not in s:
        if not os.path.isfile(s):
            raise FileNotFoundError(f"no .purlin file '{s}'")
        with open(s) as fh:
            return fh.read(), os.path.basename(s)
    return s, "<source>"


def _run(cmd, what, cwd=None):
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd)
    if r.returncode != 0:
        raise CompileError(f"{what} failed:\n{r.stderr.strip() or r.stdout.strip()}")
    return r


def compile(path_or_source, target="host", out=None, **bind):
    """Compiles a collective (a path to a ``.purlin`` file, or its text) for
    ``target`` ("host", "sm_80", "sm_90", "sm_100"), binding parameters by
    keyword: ``ranks``, ``count``, ``root``, ``dtype``, ``op`` bind every
    parameter of that kind (purlinc's flags); any other keyword binds the
    parameter of that name (``-D NAME=V``; a table as a list). Returns a
    :class:`Compiled`. purlinc's output goes to ``out`` when given, else to
    the cache, keyed by the source, the bindings and the target: a second
    call reads it, and so does a machine without purlinc (copy the cache,
    or ``out``, there). Raises :class:`CompileError` with purlinc's
    diagnostics."""
    text, label = _read_source(path_or_source)
    args = _bind_args(bind)
    key = hashlib.sha256(json.dumps([text, args, target]).encode()).hexdigest()[:24]
    folder = out or os.path.join(cache_dir(), key)
    p = _paths.paths()
    purlinc = p.get("purlinc") if p.get("purlinc") and os.path.exists(p["purlinc"]) else None
    meta_file = os.path.join(folder, "compiled.json")
    if os.path.isfile(meta_file):
        with open(meta_file) as fh:
            stamp = json.load(fh).get("purlinc")
        if purlinc is None or stamp == _identity(purlinc):
            return Compiled(folder)
    if purlinc is None:
        purlinc = _paths.require("purlinc", "purlinc")
    parent = os.path.dirname(os.path.abspath(folder))
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=key + ".", dir=parent)
    try:
        src = os.path.join(tmp, "source.purlin")
        with open(src, "w") as fh:
            fh.write(text)
        gen = os.path.join(tmp, "host")
        _run([purlinc, src, "--target=host", "-o", gen] + args,
             f"purlinc {label}")
        cpp = glob.glob(os.path.join(gen, "*.purlin.cpp"))
        if len(cpp) != 1:
            raise CompileError(f"purlinc wrote {len(cpp)} collectives for {label}")
        name = os.path.basename(cpp[0])[:-len(".purlin.cpp")]
        meta = {"name": name, "target": target, "purlinc": _identity(purlinc)}
        if target != "host":
            gpu = os.path.join(tmp, "gpu")
            _run([purlinc, src, f"--target={target}", "-o", gpu] + args,
                 f"purlinc {label} --target={target}")
            with open(os.path.join(gpu, name + ".purlin.cu")) as fh:
                cu = fh.read()
            m = re.search(r'kSource\[\] = R"purlin_src\((.*?)\)purlin_src"', cu, re.S)
            if not m:
                raise CompileError(f"no kSource in purlinc's {target} output")
            with open(os.path.join(tmp, "plans.cu.txt"), "w") as fh:
                fh.write(m.group(1))
            shutil.rmtree(gpu)
            meta["cuda_source"] = "plans.cu.txt"
        with open(os.path.join(tmp, "compiled.json"), "w") as fh:
            json.dump(meta, fh)
        if os.path.isdir(folder):
            shutil.rmtree(folder, ignore_errors=True)
        try:
            os.rename(tmp, folder)
        except OSError:  # another process finished first
            shutil.rmtree(tmp, ignore_errors=True)
        return Compiled(folder)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _headers_stamp(p):
    """Size and time of every header a host build includes: a changed atom
    or executor never reads a stale library."""
    h = hashlib.sha256()
    for d in p.get("host_includes", []):
        for f in sorted(glob.glob(os.path.join(d, "**", "*.h"), recursive=True)):
            st = os.stat(f)
            h.update(f"{os.path.relpath(f, d)}:{st.st_size}".encode())
    return h.hexdigest()
