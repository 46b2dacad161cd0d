"""Host time of an eager comm.all_reduce through the Python path and through
the C++ path (purlin/_fastpath.cpp), without a GPU: 8 virtual ranks of 4096
bf16 CPU tensors, a real torch, purlinLaunch stood in by a C function that
returns at once (so both paths pay a real C call and nothing else of the
runtime). Also the op kernel's (torch.ops.purlin.all_reduce_), and the
extension's first-use build and its later load, each in a fresh process.
Medians over rounds of 100 calls.

    PURLIN_BUILD_DIR=$PWD/build PYTHONPATH=python:python/tests \\
        /tmp/tv11/bin/python python/tests/fastpath_bench.py
"""
import ctypes
import os
import statistics
import subprocess
import sys
import tempfile
import time

R, C, ROUNDS, PER = 8, 4096, 300, 100


def first_use():
    """Seconds to build the extension into an empty cache, then to load it
    from there: each in a process of its own."""
    code = ("import time, torch; from purlin import _fastpath; "
            "t = time.perf_counter(); m = _fastpath.module(); assert m is not None; "
            "print(time.perf_counter() - t)")
    with tempfile.TemporaryDirectory() as d:
        env = dict(os.environ, PURLIN_PY_CACHE=d)
        out = []
        for _ in range(2):
            r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                               text=True, check=True)
            out.append(float(r.stdout.split()[-1]))
    return out


def main():
    import torch

    from purlin import _cuda
    from test_fastpath import StandInCApi, close, cpu_comm

    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "stand_in.c")
        with open(src, "w") as fh:
            fh.write("int stand_in(void* coll, void* args) { return 0; }\n")
        so = os.path.join(d, "stand_in.so")
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", src, "-o", so], check=True)
        noop = ctypes.CDLL(so).stand_in
    noop.restype = ctypes.c_int
    api = StandInCApi(noop)
    _cuda.lib = lambda: api
    comm = cpu_comm(R, api)
    assert comm.set_fast_path(True), "the fast path could not be built"
    xs = [torch.ones(C, dtype=torch.bfloat16) for _ in range(R)]
    op = torch.ops.purlin.all_reduce_

    def per_call(fn):
        fn()
        fn()
        ts = []
        for _ in range(ROUNDS):
            t = time.perf_counter()
            for _ in range(PER):
                fn()
            ts.append((time.perf_counter() - t) / PER * 1e6)
        return statistics.median(ts)

    eager = lambda: comm.all_reduce(xs)  # noqa: E731
    kernel = lambda: op(xs, comm.id, "sum")  # noqa: E731
    coll, ref = ctypes.c_void_p(1), ctypes.byref(ctypes.c_int())
    rows = []
    for fast in (False, True, False, True):  # twice each, interleaved
        comm.set_fast_path(fast)
        rows.append((fast, per_call(eager), per_call(kernel)))
    c_only = per_call(lambda: noop(coll, ref))
    for fast in (False, True):
        e = statistics.median(r[1] for r in rows if r[0] == fast)
        k = statistics.median(r[2] for r in rows if r[0] == fast)
        print(f"{'C++   ' if fast else 'Python'} path: comm.all_reduce {e:.2f} us, "
              f"torch.ops.purlin.all_reduce_ {k:.2f} us a call", flush=True)
    print(f"the stand-in purlinLaunch alone through ctypes: {c_only:.2f} us a call")
    build, load = first_use()
    print(f"first use: build {build:.1f} s (empty cache), load {load:.3f} s "
          "(built before: the library imported; torch's import not counted)")
    close(comm, api)


if __name__ == "__main__":
    main()
