"""The purlin package on the host target (no GPU): every standard call and
user-written collectives on threads, checked against numpy with random
inputs and poisoned outputs; bad calls raise clear exceptions.

    PYTHONPATH=python python3 -m unittest discover -s python/tests -v
"""
import os
import unittest

import numpy as np

import purlin

R = 4
RNG = np.random.default_rng(15)
POISON = {np.float32: np.float32(-7777.0), np.float64: -7777.0, np.int32: -7777,
          np.int8: -77, np.int64: -7777}

from collectives import EVEN_SUM, NORM_SCALED, REVERSE


def rand(dtype, n):
    if np.issubdtype(dtype, np.integer):
        return RNG.integers(-50, 50, size=n).astype(dtype)
    return RNG.standard_normal(n).astype(dtype)


def poisoned(dtype, n):
    return np.full(n, POISON[dtype], dtype=dtype)


NP_OP = {"sum": lambda a: np.sum(a, axis=0, dtype=a.dtype),
         "max": lambda a: np.max(a, axis=0), "min": lambda a: np.min(a, axis=0),
         "prod": lambda a: np.prod(a, axis=0, dtype=a.dtype)}


def reduce_ref(xs, op):
    """In ascending rank order, as purlin reduces (bit for bit for sums)."""
    if op == "sum":
        acc = xs[0].copy()
        for x in xs[1:]:
            acc = acc + x
        return acc
    return NP_OP[op](np.stack(xs))


