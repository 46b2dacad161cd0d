"""purlin on one GPU with virtual ranks, against torch computations: every
standard call, two user-written collectives, every dtype purlin moves,
torch.compile(fullgraph=True), a CUDA graph replayed 1,000 times, the
exceptions of bad calls, and the eager calls' C++ path against the Python
one.

    PURLIN_BUILD_DIR=build-gpu PYTHONPATH=python python3 -m pytest python/tests/gpu
"""
import os
from concurrent.futures import ThreadPoolExecutor

import pytest
import torch

import purlin
from collectives import EVEN_SUM, REVERSE

R = 8
DEV = "cuda:0"
ALL_DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.float8_e4m3fn,
              torch.float8_e5m2, torch.int8, torch.uint8, torch.int32,
              torch.int64, torch.float64]
COPY_DTYPES = [torch.float32, torch.bfloat16, torch.int8, torch.float64]
LOW = {torch.float16, torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2}


@pytest.fixture(scope="module")
def comm():
    c = purlin.Communicator.local(R, device=DEV)
    examples = purlin.communicator.examples_dir()
    compiled = [c.compile(os.path.join(examples, n + ".purlin"))
                for n in purlin.STANDARD + purlin.FUSED]
    compiled += [c.compile(REVERSE), c.compile(EVEN_SUM)]
    with ThreadPoolExecutor(16) as pool:  # host builds, in parallel
        list(pool.map(lambda x: x.lib, compiled))
    yield c
    c.close()


def test_prepare_every_pair(comm):
    """Compiles every pair the tests run (NVRTC; each collective's pairs in
    one thread, the collectives at once, cached on disk), so that no later
    test waits for a compile."""
    name_of = purlin._arrays._TORCH
    impls = {n: comm.standard(n).impl for n in purlin.STANDARD}
    users = [comm.load(REVERSE).impl, comm.load(EVEN_SUM).impl]
    for i in list(impls.values()) + users:
        i.fit({})
    copy = [name_of[str(d)] for d in COPY_DTYPES]
    jobs = [(impls["all_reduce"], [([name_of[str(d)] for d in ALL_DTYPES], ["sum"]),
                                   (["f32"], ["max", "min", "prod"])])]
    jobs += [(impls[n], [(copy, ["sum"])])
             for n in ("all_gather", "all_to_all", "broadcast", "gather", "scatter")]
    jobs += [(impls[n], [(["f32", "bf16"], ["sum", "max"])])
             for n in ("reduce_scatter", "reduce")]
    jobs += [(users[0], [(["bf16"], ["sum"])]), (users[1], [(["f32"], ["max"])])]

    def prepare(job):
        impl, pairs = job
        try:
            for d, o in pairs:
                impl.prepare(d, o)
        except Exception as e:  # the other collectives still compile
            return f"{impl.name}: {e}"
        return None

    with ThreadPoolExecutor(len(jobs)) as pool:
        errors = [e for e in pool.map(prepare, jobs) if e]
    assert not errors, errors


def rand(dtype, n, seed):
    g = torch.Generator(device=DEV).manual_seed(seed)
    # Small integers: exact in every type, sums of 8 stay in range.
    lo, hi = (0, 10) if dtype == torch.uint8 else (-3, 4)
    v = torch.randint(lo, hi, (n,), generator=g, device=DEV)
    return v.to(torch.float32).to(dtype) if dtype in LOW else v.to(dtype)


def poison(dtype, n):
    return torch.full((n,), 7, device=DEV).to(dtype)


def ref_reduce(xs, op):
    """In ascending rank order; f16/bf16/f8 in f32, rounded once."""
    acc_t = torch.float32 if xs[0].dtype in LOW else xs[0].dtype
    acc = xs[0].to(acc_t)
    for x in xs[1:]:
        x = x.to(acc_t)
        acc = {"sum": torch.add, "prod": torch.mul, "max": torch.maximum,
               "min": torch.minimum}[op](acc, x)
    return acc.to(xs[0].dtype)


