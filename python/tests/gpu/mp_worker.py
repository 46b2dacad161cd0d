"""One rank of test_mp.py's runs: a process of a torch.distributed (gloo)
group on GPU 0, with purlin.Communicator.from_process_group. Every rank
builds every rank's inputs from seeds (on the CPU, so all agree), computes
the reference in plain torch on the CPU, runs the call on the GPU into
poisoned outputs and compares bit for bit. A failed check raises (the
parent reports the rank's traceback); a summary line per rank is written to
OUTDIR/rank-R.txt."""
import os
import time

import torch
import torch.distributed as dist

import purlin
from purlin.errors import PurlinError

DEV = "cuda:0"
LOW = {torch.float16, torch.bfloat16}
_CHECKS = [0]


def inputs(dtype, n, seed, R):
    """Every rank's input (CPU tensors): small integers, exact in every
    type; sums of 8 stay in range."""
    out = []
    for r in range(R):
        g = torch.Generator().manual_seed(seed * 131 + r)
        v = torch.randint(-3, 4, (n,), generator=g)
        out.append(v.to(torch.float32).to(dtype) if dtype in LOW else v.to(dtype))
    return out


def ref_reduce(xs, op):
    """In ascending rank order; bf16/f16 accumulated in f32, rounded once."""
    acc_t = torch.float32 if xs[0].dtype in LOW else xs[0].dtype
    acc = xs[0].to(acc_t)
    for x in xs[1:]:
        acc = {"sum": torch.add, "max": torch.maximum}[op](acc, x.to(acc_t))
    return acc.to(xs[0].dtype)


def same(got, want, what):
    got = got.detach().cpu().contiguous()
    want = want.contiguous()
    _CHECKS[0] += 1
    if got.dtype != want.dtype or got.shape != want.shape or not torch.equal(
            got.view(torch.uint8), want.view(torch.uint8)):
        bad = (got.view(torch.uint8) != want.view(torch.uint8)).nonzero()
        raise AssertionError(f"{what}: {bad.numel()} bytes differ, first at "
                             f"{bad[:3].flatten().tolist()}: got {got.flatten()[:8]}, "
                             f"want {want.flatten()[:8]}")


class Pools:
    """Buffers by byte offset in two places of each kind: symmetric memory
    (comm.empty) and an ordinary torch allocation registered once; a view
    at the same offset on every rank."""

    def __init__(self, comm, nbytes):
        self.sym = [comm.empty((nbytes,), torch.uint8) for _ in range(2)]
        self.reg = [comm.register(torch.empty(nbytes, dtype=torch.uint8, device=DEV))
                    for _ in range(2)]

    def get(self, kind, i, dtype, n):
        base = (self.sym if kind == "sym" else self.reg)[i]
        esz = torch.empty((), dtype=dtype).element_size()
        return base[:n * esz].view(dtype)


def fill(buf, cpu):
    buf.copy_(cpu.to(DEV))


def poison(buf):
    buf.view(torch.uint8).fill_(0x5A)


def standard_calls(comm, pools, rank, R, seed):
    dtypes = [(torch.float32, "sum"), (torch.bfloat16, "sum"), (torch.int32, "sum"),
              (torch.float32, "max")]
    for kind in ("sym", "reg"):
        for C in (0, 1, 1000, 65537):
            for dtype, op in dtypes:
                seed += 1
                xs = inputs(dtype, C, seed, R)
                want = ref_reduce(xs, op) if C else xs[rank]
                # all_reduce, in place
                t = pools.get(kind, 0, dtype, C)
                fill(t, xs[rank])
                comm.all_reduce(t, op=op)
                same(t, want, f"all_reduce {kind} {dtype} {op} C={C} in place")
                # out of place through the generic path
                x, y = pools.get(kind, 0, dtype, C), pools.get(kind, 1, dtype, C)
                fill(x, xs[rank])
                poison(y)
                comm.standard("all_reduce")(x=x, y=y, op=op)
                same(y, want, f"all_reduce {kind} {dtype} {op} C={C} out of place")
            if C == 0:
                continue
            for dtype in (torch.float32, torch.bfloat16):
                seed += 1
                xs = inputs(dtype, C, seed, R)
                x = pools.get(kind, 0, dtype, C)
                y = pools.get(kind, 1, dtype, R * C)
                fill(x, xs[rank])
                poison(y)
                comm.all_gather_into_tensor(y, x)
                same(y, torch.cat(xs), f"all_gather {kind} {dtype} C={C}")
                big = inputs(dtype, R * C, seed + 7, R)
                x = pools.get(kind, 0, dtype, R * C)
                fill(x, big[rank])
                y = pools.get(kind, 1, dtype, C)
                poison(y)
                comm.reduce_scatter_tensor(y, x)
                same(y, ref_reduce(big, "sum")[rank * C:(rank + 1) * C],
                     f"reduce_scatter {kind} {dtype} C={C}")
                y = pools.get(kind, 1, dtype, R * C)
                poison(y)
                comm.all_to_all_single(y, x)
                same(y, torch.cat([big[s][rank * C:(rank + 1) * C] for s in range(R)]),
                     f"all_to_all {kind} {dtype} C={C}")
                t = pools.get(kind, 0, dtype, C)
                fill(t, xs[rank])
                comm.broadcast(t, src=R - 1)
                same(t, xs[R - 1], f"broadcast {kind} {dtype} C={C}")
                fill(t, xs[rank])
                comm.reduce(t, dst=1 % R, op="max")
                same(t, ref_reduce(xs, "max") if rank == 1 % R else xs[rank],
                     f"reduce {kind} {dtype} C={C}")
                x = pools.get(kind, 0, dtype, C)
                fill(x, xs[rank])
                y = pools.get(kind, 1, dtype, R * C)
                poison(y)
                mark = y.detach().cpu().clone()
                comm.gather(y, x, dst=0)
                same(y, torch.cat(xs) if rank == 0 else mark, f"gather {kind} {dtype} C={C}")
                x = pools.get(kind, 0, dtype, R * C)
                fill(x, big[rank])
                y = pools.get(kind, 1, dtype, C)
                poison(y)
                comm.scatter(y, x, src=1 % R)
                same(y, big[1 % R][rank * C:(rank + 1) * C], f"scatter {kind} {dtype} C={C}")
    return seed


