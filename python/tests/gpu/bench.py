"""Per-call time of comm.all_reduce on an 8 KiB tensor per rank (bf16,
4096 elements, 8 virtual ranks on one GPU): from Python eager (the C++
path of the eager calls, purlin/_fastpath.cpp, and the Python path, in the
same run), under torch.compile, and inside a CUDA graph. Compare with the
C API's figure
(purlin-bench -C all_reduce -g 8 -d bf16 -o sum -b 8K -e 8K -n 1000 -c 1)
in the same run.

    PURLIN_BUILD_DIR=build-gpu PYTHONPATH=python python3 python/tests/gpu/bench.py
"""
import time

import torch

import purlin

R, C, N = 8, 4096, 1000
comm = purlin.Communicator.local(R, device="cuda:0")
xs = comm.empty((C,), torch.bfloat16)
for x in xs:
    x.fill_(1)


def timed(fn, n=N, warm=100):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t) / n * 1e6


# The Python path first (every call's checks in Python), then the C++ path
# (on by default; False where it could not be built: the warning says why).
comm.set_fast_path(False)
eager_py = timed(lambda: comm.all_reduce(xs))
fast = comm.set_fast_path(True)
eager = timed(lambda: comm.all_reduce(xs))
print(f"eager: {eager:.2f} us per call "
      f"({'C++ path' if fast else 'C++ path NOT BUILT: the Python path'}); "
      f"Python path {eager_py:.2f} us", flush=True)


def f(v):
    comm.all_reduce(v)


try:
    cf = torch.compile(f, fullgraph=True)
    compiled = timed(lambda: cf(xs))
    print(f"torch.compile: {compiled:.2f} us per call", flush=True)
except Exception as e:  # report the others still
    print("torch.compile failed:", repr(e)[:300])
    compiled = float("nan")

# Where a compiled call's time goes (torch.compile costs ~100 us a call on
# the H200 where the same kind of op costs ~15 us on a CPU tensor): the
# lines of the code Inductor generated that call the op or copy (clones
# around the op would mean it was not turned back into an in-place call),
# the op called on its own (the dispatcher), the op compiled without
# tracing comm.all_reduce (Dynamo's guards on the communicator), and a
# stand-in op of the same schema whose kernel does nothing (torch's floor).
try:
    from torch._inductor.utils import run_and_get_code
    torch._dynamo.reset()
    _, codes = run_and_get_code(torch.compile(f, fullgraph=True), xs)
    for code in codes:
        for line in code.splitlines():
            if "purlin" in line or "copy_" in line or "clone" in line:
                print("  inductor:", line.strip()[:160], flush=True)
    op = torch.ops.purlin.all_reduce_
    comm.set_fast_path(False)
    op_py = timed(lambda: op(xs, comm.id, 'sum'))
    comm.set_fast_path(True)
    print(f"torch.ops.purlin.all_reduce_ eager: "
          f"{timed(lambda: op(xs, comm.id, 'sum')):.2f} us per call "
          f"(its kernel on the Python path: {op_py:.2f} us)", flush=True)
    torch._dynamo.reset()
    direct = torch.compile(lambda v: op(v, comm.id, "sum"), fullgraph=True)
    print(f"torch.compile of the op alone: {timed(lambda: direct(xs)):.2f} us per call",
          flush=True)
    stand_in = torch.library.Library("purlin_bench", "DEF")
    stand_in.define("all_reduce_(Tensor(a!)[] tensors, int comm, str op) -> ()")
    stand_in.impl("all_reduce_", lambda t, c, o: torch._C._increment_version(t),
                  "CompositeExplicitAutograd")
    torch.library.register_fake("purlin_bench::all_reduce_", lambda *a: None,
                                lib=stand_in)
    nop = torch.compile(lambda v: torch.ops.purlin_bench.all_reduce_(v, 0, "sum"),
                        fullgraph=True)
    print(f"torch.compile of a stand-in op that does nothing: "
          f"{timed(lambda: nop(xs)):.2f} us per call", flush=True)
except Exception as e:  # report the others still
    print("compiled-call probe failed:", repr(e)[:300], flush=True)