def same(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape
    # Bitwise (NaN payloads, -0); a strided view is copied to be viewed as bytes.
    a, b = a.contiguous(), b.contiguous()
    assert torch.equal(a.view(torch.uint8), b.view(torch.uint8)), (a, b)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_all_reduce_every_dtype(comm, dtype):
    for C in (1000, 4096, 300000):
        xs = [rand(dtype, C, 10 * r + C) for r in range(R)]
        want = ref_reduce(xs, "sum")
        comm.all_reduce(xs)
        torch.cuda.synchronize()
        for r in range(R):
            same(xs[r], want)


@pytest.mark.parametrize("op", ["max", "min", "prod"])
def test_all_reduce_ops(comm, op):
    xs = [rand(torch.float32, 5000, r) for r in range(R)]
    want = ref_reduce(xs, op)
    comm.all_reduce(xs, op=op)
    for r in range(R):
        same(xs[r], want)


@pytest.mark.parametrize("dtype", COPY_DTYPES, ids=str)
def test_copy_collectives(comm, dtype):
    C = 777
    xs = [rand(dtype, C, r) for r in range(R)]
    ys = [poison(dtype, R * C) for _ in range(R)]
    comm.all_gather_into_tensor(ys, xs)
    for r in range(R):
        same(ys[r], torch.cat(xs))
    big = [rand(dtype, R * C, 100 + r) for r in range(R)]
    out = [poison(dtype, R * C) for _ in range(R)]
    comm.all_to_all_single(out, big)
    for d in range(R):
        same(out[d], torch.cat([big[s][d * C:(d + 1) * C] for s in range(R)]))
    b = [x.clone() for x in xs]
    comm.broadcast(b, src=5)
    for r in range(R):
        same(b[r], xs[5])
    g = [poison(dtype, R * C) for _ in range(R)]
    comm.gather(g, xs, dst=2)
    same(g[2], torch.cat(xs))
    same(g[0], poison(dtype, R * C))
    s = [poison(dtype, C) for _ in range(R)]
    comm.scatter(s, big, src=6)
    for r in range(R):
        same(s[r], big[6][r * C:(r + 1) * C])


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=str)
def test_reductions_to_parts(comm, dtype):
    C = 1024
    xs = [rand(dtype, R * C, r) for r in range(R)]
    ys = [poison(dtype, C) for _ in range(R)]
    comm.reduce_scatter_tensor(ys, xs, op="max")
    total = ref_reduce(xs, "max")
    for r in range(R):
        same(ys[r], total[r * C:(r + 1) * C])
    xs = [rand(dtype, C, 50 + r) for r in range(R)]
    before = [x.clone() for x in xs]
    comm.reduce(xs, dst=3)
    same(xs[3], ref_reduce(before, "sum"))
    same(xs[0], before[0])


def test_user_collectives(comm):
    rev = comm.load(REVERSE)
    C = 4099
    xs = [rand(torch.bfloat16, C, r) for r in range(R)]
    ys = [poison(torch.bfloat16, C) for _ in range(R)]
    rev(x=xs, y=ys)
    for r in range(R):
        same(ys[r], xs[R - 1 - r].flip(0))
    spread = comm.load(EVEN_SUM)
    xs = [rand(torch.float32, C, r) for r in range(R)]
    ys = [poison(torch.float32, 2 * C) for _ in range(R)]
    spread(x=xs, y=ys, op="max")
    for r in range(R):
        same(ys[r][0::2], ref_reduce(xs, "max"))
        same(ys[r][1::2], poison(torch.float32, C))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32], ids=str)
