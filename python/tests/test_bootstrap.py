"""The store bootstrap of Communicator.from_process_group (one process per
GPU) without a GPU or torch: ranks on threads call the all-gather callback
the C runtime would call, through a store with torch.distributed's
set/get/delete_key contract (get blocks until the key exists).

    PYTHONPATH=python python3 -m unittest python/tests/test_bootstrap.py
"""
import ctypes
import threading
import unittest

from purlin._bootstrap import StoreBootstrap


class FakeStore:
    def __init__(self):
        self.kv, self.cv = {}, threading.Condition()

    def set(self, k, v):
        with self.cv:
            self.kv[k] = bytes(v)
            self.cv.notify_all()

    def get(self, k, timeout=10.0):
        with self.cv:
            if not self.cv.wait_for(lambda: k in self.kv, timeout):
                raise TimeoutError(f"key {k} never came")
            return self.kv[k]

    def delete_key(self, k):
        with self.cv:
            return self.kv.pop(k, None) is not None


def run_ranks(R, body):
    errors, threads = [], []

    def wrap(r):
        try:
            body(r)
        except BaseException as e:  # reported in the main thread
            errors.append((r, e))

    for r in range(R):
        threads.append(threading.Thread(target=wrap, args=(r,)))
        threads[-1].start()
    for t in threads:
        t.join(30)
    return errors


class StoreBootstrapTest(unittest.TestCase):
    def test_allgather_rounds(self):
        R, store = 5, FakeStore()
        got = {}

        def body(r):
            b = StoreBootstrap(store, r, R, "p")
            cb = b.callbacks.allgather  # what the C runtime calls
            for n, size in enumerate((8, 0, 1, 4096)):
                send = ctypes.create_string_buffer(bytes((r * 7 + n + i) % 251
                                                         for i in range(size)), size)
                recv = ctypes.create_string_buffer(b"\xee" * (size * R + 1), size * R + 1)
                rc = cb(ctypes.addressof(send), ctypes.addressof(recv), size, None)
                self.assertEqual(rc, 0, b.error)
                got[(r, n)] = recv.raw

        self.assertEqual(run_ranks(R, body), [])
        for r in range(R):
            for n, size in enumerate((8, 0, 1, 4096)):
                want = b"".join(bytes((q * 7 + n + i) % 251 for i in range(size))
                                for q in range(R)) + b"\xee"
                self.assertEqual(got[(r, n)], want, (r, n))
        # Only the last exchange's keys are left in the store.
        self.assertEqual(sorted(store.kv), [f"p/3/{q}" for q in range(R)])

    def test_size_mismatch_is_an_error(self):
        R, store = 2, FakeStore()
        rcs, errs = {}, {}

        def body(r):
            b = StoreBootstrap(store, r, R, "q")
            size = 8 if r == 0 else 16
            send = ctypes.create_string_buffer(size)
            recv = ctypes.create_string_buffer(size * R)
            rcs[r] = b.callbacks.allgather(ctypes.addressof(send),
                                           ctypes.addressof(recv), size, None)
            errs[r] = b.error

        self.assertEqual(run_ranks(R, body), [])
        self.assertEqual(rcs, {0: 1, 1: 1})
        self.assertIn("rank 1 gave 16 bytes in exchange 0, this rank 8", str(errs[0]))

    def test_store_failure_is_reported(self):
        class Broken(FakeStore):
            def get(self, k, timeout=0):
                raise TimeoutError(f"store timed out waiting for {k}")

        b = StoreBootstrap(Broken(), 0, 2, "z")
        send, recv = ctypes.create_string_buffer(4), ctypes.create_string_buffer(8)
        rc = b.callbacks.allgather(ctypes.addressof(send), ctypes.addressof(recv), 4, None)
        self.assertEqual(rc, 1)
        self.assertIsInstance(b.error, TimeoutError)
        self.assertIn("z/0/1", str(b.error))


if __name__ == "__main__":
    unittest.main()