g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    for _ in range(100):
        comm.all_reduce(xs)
graph = timed(g.replay, n=20, warm=3) / 100
print(f"CUDA graph: {graph:.2f} us per call", flush=True)

# Launch cost on the host: calls enqueued back to back, no sync inside; the
# C++ path's and the Python path's.
def host_us():
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(N):
        comm.all_reduce(xs)
    us = (time.perf_counter() - t) / N * 1e6
    torch.cuda.synchronize()
    return us


comm.set_fast_path(False)
host_py = host_us()
comm.set_fast_path(True)
host = host_us()

# Where an eager call's host time goes: the C call alone (ctypes, the
# arguments built once), against the whole Python call above.
from purlin import _cuda  # noqa: E402
call = comm._calls[("all_reduce", torch.bfloat16, C, 0, "sum")]  # the 8 KiB call
impl = call.impl
args = impl.launchers[call.key].args  # the purlinArgs both paths launch
# As the eager path calls it (_cuda._untyped: without argtypes).
launch = _cuda._untyped(_cuda.lib(), "purlinLaunch")
coll, ref = impl.coll, _cuda.ctypes.byref(args)
torch.cuda.synchronize()
t = time.perf_counter()
for _ in range(N):
    launch(coll, ref)
c_only = (time.perf_counter() - t) / N * 1e6
torch.cuda.synchronize()
print(f"host time of an eager call: C++ path {host:.2f} us, Python path "
      f"{host_py:.2f} us; purlinLaunch alone (ctypes) {c_only:.2f} us: the Python "
      f"path's checks and bookkeeping {host_py - c_only:.2f} us, the C++ path's "
      f"everything but the launch {host - c_only:.2f} us", flush=True)

# Fused all-reduce + residual + RMSNorm (issue 16) against purlin's
# all-reduce followed by PyTorch eager (x + res, rms_norm, * w) per rank, for
# the record; both captured in CUDA graphs (no Python in the timed part).
def graph_us(fn, reps=20):
    fn()  # first use: compiles, caches
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(reps):
            fn()
    return timed(g.replay, n=20, warm=3) / reps


for H in (4096, 8192):
    for T in (1, 8, 128, 1024):
        xs2 = [torch.randn(T, H, device="cuda:0").to(torch.bfloat16) for _ in range(R)]
        rs2 = [torch.randn(T, H, device="cuda:0").to(torch.bfloat16) for _ in range(R)]
        ws2 = [torch.randn(H, device="cuda:0").to(torch.bfloat16) for _ in range(R)]
        ys2 = [torch.empty(T, H, device="cuda:0", dtype=torch.bfloat16) for _ in range(R)]

        def fused():
            comm.all_reduce_rmsnorm(xs2, rs2, ws2, 1e-6, ys2)

        def unfused():
            comm.all_reduce(xs2)
            for r in range(R):
                rs2[r].add_(xs2[r])
                ys2[r].copy_(torch.nn.functional.rms_norm(rs2[r], (H,), eps=1e-6) * ws2[r])

        try:
            f_us, u_us = graph_us(fused), graph_us(unfused)
            print(f"all_reduce_rmsnorm bf16 tokens {T} hidden {H} x {R} ranks: fused "
                  f"{f_us:.2f} us [{comm.standard('all_reduce_rmsnorm').last_plan}], "
                  f"purlin all_reduce + torch eager norm {u_us:.2f} us, "
                  f"ratio {u_us / f_us:.2f}", flush=True)
        except Exception as e:  # report the rest still
            print(f"all_reduce_rmsnorm tokens {T} hidden {H}: failed: {repr(e)[:300]}",
                  flush=True)

print(f"purlin python all_reduce bf16 8 KiB x {R} ranks, per call: "
      f"eager {eager:.2f} us ({'C++' if fast else 'Python'} path; Python path "
      f"{eager_py:.2f} us), torch.compile {compiled:.2f} us, "
      f"CUDA graph {graph:.2f} us; host time of an eager call {host:.2f} us "
      f"(Python path {host_py:.2f} us)", flush=True)
comm.close()