@pytest.mark.parametrize("N,H", [(1, 4096), (7, 1024), (128, 8192)])
@pytest.mark.parametrize("form", ["residual", "gemma", "nores"])
def test_all_reduce_rmsnorm(comm, dtype, N, H, form):
    """The fused call against torch's unfused chain in f32: the sum in rank
    order, + residual, rms_norm, * weight (1 + weight for Gemma); each store
    rounds once, so bf16 outputs are within 1 bf16 ulp of the f32 chain
    rounded (tolerance 2^-7 relative), f32 within 1e-5 (the row sum's order
    differs from torch's)."""
    xs = [rand(dtype, N * H, r).view(N, H) for r in range(R)]
    res = [rand(dtype, N * H, 100 + r).view(N, H) for r in range(R)]
    w = [rand(dtype, H, 200 + r) for r in range(R)]
    ys = [poison(dtype, N * H).view(N, H) for _ in range(R)]
    acc = xs[0].float()
    for x in xs[1:]:
        acc = acc + x.float()
    h = [acc + res[r].float() if form != "nores" else acc for r in range(R)]
    want_res = [t.to(dtype) for t in h]
    eps = 1e-6
    want_y = []
    for r in range(R):
        scale = (1 + w[r].float()) if form == "gemma" else w[r].float()
        n = torch.nn.functional.rms_norm(h[r], (H,), eps=eps)
        want_y.append((n * scale).to(dtype))
    comm.all_reduce_rmsnorm(xs, None if form == "nores" else res, w, eps, ys,
                            gemma=form == "gemma")
    torch.cuda.synchronize()
    tol = dict(rtol=2 ** -7, atol=2 ** -7) if dtype == torch.bfloat16 else \
        dict(rtol=1e-5, atol=1e-5)
    for r in range(R):
        if form != "nores":  # the residual, updated in place: h rounded once
            same(res[r], want_res[r])
        torch.testing.assert_close(ys[r].float(), want_y[r].float(), **tol,
                                   msg=lambda m: f"rank {r}: {m}")


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=str)
@pytest.mark.parametrize("N,H", [(1, 4096), (7, 1024), (128, 8192)])
def test_all_reduce_rmsnorm_fp8(comm, dtype, N, H):
    """The FP8 form (scale=): out is float8_e4m3fn, the normalized value
    divided by the scale and rounded once; against torch's f32 chain cast
    to f8e4m3 (|values| < 448 here, where torch's cast and the saturating
    one agree): within one f8 encoding (2^-3 relative; the row sum's order
    differs), the residual bit for bit."""
    xs = [rand(dtype, N * H, r).view(N, H) for r in range(R)]
    res = [rand(dtype, N * H, 100 + r).view(N, H) for r in range(R)]
    w = [rand(dtype, H, 200 + r) for r in range(R)]
    qs = [torch.full((N, H), float("nan"), device=DEV).to(torch.float8_e4m3fn)
          for _ in range(R)]
    acc = xs[0].float()
    for x in xs[1:]:
        acc = acc + x.float()
    h = [acc + res[r].float() for r in range(R)]
    want_res = [t.to(dtype) for t in h]
    eps, scale = 1e-6, 0.25
    comm.all_reduce_rmsnorm(xs, res, w, eps, qs, scale=scale)
    torch.cuda.synchronize()
    for r in range(R):
        n = torch.nn.functional.rms_norm(h[r], (H,), eps=eps) * w[r].float() / scale
        assert n.abs().max().item() < 448
        same(res[r], want_res[r])
        torch.testing.assert_close(qs[r].float(), n.to(torch.float8_e4m3fn).float(),
                                   rtol=2 ** -3, atol=2 ** -9,
                                   msg=lambda m: f"rank {r}: {m}")


def test_torch_compile_fullgraph(comm):
    def f(xs):
        ys = [x * 2 for x in xs]
        comm.all_reduce(ys)
        return [y + 1 for y in ys]

    xs = [rand(torch.float32, 4096, r) for r in range(R)]
    want = f([x.clone() for x in xs])
    got = torch.compile(f, fullgraph=True)(xs)
    for r in range(R):
        same(got[r], want[r])


def test_torch_compile_user_collective(comm):
    spread = comm.load(EVEN_SUM)

    def f(xs, ys):
        spread(x=[x + 1 for x in xs], y=ys, op="max")
        return [y * 2 for y in ys]

    xs = [rand(torch.float32, 512, r) for r in range(R)]
    ys = [poison(torch.float32, 1024) for _ in range(R)]
    got = torch.compile(f, fullgraph=True)(xs, ys)
    want = ref_reduce([x + 1 for x in xs], "max") * 2
    for r in range(R):
        same(got[r][0::2], want)
        same(got[r][1::2], poison(torch.float32, 512) * 2)


def test_cuda_graph_1000_replays(comm):
    C = 4096
    src = [rand(torch.bfloat16, C, r) for r in range(R)]
    buf = comm.empty((C,), torch.bfloat16)
    for r in range(R):  # a first call outside the capture: kernels, scratch
        buf[r].copy_(src[r])
    comm.all_reduce(buf)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for r in range(R):
            buf[r].copy_(src[r])
        comm.all_reduce(buf)
    for i in range(1000):
        if i % 250 == 0:
            for r in range(R):
                src[r].copy_(rand(torch.bfloat16, C, 1000 * i + r))
        g.replay()
        if i % 250 == 0 or i == 999:
            torch.cuda.synchronize()
            want = ref_reduce(src, "sum")
            for r in range(R):
                same(buf[r], want)
    comm.check()


