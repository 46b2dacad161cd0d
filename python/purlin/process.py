"""One process per GPU: ``Communicator.from_process_group(group)``.

Each process is one rank of the C API's multi-process communicator
(``purlinCommInitRankCallbacks``, docs/multiprocess.md). Its bootstrap is
the torch.distributed group's store: every exchange purlin makes (creating
the communicator, allocating symmetric memory, registering a buffer,
creating a collective) is an all-gather of small blobs through store keys,
so it works with any backend (gloo, nccl) and needs no address or port of
its own. Calls take this rank's tensor alone (``comm.all_reduce(t)``), and
its buffers must be reachable by the peers: tensors of ``comm.empty``
(symmetric memory, ``purlinMemAlloc``) or tensors registered with
``comm.register(t)`` (the caching allocator's memory; registration maps the
peers' allocations once per allocation). Any other tensor goes through the
communicator's staging area in an eager call: it is copied in, the call
runs there, and the outputs are copied back (PURLIN_STAGING_BYTES, 32 MiB a
rank by default; a call that needs more raises PurlinError,
PURLIN_ERR_NOT_REGISTERED; docs/multiprocess.md). Under CUDA-graph capture
the call is captured with the tensor recorded, and
``comm.register_graph_buffers()`` after the capture registers what was
recorded (vLLM's way). Every call,
allocation and registration is collective: every rank makes it, in the
same order, with the same sizes.
"""
import ctypes
import zlib

import torch

from . import _cuda
from ._bootstrap import StoreBootstrap
from .cuda import CudaCommunicator
from .errors import PurlinError

_SEQ = {}  # group key -> communicators made over it in this process


class _Symmetric:
    """purlinMemAlloc memory as a torch tensor (__cuda_array_interface__)."""

    def __init__(self, ptr, shape, typestr):
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": typestr,
                                         "data": (ptr, False), "version": 3,
                                         "strides": None}


class ProcessCommunicator(CudaCommunicator):
    """This process's rank of a communicator whose ranks are processes."""

    def __init__(self, nranks, rank, device, bootstrap, target=None):
        self._boot = bootstrap
        self._rank = rank
        self._symmetric = {}  # data_ptr -> bytes, freed at close
        self._registered = {}  # data_ptr -> (bytes, tensor kept alive)
        super().__init__(nranks, device, target)
        self.local_ranks = 1
        self.first_rank = rank
        self.rank = rank

    @staticmethod
    def from_process_group(group=None, device=None, store=None, target=None):
        import torch.distributed as dist
        if not dist.is_initialized():
            raise RuntimeError("purlin.Communicator.from_process_group: call "
                               "torch.distributed.init_process_group first")
        group = group or dist.group.WORLD
        rank, size = dist.get_rank(group), dist.get_world_size(group)
        ranks = dist.get_process_group_ranks(group)
        if store is None:
            store = dist.distributed_c10d._get_default_store()
        key = zlib.crc32(",".join(map(str, ranks)).encode())
        n = _SEQ.get(key, 0)
        _SEQ[key] = n + 1
        if device is None:
            device = f"cuda:{torch.cuda.current_device()}"
        boot = StoreBootstrap(store, rank, size, f"purlin/{key:08x}/{n}")
        return ProcessCommunicator(size, rank, device, boot, target)

    def _create_handle(self):
        h = ctypes.c_void_p()
        st = _cuda.lib().purlinCommInitRankCallbacks(
            ctypes.byref(h), self.nranks, self._rank, self.index,
            ctypes.byref(self._boot.callbacks))
        self._check_boot(st, "purlinCommInitRankCallbacks")
        return h

    def _check_boot(self, st, what):
        if st and self._boot.error is not None:
            e, self._boot.error = self._boot.error, None
            raise PurlinError(f"{what}: the store's all-gather failed: {e!r}",
                              "PURLIN_ERR_BOOTSTRAP") from e
        _cuda.check(st, what)

    # -- memory ------------------------------------------------------------
    def empty(self, shape, dtype=torch.float32):
        """A tensor of symmetric memory (purlinMemAlloc: zeroed, mapped by
        every peer). Collective: every rank asks for the same shape and
        dtype. Freed by close(); do not use it afterwards."""
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        elem = torch.empty((), dtype=dtype).element_size()
        n = 1
        for d in shape:
            n *= int(d)
        nbytes = max(1, n * elem)
        p = ctypes.c_void_p()
        with torch.cuda.device(self.index):
            self._check_boot(_cuda.lib().purlinMemAlloc(self.handle, nbytes,
                                                         ctypes.byref(p)),
                             "purlinMemAlloc")
        self._symmetric[p.value] = nbytes
        # Bytes, then viewed as dtype: the interface has no bf16 or fp8.
        raw = torch.as_tensor(_Symmetric(p.value, (nbytes,), "|u1"), device=self.tdevice)
        return raw[:n * elem].view(dtype).view(shape)

    def register(self, tensor):
        """Makes an ordinary CUDA tensor (the caching allocator's, or any
        cudaMalloc memory) usable in calls: the peers map its allocation.
        Collective, same size on every rank; the tensor is kept alive until
        deregister() or close(). Register before capturing a CUDA graph that
        uses it."""
        if not isinstance(tensor, torch.Tensor) or tensor.device != self.tdevice:
            raise ValueError(f"register: takes a tensor on {self.device}")
        ptr, nbytes = tensor.data_ptr(), tensor.numel() * tensor.element_size()
        if ptr in self._registered:
            return tensor
        self._check_boot(_cuda.lib().purlinCommRegister(self.handle, ptr, max(1, nbytes)),
                         "purlinCommRegister")
        self._registered[ptr] = (nbytes, tensor)
        return tensor

    def register_graph_buffers(self):
        """After capturing CUDA graphs (``torch.cuda.graph``) whose calls use
        tensors that are neither symmetric nor registered (the graph pool's,
        allocated during the capture): registers them, in capture order, and
        makes the captured calls ready (purlinCommRegisterGraphBuffers,
        vLLM's register_graph_buffers). Collective: every rank calls it after
        capturing the same calls on buffers of the same sizes
        (PURLIN_ERR_MISMATCH otherwise). A replay before it does nothing and
        comm.check() then raises PURLIN_ERR_NOT_REGISTERED once. The buffers
        stay registered until close()."""
        torch.cuda.synchronize(self.index)
        with torch.cuda.device(self.index):
            self._check_boot(_cuda.lib().purlinCommRegisterGraphBuffers(self.handle),
                             "purlinCommRegisterGraphBuffers")

    def deregister(self, tensor):
        """Undoes register (collective)."""
        ptr = tensor.data_ptr()
        if ptr not in self._registered:
            raise ValueError("deregister: the tensor is not registered")
        torch.cuda.synchronize(self.index)
        self._check_boot(_cuda.lib().purlinCommDeregister(self.handle, ptr),
                         "purlinCommDeregister")
        del self._registered[ptr]

    def _release(self):
        L = _cuda.lib()
        for ptr in list(self._registered):
            L.purlinCommDeregister(self.handle, ptr)
        self._registered = {}
        for ptr in list(self._symmetric):
            L.purlinMemFree(self.handle, ptr)
        self._symmetric = {}

    def abort(self):
        """After a timeout or a lost peer: frees what this process holds
        without waiting for any peer (purlinCommAbort)."""
        if self.handle is None:
            return
        _cuda.lib().purlinCommAbort(self.handle)
        from .cuda import _COMMS
        _COMMS.pop(self.id, None)
        self.handle = None