class StandardCalls(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.comm = purlin.Communicator.local(R, device="cpu")

    def test_all_reduce(self):
        for dt, op, C in [(np.float32, "sum", 1000), (np.int32, "max", 257),
                          (np.float64, "min", 33), (np.int64, "sum", 4096)]:
            xs = [rand(dt, C) for _ in range(R)]
            want = reduce_ref(xs, op)
            self.comm.all_reduce(xs, op=op)
            for r in range(R):
                np.testing.assert_array_equal(xs[r], want, err_msg=f"{dt} {op} rank {r}")

    def test_all_gather_into_tensor(self):
        C = 77
        xs = [rand(np.float32, C) for _ in range(R)]
        ys = [poisoned(np.float32, R * C) for _ in range(R)]
        self.comm.all_gather_into_tensor(ys, xs)
        for r in range(R):
            np.testing.assert_array_equal(ys[r], np.concatenate(xs))

    def test_reduce_scatter_tensor(self):
        C = 50
        xs = [rand(np.int32, R * C) for _ in range(R)]
        ys = [poisoned(np.int32, C) for _ in range(R)]
        self.comm.reduce_scatter_tensor(ys, xs, op="sum")
        total = reduce_ref(xs, "sum")
        for r in range(R):
            np.testing.assert_array_equal(ys[r], total[r * C:(r + 1) * C])

    def test_all_to_all_single(self):
        C = 9
        xs = [rand(np.float64, R * C) for _ in range(R)]
        ys = [poisoned(np.float64, R * C) for _ in range(R)]
        self.comm.all_to_all_single(ys, xs)
        for d in range(R):
            want = np.concatenate([xs[s][d * C:(d + 1) * C] for s in range(R)])
            np.testing.assert_array_equal(ys[d], want)

    def test_broadcast(self):
        xs = [rand(np.int8, 100) for _ in range(R)]
        src = xs[2].copy()
        self.comm.broadcast(xs, src=2)
        for r in range(R):
            np.testing.assert_array_equal(xs[r], src)

    def test_reduce(self):
        xs = [rand(np.float32, 300) for _ in range(R)]
        before = [x.copy() for x in xs]
        self.comm.reduce(xs, dst=1, op="max")
        np.testing.assert_array_equal(xs[1], reduce_ref(before, "max"))
        for r in (0, 2, 3):
            np.testing.assert_array_equal(xs[r], before[r])

    def test_gather_scatter(self):
        C = 31
        xs = [rand(np.int64, C) for _ in range(R)]
        ys = [poisoned(np.int64, R * C) for _ in range(R)]
        self.comm.gather(ys, xs, dst=3)
        np.testing.assert_array_equal(ys[3], np.concatenate(xs))
        for r in range(3):
            np.testing.assert_array_equal(ys[r], poisoned(np.int64, R * C))
        outs = [poisoned(np.int64, C) for _ in range(R)]
        self.comm.scatter(outs, ys, src=3)
        for r in range(R):
            np.testing.assert_array_equal(outs[r], xs[r])


class UserCollectives(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.comm = purlin.Communicator.local(R, device="cpu")

    def test_example_all_gather_interleaved(self):
        coll = self.comm.load(os.path.join(purlin.communicator.examples_dir(),
                                           "all_gather_interleaved.purlin"))
        C = 40
        xs = [rand(np.float32, C) for _ in range(R)]
        ys = [poisoned(np.float32, C * R) for _ in range(R)]
        coll(x=xs, y=ys)  # C solved from the sizes
        want = np.stack(xs, axis=1).reshape(-1)  # y[i*R + r] = x_r[i]
        for r in range(R):
            np.testing.assert_array_equal(ys[r], want)

    def test_example_all_reduce_rmsnorm(self):
        # The fused all-reduce + residual + RMSNorm (issue 16): the extra
        # inputs and outputs by name, N and H solved from the sizes, out of
        # place and in place (y at x, res_out at res); against numpy in f32
        # (numpy's pairwise sums round differently: a tolerance).
        coll = self.comm.load(os.path.join(purlin.communicator.examples_dir(),
                                           "all_reduce_rmsnorm.purlin"))
        N, H = 5, 64
        for inplace in (False, True):
            xs = [rand(np.float32, N * H) for _ in range(R)]
            res = [rand(np.float32, N * H) for _ in range(R)]
            w = [rand(np.float32, H) for _ in range(R)]
            eps = [np.full(1, 1e-5, dtype=np.float32) for _ in range(R)]
            recv = reduce_ref(xs, "sum")
            want_h = [recv + res[r] for r in range(R)]
            want_y = []
            for r in range(R):
                h = want_h[r].reshape(N, H)
                s = np.sqrt((h * h).sum(axis=1, keepdims=True) / H + eps[r][0])
                want_y.append((h / s * w[r]).reshape(-1))
            ys = xs if inplace else [poisoned(np.float32, N * H) for _ in range(R)]
            hs = res if inplace else [poisoned(np.float32, N * H) for _ in range(R)]
            coll(x=xs, res=res, w=w, eps=eps, y=ys, res_out=hs)
            for r in range(R):
                np.testing.assert_array_equal(hs[r], want_h[r], err_msg=f"res_out {r}")
                np.testing.assert_allclose(ys[r], want_y[r], rtol=1e-5, atol=1e-6,
                                           err_msg=f"y rank {r} inplace {inplace}")

    def test_repeated_calls(self):
        # A call like an earlier one reuses its Binding (Collective._quick):
        # new arrays of the same shapes land where they are now; a changed
        # size binds anew; a mistake after cached calls still raises.
        coll = self.comm.load(REVERSE)
        for C in (33, 33, 17, 33):
            xs = [rand(np.int32, C) for _ in range(R)]
            ys = [poisoned(np.int32, C) for _ in range(R)]
            coll(x=xs, y=ys)
            for r in range(R):
                np.testing.assert_array_equal(ys[r], xs[R - 1 - r][::-1])
        self.assertEqual(len(coll._calls), 2)
        ro = [poisoned(np.int32, 33) for _ in range(R)]
        ro[3].flags.writeable = False
        with self.assertRaisesRegex(ValueError, "read-only"):
            coll(x=xs, y=ro)
        with self.assertRaisesRegex(TypeError, "holds f32"):
            coll(x=xs, y=[poisoned(np.float32, 33) for _ in range(R)])
        with self.assertRaisesRegex(ValueError, "has 32 elements"):
            coll(x=xs, y=[poisoned(np.int32, 32) for _ in range(R)])

    def test_epilogue_own_types(self):
        # An epilogue's own buffers in other types than the communicated T
        # (f32 here): an f32 scale in, an f16 output; against numpy in f32,
        # rounded once to f16 (numpy sums in another order: one f16 ulp).
        coll = self.comm.load(NORM_SCALED)
        N, H = 4, 40
        xs = [rand(np.float32, N * H) for _ in range(R)]
        sc = [np.full(1, 0.5 + r, dtype=np.float32) for r in range(R)]
        ys = [poisoned(np.float32, N * H) for _ in range(R)]
        qs = [np.full(N * H, np.nan, dtype=np.float16) for _ in range(R)]
        coll(x=xs, scale=sc, y=ys, q=qs, N=N)
        recv = reduce_ref(xs, "sum").reshape(N, H)
        s = np.sqrt((recv * recv).sum(axis=1, keepdims=True) / H + 1)
        for r in range(R):
            np.testing.assert_array_equal(ys[r], recv.reshape(-1), err_msg=f"y {r}")
            want = (recv / s / sc[r][0]).astype(np.float16).reshape(-1)
            np.testing.assert_allclose(qs[r].astype(np.float32), want.astype(np.float32),
                                       rtol=2e-3, atol=1e-6, err_msg=f"q rank {r}")
        # the f16 output given as f32: refused, naming the declared type
        with self.assertRaisesRegex(TypeError, "declared f16"):
            coll(x=xs, scale=sc, y=ys, q=ys, N=N)

    def test_all_reduce_rmsnorm_call(self):
        # comm.all_reduce_rmsnorm: residual updated in place by default, the
        # Gemma form, and no residual; eps a float; against numpy in f32.
        N, H = 3, 48
        for gemma, with_res in ((False, True), (True, True), (False, False)):
            xs = [rand(np.float32, N * H).reshape(N, H) for _ in range(R)]
            res = [rand(np.float32, N * H).reshape(N, H) for _ in range(R)]
            w = [rand(np.float32, H) for _ in range(R)]
            h = reduce_ref([x.reshape(-1) for x in xs], "sum").reshape(N, H)
            want_h = [h + res[r] if with_res else h for r in range(R)]
            ys = [poisoned(np.float32, N * H).reshape(N, H) for _ in range(R)]
            self.comm.all_reduce_rmsnorm(xs, res if with_res else None, w, 1e-6, ys,
                                         gemma=gemma)
            for r in range(R):
                hr = want_h[r]
                s = np.sqrt((hr * hr).sum(axis=1, keepdims=True) / H + np.float32(1e-6))
                want_y = hr / s * ((1 + w[r]) if gemma else w[r])
                if with_res:  # the residual became h, in place
                    np.testing.assert_array_equal(res[r], hr, err_msg=f"res {r}")
                np.testing.assert_allclose(ys[r], want_y, rtol=1e-5, atol=1e-6,
                                           err_msg=f"y rank {r} gemma {gemma}")
            if with_res:
                # The residual in place is no overlap (spec/Epilogue.h,
                # epilogueLocalPair): the plan of a call out of place.
                name = "all_reduce_rmsnorm_gemma" if gemma else "all_reduce_rmsnorm"
                self.assertEqual(self.comm.standard(name).last_plan, "direct")
        # y over x (the communicated input) is an overlap: an in-place plan,
        # and still the right result.
        xs = [rand(np.float32, N * H).reshape(N, H) for _ in range(R)]
        res = [rand(np.float32, N * H).reshape(N, H) for _ in range(R)]
        h = reduce_ref([x.reshape(-1) for x in xs], "sum").reshape(N, H)
        want = [h + res[r] for r in range(R)]
        self.comm.all_reduce_rmsnorm(xs, res, w, 1e-6, xs)
        self.assertEqual(self.comm.standard("all_reduce_rmsnorm").last_plan, "direct_unfused")
        for r in range(R):
            s = np.sqrt((want[r] * want[r]).sum(axis=1, keepdims=True) / H + np.float32(1e-6))
            np.testing.assert_allclose(xs[r], want[r] / s * w[r], rtol=1e-5, atol=1e-6,
                                       err_msg=f"y over x, rank {r}")
        with self.assertRaises(ValueError):
            self.comm.all_reduce_rmsnorm(xs, None, w, 1e-6, ys, gemma=True)

    def test_reverse_ranks(self):
        coll = self.comm.load(REVERSE)
        C = 123
        xs = [rand(np.int32, C) for _ in range(R)]
        ys = [poisoned(np.int32, C) for _ in range(R)]
        coll(x=xs, y=ys, C=C)
        for r in range(R):
            np.testing.assert_array_equal(ys[r], xs[R - 1 - r][::-1])

    def test_reduce_spread_keeps_odd_places(self):
        coll = self.comm.load(EVEN_SUM)
        C = 64
        for op in ("sum", "max"):
            xs = [rand(np.float32, C) for _ in range(R)]
            ys = [poisoned(np.float32, 2 * C) for _ in range(R)]
            coll(x=xs, y=ys, op=op)
            for r in range(R):
                np.testing.assert_array_equal(ys[r][0::2], reduce_ref(xs, op))
                np.testing.assert_array_equal(ys[r][1::2], poisoned(np.float32, C))

    def test_bound_at_compile_time(self):
        c = purlin.compile(REVERSE, target="host", ranks=R, dtype="i32")
        coll = self.comm.load(c)
        xs = [rand(np.int32, 8) for _ in range(R)]
        ys = [poisoned(np.int32, 8) for _ in range(R)]
        coll(x=xs, y=ys)
        np.testing.assert_array_equal(ys[0], xs[R - 1][::-1])
        with self.assertRaisesRegex(TypeError, "holds f32.*is i32 .T bound at compile time"):
            coll(x=[rand(np.float32, 8) for _ in range(R)],
                 y=[poisoned(np.float32, 8) for _ in range(R)])
        with self.assertRaisesRegex(purlin.PurlinError, "compiled for 4 ranks"):
            purlin.Communicator.local(2).load(c)

    def test_cached(self):
        a = purlin.compile(REVERSE, target="host")
        b = purlin.compile(REVERSE, target="host")
        self.assertEqual(a.folder, b.folder)

    def test_dlpack_input(self):
        class OnlyDLPack:  # an array that speaks DLPack and nothing else
            def __init__(self, a):
                self.a = a

            def __dlpack__(self, **kw):
                return self.a.__dlpack__(**kw)

            def __dlpack_device__(self):
                return self.a.__dlpack_device__()

        xs = [rand(np.float32, 16) for _ in range(R)]
        ys = [poisoned(np.float32, 16) for _ in range(R)]
        self.comm.standard("all_reduce")(x=[OnlyDLPack(x) for x in xs],
                                         y=[OnlyDLPack(y) for y in ys])
        np.testing.assert_array_equal(ys[2], reduce_ref(xs, "sum"))


class BadCalls(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.comm = purlin.Communicator.local(R, device="cpu")

    def arrays(self, n=16, dt=np.float32):
        return [rand(dt, n) for _ in range(R)]

    def test_mixed_dtypes(self):
        xs = self.arrays()
        xs[2] = xs[2].astype(np.float64)
        with self.assertRaisesRegex(TypeError, "rank 2 holds f64"):
            self.comm.all_reduce(xs)

    def test_unsupported_dtype(self):
        with self.assertRaisesRegex(TypeError, "complex64"):
            self.comm.all_reduce([np.zeros(4, np.complex64)] * R)

    def test_wrong_size(self):
        xs, ys = self.arrays(10), [poisoned(np.float32, 10 * R) for _ in range(R)]
        ys[1] = poisoned(np.float32, 10 * R + 1)
        with self.assertRaisesRegex(ValueError, "'y' of rank 1 has 41 elements"):
            self.comm.all_gather_into_tensor(ys, xs)

    def test_wrong_rank_count(self):
        with self.assertRaisesRegex(ValueError, "3 arrays; the communicator has 4"):
            self.comm.all_reduce(self.arrays()[:3])

    def test_not_contiguous(self):
        xs = [rand(np.float32, 32)[::2] for _ in range(R)]
        with self.assertRaisesRegex(ValueError, "not contiguous"):
            self.comm.all_reduce(xs)

    def test_read_only_output(self):
        xs = self.arrays()
        xs[0].flags.writeable = False
        with self.assertRaisesRegex(ValueError, "read-only"):
            self.comm.all_reduce(xs)

    def test_unknown_name_and_op(self):
        coll = self.comm.standard("all_reduce")
        with self.assertRaisesRegex(ValueError, "no buffer or parameter 'z'"):
            coll(x=self.arrays(), y=self.arrays(), z=1)
        with self.assertRaisesRegex(ValueError, "not a reduction"):
            self.comm.all_reduce(self.arrays(), op="xor")
        with self.assertRaisesRegex(ValueError, "buffer 'y' is missing"):
            coll(x=self.arrays())

    def test_root_out_of_range(self):
        with self.assertRaises(purlin.PurlinError):
            self.comm.broadcast(self.arrays(), src=R)

    def test_not_a_list(self):
        with self.assertRaisesRegex(TypeError, "list of 4 arrays"):
            self.comm.all_reduce(rand(np.float32, 4))

    def test_compile_error_has_line_and_column(self):
        bad = REVERSE.replace("copy;", "copy")
        with self.assertRaisesRegex(purlin.CompileError, r":\d+:\d+: error"):
            purlin.compile(bad, target="host")

    def test_process_group_without_torch(self):
        try:
            import torch  # noqa: F401
            self.skipTest("torch is installed (python/tests/gpu/test_mp.py "
                          "runs from_process_group on a GPU)")
        except ImportError:
            pass
        with self.assertRaisesRegex(ImportError, "from_process_group needs torch"):
            purlin.Communicator.from_process_group(None)


if __name__ == "__main__":
    unittest.main()


class GpuCompileWithoutGpu(unittest.TestCase):
    """compile(target="sm_90") needs no GPU and no nvcc: the host build
    carries the plans, purlinc's CUDA output the plans' code for NVRTC."""

    def test_sm90_compile(self):
        c = purlin.compile(EVEN_SUM, target="sm_90")
        self.assertEqual((c.name, c.target), ("reduce_spread", "sm_90"))
        self.assertIn("PURLIN_PLAN_ENTRY", c.cuda_source)
        self.assertTrue(os.path.isfile(c.lib))
        again = purlin.load_compiled(c.folder)
        self.assertEqual(again.cuda_source, c.cuda_source)

    def test_collective_from_source(self):
        from purlin import _paths
        if not _paths.paths().get("cuda_lib"):
            self.skipTest("no CUDA runtime built (no nvcc)")
        import ctypes
        from purlin import _cuda
        c = purlin.compile(purlin.communicator.examples_dir() + "/all_gather.purlin",
                           target="sm_90")
        L = _cuda.lib()
        so = ctypes.CDLL(c.lib)
        get = so.purlin_collective_all_gather
        get.restype = ctypes.c_void_p
        info = ctypes.c_void_p()
        _cuda.check(L.purlinCollectiveFromSource(get(), b"sm_90", c.cuda_source.encode(),
                                                 ctypes.byref(info)), "from source")
        L.purlinCollectiveFree(info)
        with self.assertRaisesRegex(purlin.PurlinError, "not a GPU target"):
            _cuda.check(L.purlinCollectiveFromSource(get(), b"host", b"",
                                                     ctypes.byref(info)), "from source")
