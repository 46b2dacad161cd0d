"""purlinBootstrapCallbacks over a key-value store (torch.distributed's
Store, or anything with set, get and delete_key): the bootstrap of
process.py's communicators. No torch here, so the host tests run it."""
import ctypes

from . import _cuda
from .errors import PurlinError


class StoreBootstrap:
    """purlinBootstrapCallbacks over a torch.distributed store: an
    all-gather is one key per rank and exchange (``PREFIX/N/RANK``); a rank
    deletes its key of exchange N-1 once it has read every key of N (by then
    every rank has finished N-1)."""

    def __init__(self, store, rank, size, prefix):
        self.store, self.rank, self.size, self.prefix = store, rank, size, prefix
        self.seq = 0
        self.error = None
        self._allgather = _cuda.ALLGATHER(self._gather)
        self.callbacks = _cuda.BootstrapCallbacks(self._allgather, _cuda.BARRIER(), None)

    def _key(self, n, r):
        return f"{self.prefix}/{n}/{r}"

    def _gather(self, send, recv, nbytes, _ctx):
        try:
            n = self.seq
            self.seq += 1
            mine = ctypes.string_at(send, nbytes) if nbytes else b""
            self.store.set(self._key(n, self.rank), mine)
            for r in range(self.size):
                v = mine if r == self.rank else self.store.get(self._key(n, r))
                if len(v) != nbytes:
                    raise PurlinError(f"bootstrap: rank {r} gave {len(v)} bytes in "
                                      f"exchange {n}, this rank {nbytes}")
                if nbytes:
                    ctypes.memmove(recv + r * nbytes, v, nbytes)
            if n > 0:
                try:
                    self.store.delete_key(self._key(n - 1, self.rank))
                except Exception:  # a store without deletion keeps the key
                    pass
            return 0
        except BaseException as e:  # reported by the C call that asked
            self.error = e
            return 1
