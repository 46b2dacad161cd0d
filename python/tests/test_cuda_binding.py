"""purlin.cuda's Python side without a GPU or torch: a stand-in torch
(stub/torch.py) and a stand-in C API that records what it is called with.
The launches' arguments (element type, op, scalars, buffers [rank][buffer],
stream), the instances' maxima, the checks of bad calls, and the custom
ops' path under torch.compile (standard and user-written collectives, in
place too)."""
import importlib.util
import os
import sys
import unittest

# With a real torch the GPU tests (python/tests/gpu) cover this.
REAL_TORCH = importlib.util.find_spec("torch") is not None

import purlin
from collectives import EVEN_SUM, REVERSE


class FakeCApi:
    """Records calls; handles come back as fixed numbers."""

    def __init__(self):
        self.calls = []
        self.scalars = [b"C"]

    def __getattr__(self, name):
        def fn(*a):
            if name == "purlinCollScalarCount":
                return len(self.scalars)
            if name == "purlinCollScalarName":
                return self.scalars[a[1]]
            if name in ("purlinGetLastError", "purlinCollLastPlan"):
                return b""
            if name == "purlinLaunch":
                x = a[1]._obj
                self.calls.append((name, x.dtype, x.op,
                                   [x.scalars[i] for i in range(x.nscalars)],
                                   [x.buffers[i] for i in range(4)], x.streams[0]))
                return 0
            if name == "purlinCollectiveFromSource":
                a[3]._obj.value = 1234
            elif name == "purlinCollCreate":
                a[0]._obj.value = 99
                self.calls.append((name, a[3]))
            elif name == "purlinCommCreate":
                a[0]._obj.value = 77
            return 0
        return fn

    def launches(self):
        out = [c[1:] for c in self.calls if c[0] == "purlinLaunch"]
        self.calls.clear()
        return out


