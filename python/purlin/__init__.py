"""purlin: collectives written in the .purlin language, compiled ahead of
time, run on numpy arrays (host threads) and torch tensors (CUDA).

    import purlin
    comm = purlin.Communicator.local(4, device="cpu")
    comm.all_reduce([x0, x1, x2, x3])                 # in place
    coll = comm.load("my.purlin")                     # any collective
    coll(x=[...], y=[...], root=3)

docs/python.md in the repository describes the package."""
from ._compile import Compiled, compile, load_compiled
from .collective import Collective
from .communicator import Communicator, STANDARD, FUSED
from .errors import CompileError, PurlinError

__all__ = ["compile", "load_compiled", "Compiled", "Communicator",
           "Collective", "PurlinError", "CompileError", "STANDARD", "FUSED"]
__version__ = "0.1.0"
