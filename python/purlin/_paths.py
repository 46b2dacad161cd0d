"""Where the purlin build is: purlinc, the shared libraries, the headers.

A CMake build of the repository writes ``purlin-paths.json`` into its build
folder. The package looks for it, in order, in ``$PURLIN_BUILD_DIR``, beside
``$PURLINC`` (``bin/..``), beside a ``purlinc`` on ``PATH``, and in
``build/`` of the repository this package sits in (an editable install or a
plain ``PYTHONPATH=python``). ``$PURLINC`` overrides the compiler,
``$PURLIN_HOST_LIB`` and ``$PURLIN_CUDA_LIB`` the libraries.
"""
import functools
import json
import os
import shutil

from .errors import PurlinError

_HERE = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    env = os.environ.get("PURLIN_BUILD_DIR")
    if env:
        yield env
    for exe in (os.environ.get("PURLINC"), shutil.which("purlinc")):
        if exe:
            yield os.path.dirname(os.path.dirname(os.path.realpath(exe)))
    yield os.path.join(os.path.dirname(os.path.dirname(_HERE)), "build")


@functools.lru_cache(maxsize=None)
def paths():
    """The build's paths (a dict; see python/CMakeLists.txt)."""
    tried = []
    for d in _candidates():
        f = os.path.join(d, "purlin-paths.json")
        tried.append(f)
        if os.path.isfile(f):
            with open(f) as fh:
                p = json.load(fh)
            p["build_dir"] = d
            break
    else:
        p = {"build_dir": None, "purlinc": "", "host_lib": "", "cuda_lib": "",
             "cxx": "", "host_includes": []}
    p["tried"] = tried
    for key, var in (("purlinc", "PURLINC"), ("host_lib", "PURLIN_HOST_LIB"),
                     ("cuda_lib", "PURLIN_CUDA_LIB")):
        if os.environ.get(var):
            p[key] = os.environ[var]
    if not p["purlinc"] and shutil.which("purlinc"):
        p["purlinc"] = shutil.which("purlinc")
    p["cxx"] = os.environ.get("CXX") or p.get("cxx") or "c++"
    return p


def require(key, what):
    p = paths()
    v = p.get(key)
    if not v or not os.path.exists(v):
        raise PurlinError(
            f"{what} not found (looked for purlin-paths.json in "
            f"{', '.join(p['tried'])}; build the repository with CMake, or set "
            f"PURLIN_BUILD_DIR, or {_ENV[key]})")
    return v


_ENV = {"purlinc": "PURLINC", "host_lib": "PURLIN_HOST_LIB",
        "cuda_lib": "PURLIN_CUDA_LIB"}