@unittest.skipIf(REAL_TORCH, "torch is installed: python/tests/gpu covers it")
class CudaBinding(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        sys.path.insert(0, os.path.join(os.path.dirname(__file__), "stub"))
        import torch
        from purlin import _cuda
        cls.torch = torch
        cls.api = FakeCApi()
        cls.saved = _cuda.lib
        _cuda.lib = lambda: cls.api
        # The Python path: the stand-in torch cannot build the C++ one
        # (test_fastpath.py tests that with a real torch).
        saved_ext = os.environ.get("PURLIN_TORCH_EXT")
        os.environ["PURLIN_TORCH_EXT"] = "0"
        try:
            cls.comm = purlin.Communicator.local(2, "cuda:0")
        finally:
            if saved_ext is None:
                del os.environ["PURLIN_TORCH_EXT"]
            else:
                os.environ["PURLIN_TORCH_EXT"] = saved_ext

    @classmethod
    def tearDownClass(cls):
        from purlin import _cuda
        cls.comm.close()
        _cuda.lib = cls.saved
        sys.path.pop(0)
        del sys.modules["torch"]

    def tensors(self, n, dt=None):
        return self.comm.empty((n,), dt or self.torch.float32)

    def test_target_and_standard_calls(self):
        self.assertEqual((self.comm.target, self.comm.device), ("sm_90", "cuda:0"))
        xs = self.tensors(100)
        self.api.scalars = [b"C"]
        self.comm.all_reduce(xs, op="max")
        p = [t.data_ptr() for t in xs]
        # f32 (0), max (4), C = 100, x and y of each rank the same tensor
        self.assertEqual(self.api.launches(), [(0, 4, [100], [p[0], p[0], p[1], p[1]], 0xABC)])
        ys = self.tensors(200)
        self.comm.all_gather_into_tensor(ys, xs)
        q = [t.data_ptr() for t in ys]
        self.assertEqual(self.api.launches(), [(0, 0, [100], [p[0], q[0], p[1], q[1]], 0xABC)])
        self.api.scalars = [b"C", b"root"]
        self.api.calls.clear()
        self.comm.broadcast(xs, src=1)
        creates = [c for c in self.api.calls if c[0] == "purlinCollCreate"]
        self.assertEqual(creates, [("purlinCollCreate", b"C=4096,root=1")])  # root: R - 1
        self.assertEqual(self.api.launches()[0][2], [100, 1])

    def test_register_graph_buffers_local(self):
        # Virtual ranks of one process reach any memory: a no-op, no C call.
        self.api.calls.clear()
        self.assertIsNone(self.comm.register_graph_buffers())
        self.assertEqual(self.api.calls, [])

    def test_bad_calls(self):
        torch = self.torch
        xs = self.tensors(100)
        cases = [
            ([xs[0], torch.Tensor(100, torch.float16, torch.device("cuda", 0))],
             TypeError, "input of rank 1 is torch.float16"),
            ([xs[0], torch.Tensor(100, torch.float32, torch.device("cpu"))],
             ValueError, "rank 1 is on cpu"),
            ([xs[0], torch.Tensor(100, torch.float32, torch.device("cuda", 0), False)],
             ValueError, "not contiguous"),
            ([xs[0], torch.Tensor(99, torch.float32, torch.device("cuda", 0))],
             ValueError, "rank 1 has 99 elements"),
            ([xs[0]], ValueError, "1 inputs and 1 outputs; the communicator has 2"),
            ([torch.Tensor(4, torch.complex64, torch.device("cuda", 0))] * 2,
             TypeError, "complex64"),
        ]
        for arg, exc, msg in cases:
            with self.assertRaisesRegex(exc, msg):
                self.comm.all_reduce(arg)
        with self.assertRaisesRegex(ValueError, "root 2 outside"):
            self.comm.broadcast(xs, src=2)

    def test_repeated_calls(self):
        # The eager path keeps what follows from a call's constants; what a
        # tensor is is looked at on every call (an existing tensor can change:
        # set_, .data =, resize_), and an instance grown meanwhile is used.
        torch = self.torch
        self.api.scalars = [b"C"]
        xs = self.tensors(100)
        p = [t.data_ptr() for t in xs]
        self.comm.all_reduce(xs)
        self.comm.all_reduce(xs)
        want = (0, 1, [100], [p[0], p[0], p[1], p[1]], 0xABC)
        self.assertEqual(self.api.launches(), [want, want])
        xs[1].p = 0x7770000  # its storage replaced
        self.comm.all_reduce(xs)
        self.assertEqual(self.api.launches()[0][3], [p[0], p[0], 0x7770000, 0x7770000])
        for attr, value, msg in (("c", False, "input of rank 1 is not contiguous"),
                                 ("n", 50, "input of rank 1 has 50 elements"),
                                 ("dtype", torch.float16, "rank 1 is torch.float16"),
                                 ("device", torch.device("cpu"), "rank 1 is on cpu")):
            old = getattr(xs[1], attr)
            setattr(xs[1], attr, value)
            with self.assertRaisesRegex((TypeError, ValueError), msg):
                self.comm.all_reduce(xs)
            setattr(xs[1], attr, old)
        with self.assertRaisesRegex(TypeError, "input of rank 1 is a str"):
            self.comm.all_reduce([xs[0], "x"])
        self.api.calls.clear()
        self.comm.all_reduce(self.tensors(10000))  # a larger instance
        self.comm.all_reduce(xs)
        creates = [c for c in self.api.calls if c[0] == "purlinCollCreate"]
        self.assertEqual(creates, [("purlinCollCreate", b"C=16384")])
        self.assertEqual([c[2] for c in self.api.launches()], [[10000], [100]])

    def test_user_collective_repeated(self):
        # A user-written collective's repeated call (Collective._quick): new
        # tensors of the same shapes launch at their own addresses with the
        # kept Binding; another dtype goes through every check and raises.
        self.api.scalars = [b"C"]
        spread = self.comm.load(EVEN_SUM)
        for _ in range(3):
            xs, ys = self.tensors(100), self.tensors(200)
            spread(x=xs, y=ys, op="max")
            p, q = [t.data_ptr() for t in xs], [t.data_ptr() for t in ys]
            self.assertEqual(self.api.launches(),
                             [(0, 4, [100], [p[0], q[0], p[1], q[1]], 0xABC)])
        self.assertEqual(len(spread._calls), 1)
        with self.assertRaisesRegex(TypeError, "f16"):
            spread(x=xs, y=self.tensors(200, self.torch.float16), op="max")
        self.assertEqual(self.api.launches(), [])

    def test_user_collective_and_torch_compile(self):
        self.api.scalars = [b"C"]
        xs, ys = self.tensors(100), self.tensors(200)
        p, q = [t.data_ptr() for t in xs], [t.data_ptr() for t in ys]
        spread = self.comm.load(EVEN_SUM)
        spread(x=xs, y=ys, op="max")
        want = [(0, 4, [100], [p[0], q[0], p[1], q[1]], 0xABC)]
        self.assertEqual(self.api.launches(), want)
        self.torch.COMPILING[0] = True  # the same through the custom ops
        try:
            spread(x=xs, y=ys, op="max")
            self.assertEqual(self.api.launches(), want)
            del self.torch.BUMPED[:]
            self.comm.all_reduce(xs)
            self.assertEqual(self.api.launches(),
                             [(0, 1, [100], [p[0], p[0], p[1], p[1]], 0xABC)])
            # An in-place op: the kernel bumps its tensors' version counters.
            self.assertEqual(self.torch.BUMPED, xs)
            self.comm.load(REVERSE)(x=xs, y=xs)  # in place: x is y's list
            self.assertEqual(self.api.launches(),
                             [(0, 0, [100], [p[0], p[0], p[1], p[1]], 0xABC)])
        finally:
            self.torch.COMPILING[0] = False


if __name__ == "__main__":
    unittest.main()
