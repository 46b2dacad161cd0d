"""Communicators: ranks that run collectives together.

``Communicator.local(nranks, device)`` makes virtual ranks in this process:
``device="cpu"`` runs collectives compiled for the host target on threads
(numpy arrays, CPU tensors), ``device="cuda:N"`` runs them on that GPU
(torch tensors; see cuda.py). Every call takes one array per rank, in a
list. The standard calls follow torch.distributed's names and argument
order and are backed by the collectives of the repository's examples/.
"""
import os

from . import _compile, _paths
from .collective import Collective

# The standard calls' collectives (examples/NAME.purlin).
STANDARD = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all",
            "broadcast", "reduce", "gather", "scatter")
# The fused all-reduce + residual + RMSNorm forms (comm.all_reduce_rmsnorm).
FUSED = ("all_reduce_rmsnorm", "all_reduce_rmsnorm_gemma", "all_reduce_rmsnorm_nores",
         "all_reduce_rmsnorm_fp8")


def examples_dir():
    """The repository's examples/: beside the build's sources, else beside
    this package (an editable install or PYTHONPATH=python)."""
    cands = [os.environ.get("PURLIN_EXAMPLES"),
             os.path.join(_paths.paths().get("source_dir") or "", "examples"),
             os.path.join(os.path.dirname(os.path.dirname(_paths._HERE)), "examples")]
    for c in cands:
        if c and os.path.isfile(os.path.join(c, "all_reduce.purlin")):
            return c
    raise FileNotFoundError("the standard collectives (examples/*.purlin) are "
                            "not found; set PURLIN_EXAMPLES")


_OP_NAMES = ("sum", "prod", "min", "max", "avg")


def op_name(op):
    """"sum", torch.distributed.ReduceOp.SUM, ... as purlin's op name."""
    if op.__class__ is str and op in _OP_NAMES:  # one already: every eager call
        return op
    s = str(op).lower().rsplit(".", 1)[-1]
    if s not in _OP_NAMES:
        raise ValueError(f"op {op!r} is not a reduction purlin has "
                         "(sum, prod, min, max, avg)")
    return s