def user_collective(comm, pools, rank, R):
    from collectives import REVERSE
    rev = comm.load(REVERSE)
    for C in (1, 4099):
        xs = inputs(torch.bfloat16, C, 77 + C, R)
        x = pools.get("reg", 0, torch.bfloat16, C)
        y = pools.get("reg", 1, torch.bfloat16, C)
        fill(x, xs[rank])
        poison(y)
        rev(x=x, y=y)
        same(y, xs[R - 1 - rank].flip(0), f"reverse_ranks C={C}")


def fused_epilogue(comm, pools, rank, R):
    """all_reduce_rmsnorm across processes, bf16, hidden 1024: token counts
    that run 1, 16, 7, 16, 1 of the fused one-shot's 16 lanes one call after
    another (only the lanes with a row run: Shared::liveLanes; every
    process decides alike), then 300 tokens (600 KiB a rank: the fused
    two-shot). Against torch's unfused chain in f32 on the CPU (the sum in
    ascending rank, + residual, rms_norm, * weight) within one bf16 ulp
    (test_gpu.py's tolerance); the residual, updated in place, bit for
    bit. Four buffers at 1 MiB apart in one pool of each kind."""
    H, dtype, MiB = 1024, torch.bfloat16, 1 << 20
    for kind in ("sym", "reg"):
        base = (pools.sym if kind == "sym" else pools.reg)[0]
        for N in (1, 20, 7, 16, 1, 300):
            n = N * H
            view = lambda k, m: base[k * MiB:k * MiB + 2 * m].view(dtype)
            x, res, w, y = view(0, n), view(1, n), view(2, H), view(3, n)
            seed = 900 + N
            xs = inputs(dtype, n, seed, R)
            r0 = inputs(dtype, n, seed + 1, R)[rank]
            w0 = inputs(dtype, H, seed + 2, R)[rank]
            fill(x, xs[rank])
            fill(res, r0)
            fill(w, w0)
            poison(y)
            comm.all_reduce_rmsnorm(x.view(N, H), res.view(N, H), w, 1e-6, y.view(N, H))
            torch.cuda.synchronize()
            acc = xs[0].float()
            for t in xs[1:]:
                acc = acc + t.float()
            h = (acc + r0.float()).view(N, H)
            _CHECKS[0] += 1
            same(res, h.to(dtype).flatten(), f"all_reduce_rmsnorm {kind} N={N} residual")
            want = torch.nn.functional.rms_norm(h, (H,), eps=1e-6) * w0.float()
            torch.testing.assert_close(y.detach().cpu().float().view(N, H), want,
                                       rtol=2 ** -7, atol=2 ** -7,
                                       msg=lambda m: f"all_reduce_rmsnorm {kind} N={N}: {m}")


def graph_replays(comm, pools, rank, R):
    C = 4096
    buf = pools.get("reg", 0, torch.bfloat16, C)
    src = torch.empty(C, dtype=torch.bfloat16, device=DEV)
    fill(src, inputs(torch.bfloat16, C, 5, R)[rank])
    buf.copy_(src)
    comm.all_reduce(buf)  # kernels and instance ready before the capture
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        buf.copy_(src)
        comm.all_reduce(buf)
    for i in range(1000):
        if i % 250 == 0:
            xs = inputs(torch.bfloat16, C, 1000 + i, R)
            fill(src, xs[rank])
        g.replay()
        if i % 250 == 0 or i == 999:
            torch.cuda.synchronize()
            same(buf, ref_reduce(xs, "sum"), f"graph replay {i}")
    comm.check()


