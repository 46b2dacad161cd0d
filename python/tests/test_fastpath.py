"""The C++ path of the eager standard calls (purlin/_fastpath.cpp) with a real
torch, on CPU tensors: a communicator of the CUDA side whose device type
for the C++ path is the CPU, over a stand-in C API whose purlinLaunch is a
C function pointer (a ctypes callback) recording the purlinArgs it gets, so
that C++ and Python launch through the same function. The addresses in
order (in place and not), the element type, op, scalars and stream; every
bad call raising exactly what the Python path raises; each check of the C++
path failing on its own; the version counters the torch ops bump; the
switches (set_fast_path, PURLIN_TORCH_EXT=0) and a failed build's warning.

Runs where torch is installed (the first run builds the extension: about a
minute); CI's stand-in torch skips it:

    PURLIN_BUILD_DIR=$PWD/build PYTHONPATH=python:python/tests \\
        /tmp/tv11/bin/python -m unittest -v test_fastpath
"""
import ctypes
import importlib.util
import os
import sys
import tempfile
import unittest
import warnings
from unittest import mock

import purlin
from purlin import _cuda, _fastpath

REAL_TORCH = importlib.util.find_spec("torch") is not None
if REAL_TORCH:
    import torch

    from purlin import cuda

LAUNCH = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)
STREAM = 0xABC


class StandInCApi:
    """The CUDA runtime's C API as far as a communicator and its standard
    calls go: handles are numbers (each instance a new one); purlinLaunch
    is `launch` (a C function pointer: a recorder, or bench.py's no-op)."""

    def __init__(self, launch=None):
        self.launched = []
        self.status = 0  # what the recorder returns
        self.next_coll = 100
        self.scalars = [b"C"]
        self.nbuf = 0  # addresses to record: set by the test (2 * ranks)
        self.purlinLaunch = launch or LAUNCH(self._record)

    def _record(self, coll, args):
        a = _cuda.Args.from_address(args)
        self.launched.append((coll, a.dtype, a.op,
                              [a.scalars[i] for i in range(a.nscalars)],
                              [a.buffers[i] for i in range(self.nbuf)], a.streams[0]))
        return self.status

    def __getattr__(self, name):
        def fn(*a):
            if name == "purlinCollScalarCount":
                return len(self.scalars)
            if name == "purlinCollScalarName":
                return self.scalars[a[1]]
            if name in ("purlinGetLastError", "purlinCollLastPlan"):
                return b"stand-in failure"
            if name == "purlinCollectiveFromSource":
                a[3]._obj.value = 1234
            elif name == "purlinCollCreate":
                self.next_coll += 1
                a[0]._obj.value = self.next_coll
            elif name == "purlinCommCreate":
                a[0]._obj.value = 77
            return 0
        return fn

    def take(self):
        out, self.launched = self.launched, []
        return out


def cpu_comm(nranks, api):
    """A CUDA communicator of `nranks` virtual ranks whose tensors are CPU
    tensors: torch.cuda's answers stood in for its construction; then its
    device is the CPU (index -1, as get_device() says of a CPU tensor), for
    the Python checks and the C++ path alike, with a fixed stream."""
    with mock.patch.object(_cuda, "lib", lambda: api), \
            mock.patch.object(torch.cuda, "device_count", lambda: 1), \
            mock.patch.object(torch.cuda, "get_device_capability", lambda i=None: (9, 0)), \
            mock.patch.object(torch.cuda, "device", lambda i: mock.MagicMock()):
        comm = purlin.Communicator.local(nranks, "cuda:0")
    comm.index, comm.device, comm.tdevice = -1, "cpu", torch.device("cpu")
    comm.fast_device_type, comm.fast_stream = "cpu", STREAM
    comm.stream_getter = lambda: (lambda: STREAM)
    return comm


def close(comm, api):
    with mock.patch.object(_cuda, "lib", lambda: api), \
            mock.patch.object(torch.cuda, "synchronize", lambda i=None: None):
        comm.close()


@unittest.skipUnless(REAL_TORCH, "torch is not installed: the C++ fast path needs "
                     "real torch (CI's stand-in torch cannot build it)")