class Communicator:
    """Ranks of one process; see Communicator.local."""

    def __init__(self, nranks, device, target):
        if not 1 <= int(nranks) <= 32:
            raise ValueError(f"nranks={nranks}: a communicator has 1 to 32 ranks")
        self.nranks = int(nranks)
        # The ranks this process runs: all of them (virtual ranks), or one
        # (one process per GPU: ProcessCommunicator), from first_rank on.
        # A call takes one array per local rank.
        self.local_ranks = self.nranks
        self.first_rank = 0
        self.device = device
        self.target = target
        self._std = {}
        self._eps = {}  # (eps, dtype) -> the eps buffer of every local rank

    @staticmethod
    def local(nranks, device="cpu", target=None):
        """`nranks` virtual ranks in this process on `device` ("cpu": host
        threads; "cuda", "cuda:N": that GPU, collectives compiled for
        `target`, default the GPU's generation)."""
        dev = str(device)
        if dev == "cpu":
            return HostCommunicator(nranks)
        if dev.startswith("cuda"):
            from .cuda import CudaCommunicator
            return CudaCommunicator(nranks, dev, target)
        raise ValueError(f"device {device!r}: purlin runs on 'cpu' or 'cuda[:N]'")

    @staticmethod
    def from_process_group(group=None, device=None, store=None, target=None):
        """This process's rank of a communicator of one process per GPU,
        over a torch.distributed group (default: the world). Collective:
        every process of the group calls it. The bootstrap goes through the
        group's store (default: the one init_process_group made; any
        backend, gloo or nccl), so purlin needs no rendezvous of its own.
        `device`: this process's GPU (default torch's current device).
        Calls then take this rank's tensor alone: ``comm.all_reduce(t)``."""
        try:
            import torch.distributed  # noqa: F401
        except ImportError as e:
            raise ImportError("purlin.Communicator.from_process_group needs torch "
                              "(torch.distributed and CUDA)") from e
        from .process import ProcessCommunicator
        return ProcessCommunicator.from_process_group(group, device, store, target)

    # -- collectives -----------------------------------------------------
    def compile(self, path_or_source, **bind):
        return _compile.compile(path_or_source, target=self.target, **bind)

    def load(self, path_or_compiled, **bind):
        """A collective on this communicator: a path to a .purlin file, its
        text, or what purlin.compile returned (bindings by keyword as for
        purlin.compile)."""
        c = path_or_compiled
        if not isinstance(c, _compile.Compiled):
            c = self.compile(c, **bind)
        elif c.target != self.target:
            raise ValueError(f"'{c.name}' is compiled for {c.target}; this "
                             f"communicator runs {self.target}")
        return Collective(self, self._load_impl(c), c)

    def standard(self, name):
        """The standard collective `name` (examples/NAME.purlin), loaded once."""
        coll = self._std.get(name)
        if coll is None:
            coll = self._std[name] = self.load(
                os.path.join(examples_dir(), name + ".purlin"))
        return coll

    def traced_call(self, coll, kwargs):
        """True when the call went through a torch custom op (CUDA, under
        torch.compile); the host target never traces."""
        return False

    def check_array(self, info, what, rank):
        if not info.contiguous:
            raise ValueError(f"{what} is not contiguous")

    # -- torch.distributed's calls, one array per rank ------------------
    def all_reduce(self, tensors, op="sum"):
        """In place: every rank's tensor becomes the reduction of all."""
        self.standard("all_reduce")(x=tensors, y=tensors, op=op_name(op))

    def all_gather_into_tensor(self, output, input):
        """output[r] (R*C) = the ranks' inputs (C each), in rank order."""
        self.standard("all_gather")(x=input, y=output)

    def reduce_scatter_tensor(self, output, input, op="sum"):
        """output[r] (C) = part r of the reduction of the inputs (R*C)."""
        self.standard("reduce_scatter")(x=input, y=output, op=op_name(op))

    def all_to_all_single(self, output, input):
        """Part d of rank s's input lands as part s of rank d's output."""
        self.standard("all_to_all")(x=input, y=output)

    def broadcast(self, tensors, src=0):
        """In place: every rank's tensor becomes rank src's."""
        self.standard("broadcast")(x=tensors, y=tensors, root=src)

    def reduce(self, tensors, dst=0, op="sum"):
        """In place: rank dst's tensor becomes the reduction; others keep
        theirs."""
        self.standard("reduce")(x=tensors, y=tensors, root=dst, op=op_name(op))

    def gather(self, output, input, dst=0):
        """output[dst] (R*C) = the ranks' inputs in rank order; the other
        ranks' outputs are not written."""
        self.standard("gather")(x=input, y=output, root=dst)

    def scatter(self, output, input, src=0):
        """output[r] (C) = part r of rank src's input (R*C)."""
        self.standard("scatter")(x=input, y=output, root=src)

    def all_reduce_rmsnorm(self, x, residual, weight, eps, out,
                           residual_out=None, gemma=False, scale=None):
        """Fused all-reduce + residual add + RMSNorm, one collective
        (examples/all_reduce_rmsnorm*.purlin; docs/language.md, "Epilogues"):
        per row of H elements, h = (sum of the ranks' x) + residual,
        residual_out = h, out = h / sqrt(mean(h*h) + eps) * weight
        (``(1 + weight)`` with gemma=True), in f32 with one rounding per
        store. Per rank: x, residual, out, residual_out of N*H elements
        (e.g. [N, H]), weight of H; N and H come from the sizes.
        residual_out defaults to residual (updated in place, as vLLM's
        fused_add_rms_norm does; that costs nothing: the call takes the
        plans of a call out of place, spec/Epilogue.h's epilogueLocalPair,
        while ``out`` over ``x`` takes the slower in-place plans);
        residual=None normalizes the sum alone
        (residual_out is then not written). With ``scale`` (a float), out
        is FP8 (f8e4m3: torch.float8_e4m3fn) and receives the normalized
        value divided by scale, rounded once and saturated
        (examples/all_reduce_rmsnorm_fp8.purlin; with a residual, not
        Gemma's). On one process per GPU every buffer must be purlin memory
        or registered, as for any call."""
        like = x[0] if isinstance(x, (list, tuple)) else x
        key = (float(eps), str(like.dtype))
        e = self._eps.get(key)
        if e is None:
            e = self._eps[key] = self._scalar_buffers(float(eps), like)
        if residual is None:
            if gemma or residual_out is not None:
                raise ValueError("all_reduce_rmsnorm: without a residual there is "
                                 "no residual_out and no Gemma form")
            self.standard("all_reduce_rmsnorm_nores")(x=x, w=weight, eps=e, y=out)
            return
        res_out = residual if residual_out is None else residual_out
        if scale is not None:
            if gemma:
                raise ValueError("all_reduce_rmsnorm: the FP8 form (scale=) has "
                                 "no Gemma variant")
            skey = (float(scale), "f32")
            s = self._eps.get(skey)
            if s is None:
                s = self._eps[skey] = self._scalar_buffers(float(scale), self._f32())
            self.standard("all_reduce_rmsnorm_fp8")(x=x, res=residual, w=weight, eps=e,
                                                    scale=s, q=out, res_out=res_out)
            return
        name = "all_reduce_rmsnorm_gemma" if gemma else "all_reduce_rmsnorm"
        self.standard(name)(x=x, res=residual, w=weight, eps=e, y=out, res_out=res_out)

    def _f32(self):
        """An empty f32 array of this communicator's kind (for a dtype)."""
        import numpy as np
        return np.zeros(0, dtype=np.float32)

    def _scalar_buffers(self, value, like):
        """One 1-element buffer per local rank holding `value`, of like's
        dtype and kind (numpy here; torch tensors on a GPU communicator)."""
        import numpy as np
        return [np.full(1, value, dtype=like.dtype) for _ in range(self.local_ranks)]


class HostCommunicator(Communicator):
    """Virtual ranks on host threads: collectives compiled for the host."""

    def __init__(self, nranks):
        super().__init__(nranks, "cpu", "host")

    def _load_impl(self, compiled):
        from ._host import HostColl
        return HostColl(compiled)

    def check_array(self, info, what, rank):
        if info.device != "cpu":
            raise ValueError(f"{what} is on {info.device}; this communicator "
                             "runs on the host (cpu)")
        super().check_array(info, what, rank)