def test_fast_path_against_python(comm, monkeypatch):
    """The eager calls' C++ path (purlin/_fastpath.cpp) against the Python
    path, bit for bit on the same inputs, in place and not, eager and
    through the torch op's kernel; C++ takes every call once its constants
    have launched through Python (the Python checks never run); it launches
    on torch's current stream, a side stream's too."""
    import purlin.cuda as pc
    assert comm.set_fast_path(True), "the C++ path could not be built (see the warning)"

    def calls(seed):
        out = []
        for dtype in (torch.bfloat16, torch.float32):
            xs = [rand(dtype, 4096, seed + r) for r in range(R)]
            comm.all_reduce(xs)
            ys = [poison(dtype, R * 4096) for _ in range(R)]
            comm.all_gather_into_tensor(ys, xs)
            zs = [poison(dtype, 4096 // R) for _ in range(R)]
            comm.reduce_scatter_tensor(zs, xs, op="max")
            bs = [x.clone() for x in xs]
            comm.broadcast(bs, src=3)
            torch.ops.purlin.all_reduce_(xs, comm.id, "sum")
            out += xs + ys + zs + bs
        torch.cuda.synchronize()
        return out

    first = calls(7)  # each call's first launch: Python, then C++ is made
    checked = []
    real = pc._addresses
    monkeypatch.setattr(pc, "_addresses", lambda *a: checked.append(1) or real(*a))
    fast = calls(7)
    assert checked == [], "the Python path ran with the C++ path on"
    assert comm.set_fast_path(False) is False
    try:
        slow = calls(7)
    finally:
        comm.set_fast_path(True)
    assert checked, "the Python path did not run with the C++ path off"
    for a, b, c in zip(first, fast, slow):
        same(a, c)
        same(b, c)
    impl = comm.standard("all_reduce").impl
    xs = [rand(torch.float32, 4096, r) for r in range(R)]
    comm.all_reduce(xs)
    n = len(checked)
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        comm.all_reduce(xs)
        assert (impl.stream[0] or 0) == side.cuda_stream
    torch.cuda.current_stream().wait_stream(side)
    comm.all_reduce(xs)
    assert (impl.stream[0] or 0) == torch.cuda.current_stream().cuda_stream
    assert len(checked) == n, "the stream checks ran the Python path"
    torch.cuda.synchronize()
    want = [rand(torch.float32, 4096, r) for r in range(R)]
    for _ in range(3):
        want = [ref_reduce(want, "sum")] * R
    for r in range(R):
        same(xs[r], want[r])


def test_bad_calls(comm):
    xs = [rand(torch.float32, 64, r) for r in range(R)]
    # A good call first: the C++ path has this call's constants, so the
    # bad calls below go through its checks, then the Python ones (raising).
    comm.all_reduce(xs)
    with pytest.raises(TypeError, match="rank 3 is torch.float16"):
        comm.all_reduce(xs[:3] + [xs[3].half()] + xs[4:])
    with pytest.raises(ValueError, match="rank 1 has 65 elements"):
        comm.all_reduce(xs[:1] + [rand(torch.float32, 65, 0)] + xs[2:])
    with pytest.raises(ValueError, match="not contiguous"):
        comm.all_reduce([rand(torch.float32, 128, r)[::2] for r in range(R)])
    with pytest.raises(ValueError, match="is on cpu"):
        comm.all_reduce(xs[:7] + [xs[7].cpu()])
    with pytest.raises(TypeError, match="complex64"):
        comm.all_reduce([torch.zeros(4, dtype=torch.complex64, device=DEV)] * R)
    with pytest.raises(ValueError, match="7 inputs"):
        comm.all_reduce(xs[:7])
    with pytest.raises(ValueError, match="root 8 outside"):
        comm.broadcast(xs, src=8)
    rev = comm.load(REVERSE)
    with pytest.raises(ValueError, match="is on cpu"):
        rev(x=[x.cpu() for x in xs], y=xs)
    with pytest.raises(TypeError, match="holds f16"):
        rev(x=xs, y=[x.half() for x in xs])