def graph_buffers(comm, rank, R):
    """vLLM's flow: all_reduce captured on a tensor allocated inside the
    graph's pool (never registered before), the graph's buffers registered
    after the capture (comm.register_graph_buffers). A replay before that
    does nothing (the tensor keeps this rank's input) and comm.check()
    raises PURLIN_ERR_NOT_REGISTERED once; after it, 1000 replays are right."""
    C = 4096
    src = torch.empty(C, dtype=torch.bfloat16, device=DEV)
    xs = inputs(torch.bfloat16, C, 4242, R)
    fill(src, xs[rank])
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        t = torch.empty(C, dtype=torch.bfloat16, device=DEV)  # the graph pool's
        t.copy_(src)
        comm.all_reduce(t)
    g.replay()
    torch.cuda.synchronize()
    same(t, xs[rank], "graph replayed before register_graph_buffers: untouched")
    try:
        comm.check()
    except PurlinError as e:
        if e.status != "PURLIN_ERR_NOT_REGISTERED":
            raise AssertionError(f"replay before registering: {e.status}: {e}")
    else:
        raise AssertionError("a replay before register_graph_buffers was not reported")
    comm.check()  # reported once, not sticky
    comm.register_graph_buffers()
    for i in range(1000):
        if i % 250 == 0:
            xs = inputs(torch.bfloat16, C, 3000 + i, R)
            fill(src, xs[rank])
        g.replay()
        if i % 250 == 0 or i == 999:
            torch.cuda.synchronize()
            same(t, ref_reduce(xs, "sum"), f"graph (buffers registered after "
                 f"capture) replay {i}")
    comm.check()


def bad_calls(comm, rank, R):
    # Neither symmetric nor registered: through the staging area.
    t = torch.ones(64, device=DEV)
    comm.all_reduce(t)
    torch.cuda.synchronize()
    same(t, torch.full((64,), float(R)), "an unregistered tensor, staged")
    # In place, 2 x 20 MiB staged: more than the 32 MiB area, refused on
    # every rank (nothing launched).
    big = torch.ones(5 << 20, device=DEV)
    try:
        comm.all_reduce(big)
    except PurlinError as e:
        if e.status != "PURLIN_ERR_NOT_REGISTERED" or "staging area" not in str(e):
            raise AssertionError(f"unregistered, past the staging area: {e.status}: {e}")
    else:
        raise AssertionError("a call past the staging area was accepted")
    del big
    try:
        comm.all_reduce([t, t])
    except ValueError as e:
        assert "1 ranks in this process" in str(e), e
    else:
        raise AssertionError("two tensors on one rank were accepted")


def timing(comm, pools):
    t = pools.get("sym", 0, torch.bfloat16, 4096)  # 8 KiB
    for _ in range(100):
        comm.all_reduce(t)
    torch.cuda.synchronize()
    n = 1000
    t0 = time.perf_counter()
    for _ in range(n):
        comm.all_reduce(t)
    host = (time.perf_counter() - t0) / n * 1e6
    torch.cuda.synchronize()
    total = (time.perf_counter() - t0) / n * 1e6
    # The same calls on the Python path (the above: the C++ path, where it
    # was built).
    fast = comm._fast is not None  # whether the calls above took it
    comm.set_fast_path(False)
    t0 = time.perf_counter()
    for _ in range(n):
        comm.all_reduce(t)
    host_py = (time.perf_counter() - t0) / n * 1e6
    torch.cuda.synchronize()
    comm.set_fast_path(True)
    # The C call alone (ctypes, arguments built once): the rest of `host` is
    # the Python side's.
    from purlin import _cuda
    call = comm._calls[("all_reduce", torch.bfloat16, 4096, 0, "sum")]  # 8 KiB
    impl = call.impl
    args = impl.launchers[call.key].args
    # As the eager path calls it (_cuda._untyped: without argtypes).
    launch = _cuda._untyped(_cuda.lib(), "purlinLaunch")
    ref = _cuda.ctypes.byref(args)
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        launch(impl.coll, ref)
    c_only = (time.perf_counter() - t0) / n * 1e6
    torch.cuda.synchronize()
    return host, host_py, fast, total, c_only


def main(rank, R, init_file, outdir):
    torch.cuda.set_device(0)
    dist.init_process_group("gloo", init_method="file://" + init_file, rank=rank,
                            world_size=R)
    t0 = time.perf_counter()
    comm = purlin.Communicator.from_process_group()
    t_init = time.perf_counter() - t0
    try:
        assert comm.rank == rank and comm.nranks == R
        pools = Pools(comm, 8 * 65537 * 4 * 2)
        standard_calls(comm, pools, rank, R, 0)
        user_collective(comm, pools, rank, R)
        fused_epilogue(comm, pools, rank, R)
        graph_replays(comm, pools, rank, R)
        graph_buffers(comm, rank, R)
        bad_calls(comm, rank, R)
        host, host_py, fast, total, c_only = timing(comm, pools)
        with open(os.path.join(outdir, f"rank-{rank}.txt"), "w") as fh:
            fh.write(f"rank {rank} of {R}: {_CHECKS[0]} checks passed; init "
                     f"{t_init * 1e3:.0f} ms; 8 KiB all_reduce bf16 eager: host "
                     f"{host:.2f} us/call ({'C++' if fast else 'Python'} path; "
                     f"Python path {host_py:.2f} us; purlinLaunch alone {c_only:.2f} us), "
                     f"{total:.2f} us/call end to end\n")
    finally:
        comm.close()
        dist.destroy_process_group()