class FastPath(unittest.TestCase):
    R = 4

    @classmethod
    def setUpClass(cls):
        cls.api = StandInCApi()
        cls.api.nbuf = 2 * cls.R
        cls.patch = mock.patch.object(_cuda, "lib", lambda: cls.api)
        cls.patch.start()
        cls.comm = cpu_comm(cls.R, cls.api)
        if not cls.comm.set_fast_path(True):
            cls.patch.stop()
            raise unittest.SkipTest("the C++ fast path could not be built here")
        cls.fast = _fastpath.module()

    @classmethod
    def tearDownClass(cls):
        close(cls.comm, cls.api)
        cls.patch.stop()

    def setUp(self):
        self.comm.set_fast_path(True)
        self.api.status = 0
        self.api.scalars = [b"C"]
        self.api.take()

    def ts(self, n, dtype=None):
        return [torch.full((n,), float(r + 1), dtype=dtype or torch.bfloat16)
                for r in range(self.R)]

    def no_python(self):
        """The Python path's quick pass made to fail: a call that passes
        proves it went through C++."""
        return mock.patch.object(cuda, "_addresses",
                                 side_effect=AssertionError("the Python path ran"))

    def test_in_place_pointers_and_args(self):
        xs = self.ts(4096)
        p = [t.data_ptr() for t in xs]
        self.comm.all_reduce(xs, op="max")  # first: Python, then C++ made
        first = self.api.take()
        with self.no_python():
            self.comm.all_reduce(xs, op="max")
            self.comm.all_reduce(xs, op="max")
        fast = self.api.take()
        want = [p[k] for k in range(self.R) for _ in (0, 1)]
        # bf16 (2), max (4), C = 4096, [x0, x0, x1, x1, ...], the stream
        self.assertEqual(first[0][1:], (2, 4, [4096], want, STREAM))
        self.assertEqual(fast, first * 2)

    def test_out_of_place_pointers(self):
        for name, fx, fy in (("all_gather_into_tensor", 1, self.R),
                             ("reduce_scatter_tensor", self.R, 1),
                             ("all_to_all_single", self.R, self.R)):
            xs, ys = self.ts(100 * fx, torch.float32), self.ts(100 * fy, torch.float32)
            p, q = [t.data_ptr() for t in xs], [t.data_ptr() for t in ys]
            getattr(self.comm, name)(ys, xs)
            first = self.api.take()
            with self.no_python():
                getattr(self.comm, name)(ys, xs)
            want = [a for k in range(self.R) for a in (p[k], q[k])]
            self.assertEqual(first[0][4], want, name)
            self.assertEqual(self.api.take(), first, name)
        # Rooted: the root is a scalar of the call.
        self.api.scalars = [b"C", b"root"]
        xs = self.ts(64)
        self.comm.broadcast(xs, src=3)
        self.comm.broadcast(xs, src=3)
        a, b = self.api.take()
        self.assertEqual((a[3], a[4]), ([64, 3], [t.data_ptr() for t in xs for _ in (0, 1)]))
        self.assertEqual(a, b)

    def test_new_tensors_and_moved_storage(self):
        # The addresses are read at every call: new tensors of the same
        # shape, and an existing tensor whose storage was replaced (set_).
        xs = self.ts(256)
        self.comm.all_reduce(xs)
        self.api.take()
        with self.no_python():
            ys = self.ts(256)
            self.comm.all_reduce(ys)
            xs[2].set_(torch.zeros(256, dtype=torch.bfloat16))
            self.comm.all_reduce(xs)
        a, b = self.api.take()
        self.assertEqual(a[4][::2], [t.data_ptr() for t in ys])
        self.assertEqual(b[4][4:6], [xs[2].data_ptr()] * 2)

    def bad_cases(self):
        """(description, call) of bad calls, each on a call the C++ path
        has been made for (all_reduce of R x 512 f32, all_gather)."""
        xs = self.ts(512, torch.float32)
        ys = self.ts(512 * self.R, torch.float32)
        self.comm.all_reduce(xs)
        self.comm.all_gather_into_tensor(ys, xs)
        self.api.take()

        def one(k, t, lst=xs):
            return [t if i == k else x for i, x in enumerate(lst)]
        strided = torch.zeros(1024, dtype=torch.float32)[::2]
        ar, ag = self.comm.all_reduce, self.comm.all_gather_into_tensor
        return [
            ("dtype", lambda: ar(one(1, xs[1].to(torch.float16)))),
            ("not contiguous", lambda: ar(one(2, strided))),
            ("numel", lambda: ar(one(3, torch.zeros(511)))),
            ("not a tensor", lambda: ar(one(1, "x"))),
            ("None", lambda: ar(one(1, None))),
            ("too few", lambda: ar(xs[:-1])),
            ("a tensor, not a list", lambda: ar(xs[0])),
            ("output dtype", lambda: ag(one(0, ys[0].double(), ys), xs)),
            ("output numel", lambda: ag(one(3, torch.zeros(512), ys), xs)),
            ("output not contiguous",
             lambda: ag(one(1, torch.zeros(4096)[::2], ys), xs)),
            ("a dtype purlin does not move",
             lambda: ar([torch.zeros(512, dtype=torch.complex64)] * self.R)),
        ]

    def outcome(self, fn):
        try:
            fn()
        except Exception as e:
            return type(e), str(e)
        return None

    def test_bad_calls_raise_as_python(self):
        checks = mock.patch.object(cuda.CudaCommunicator, "_check_tensors", autospec=True,
                                   side_effect=cuda.CudaCommunicator._check_tensors)
        for what, fn in self.bad_cases():
            with checks as spy:
                fast = self.outcome(fn)
            self.comm.set_fast_path(False)
            slow = self.outcome(fn)
            self.comm.set_fast_path(True)
            self.assertIsNotNone(fast, what)
            self.assertEqual(fast, slow, what)
            if what not in ("too few", "a tensor, not a list",
                            "a dtype purlin does not move"):
                # The tensors themselves were bad: C++ sent the call on to
                # the Python checks, which raised.
                self.assertTrue(spy.called, what)
            self.assertEqual(self.api.take(), [], what)

    def test_subclass_launches_through_python(self):
        # nn.Parameter is a torch.Tensor of another class: C++ leaves it to
        # Python (isinstance), which launches it.
        xs = self.ts(128, torch.float32)
        self.comm.all_reduce(xs)
        self.api.take()
        ps = [torch.nn.Parameter(x, requires_grad=False) for x in xs]
        self.comm.all_reduce(ps)
        self.assertEqual(self.api.take()[0][4][::2], [x.data_ptr() for x in xs])

    def test_each_check_of_cpp_fails(self):
        # make() and run() directly: each check alone makes run() return -1
        # without launching; the good call launches.
        L = self.R
        ptrs = (ctypes.c_void_p * (2 * L))()
        stream = (ctypes.c_void_p * 1)()
        args = _cuda.Args(0, 1, None, 0, None, 0, ptrs, stream)
        calls = []

        def rec(coll, a):
            calls.append((coll, [ptrs[i] for i in range(2 * L)], stream[0]))
            return 0
        fn = LAUNCH(rec)
        addr = _fastpath.launch_address(type("L", (), {"purlinLaunch": fn}))

        def make(dtype=torch.float32, devtype="cpu", index=-1, nx=8, ny=8, fixed=STREAM):
            return self.fast.make(addr, 5, ctypes.addressof(args), ctypes.addressof(ptrs),
                                  ctypes.addressof(stream), dtype, devtype, index, L, nx, ny,
                                  cuda._order(L, True), cuda._order(L, False), fixed)
        good = make()
        xs = [torch.zeros(8) for _ in range(L)]
        ys = [torch.zeros(8) for _ in range(L)]
        run = self.fast.run
        self.assertEqual(run(good, xs, xs, False), 0)
        self.assertEqual(run(good, tuple(xs), ys, False), 0)
        p, q = [t.data_ptr() for t in xs], [t.data_ptr() for t in ys]
        self.assertEqual(calls, [(5, [a for a in p for _ in (0, 1)], STREAM),
                                 (5, [a for k in range(L) for a in (p[k], q[k])], STREAM)])
        calls.clear()
        bad = [
            ("dtype", make(dtype=torch.float16), xs, xs),
            ("device type", make(devtype="meta"), xs, xs),
            ("device index", make(index=0), xs, xs),
            ("input numel", make(nx=9), xs, xs),
            ("output numel", make(ny=9), xs, ys),
            ("layout", good, [x.to_sparse() for x in xs], ys),
            ("contiguity", good, [torch.zeros(16)[::2]] + xs[1:], ys),
            ("output contiguity", good, xs, ys[:3] + [torch.zeros(16)[::2]]),
            ("class", good, [torch.nn.Parameter(xs[0])] + xs[1:], ys),
            ("not a tensor", good, [1.0] + xs[1:], ys),
            ("length", good, xs[:3], ys),
            ("output length", good, xs, ys + ys[:1]),
            ("not a list", good, iter(xs), ys),
            ("a tensor for a list", good, torch.zeros(L, 8), ys),
            # CPU has no streams: the device's current stream cannot be read
            ("stream", make(fixed=None), xs, ys),
        ]
        for what, c, a, b in bad:
            self.assertEqual(run(c, a, b, False), -1, what)
        self.assertEqual(calls, [])
        # A failing purlinLaunch: its status comes back.
        fail = LAUNCH(lambda c, a: 7)
        args2 = self.fast.make(ctypes.cast(fail, ctypes.c_void_p).value, 5,
                               ctypes.addressof(args), ctypes.addressof(ptrs),
                               ctypes.addressof(stream), torch.float32, "cpu", -1, L, 8, 8,
                               cuda._order(L, True), cuda._order(L, False), STREAM)
        self.assertEqual(run(args2, xs, xs, False), 7)
        with self.assertRaisesRegex(ValueError, "outside"):
            self.fast.make(addr, 5, ctypes.addressof(args), ctypes.addressof(ptrs),
                           ctypes.addressof(stream), torch.float32, "cpu", -1, L, 8, 8,
                           [0] * (2 * L - 1) + [L], cuda._order(L, False), STREAM)
        with self.assertRaisesRegex(TypeError, "torch.dtype"):
            self.fast.make(addr, 5, ctypes.addressof(args), ctypes.addressof(ptrs),
                           ctypes.addressof(stream), "f32", "cpu", -1, L, 8, 8,
                           cuda._order(L, True), cuda._order(L, False), STREAM)

    def test_launch_failure_raises(self):
        xs = self.ts(300, torch.float32)
        self.comm.all_reduce(xs)
        self.api.status = 11  # PURLIN_ERR_CUDA
        with self.no_python():
            with self.assertRaisesRegex(purlin.PurlinError,
                                        "all_reduce: stand-in failure .PURLIN_ERR_CUDA"):
                self.comm.all_reduce(xs)

    def test_larger_instance(self):
        # A larger call makes a larger instance (fit): the call made for the
        # old one goes through Python once and is made anew for the new one.
        xs = self.ts(1000)
        self.comm.all_reduce(xs)
        self.comm.all_reduce(xs)
        old = self.api.take()[1][0]
        self.comm.all_reduce(self.ts(1 << 20))
        self.comm.all_reduce(xs)  # Python: the instance changed
        with self.no_python():
            self.comm.all_reduce(xs)
        big, a, b = self.api.take()
        self.assertNotEqual(big[0], old)
        self.assertEqual((a[0], b[0]), (big[0], big[0]))
        self.assertEqual((a[3], b[3]), ([1000], [1000]))

    def test_torch_ops_bump_once(self):
        xs = self.ts(200)
        op = torch.ops.purlin.all_reduce_
        op(xs, self.comm.id, "sum")  # Python: bumps, launches, makes the C++ call
        v = [x._version for x in xs]
        with self.no_python():
            op(xs, self.comm.id, "sum")
        self.assertEqual([x._version for x in xs], [n + 1 for n in v])
        ins, outs = self.ts(50), self.ts(50 * self.R)
        coll = torch.ops.purlin.collective
        coll(ins, outs, self.comm.id, "all_gather", 0, "sum")
        vi, vo = [x._version for x in ins], [x._version for x in outs]
        with self.no_python():
            coll(ins, outs, self.comm.id, "all_gather", 0, "sum")
        self.assertEqual([x._version for x in ins], vi)  # inputs: not written
        self.assertEqual([x._version for x in outs], [n + 1 for n in vo])
        a = self.api.take()
        self.assertEqual(a[0], a[1])
        self.assertEqual(a[2], a[3])
        # Inference tensors have no version counter: nothing to bump, in
        # inference mode or out of it (torch._C._increment_version's way).
        with torch.inference_mode():
            inf = self.ts(200)
        with self.no_python():
            with torch.inference_mode():
                op(inf, self.comm.id, "sum")
            op(inf, self.comm.id, "sum")
        self.assertEqual(len(self.api.take()), 2)

    def test_fast_path_off(self):
        xs = self.ts(64)
        self.comm.all_reduce(xs)
        self.assertFalse(self.comm.set_fast_path(False))
        with self.no_python():
            with self.assertRaisesRegex(AssertionError, "the Python path ran"):
                self.comm.all_reduce(xs)
        self.assertTrue(self.comm.set_fast_path(True))
        with self.no_python():
            self.comm.all_reduce(xs)

    def test_disabled_by_environment(self):
        api = StandInCApi()
        api.nbuf = 4
        with mock.patch.dict(os.environ, {"PURLIN_TORCH_EXT": "0"}), \
                mock.patch.object(_cuda, "lib", lambda: api):
            comm = cpu_comm(2, api)
            try:
                xs = [torch.ones(64) for _ in range(2)]
                comm.all_reduce(xs)
                with self.no_python():
                    with self.assertRaisesRegex(AssertionError, "the Python path ran"):
                        comm.all_reduce(xs)
                self.assertIsNone(comm._fast)
            finally:
                close(comm, api)

    def test_failed_build_warns_and_falls_back(self):
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "broken.cpp")
            with open(bad, "w") as fh:
                fh.write("#error a compiler that fails\n")
            with mock.patch.object(_fastpath, "SOURCE", bad), \
                    mock.patch.dict(os.environ, {"PURLIN_PY_CACHE": d}):
                _fastpath._key.cache_clear()
                try:
                    with warnings.catch_warnings(record=True) as w:
                        warnings.simplefilter("always")
                        self.assertIsNone(_fastpath._load())
                finally:
                    _fastpath._key.cache_clear()
        msgs = [str(x.message) for x in w if x.category is RuntimeWarning]
        self.assertEqual(len(msgs), 1, msgs)
        self.assertIn("could not be built", msgs[0])
        self.assertIn("PURLIN_TORCH_EXT=0", msgs[0])


if __name__ == "__main__":
    unittest.main()
