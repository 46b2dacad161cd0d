"""The standard calls as torch custom ops (namespace ``purlin``), with fake
implementations, so that ``torch.compile(fullgraph=True)`` traces them
without graph breaks; a communicator is named by its id.

    purlin::all_reduce_(Tensor(a!)[] tensors, int comm, str op) -> ()
    purlin::broadcast_(Tensor(a!)[] tensors, int comm, int src) -> ()
    purlin::reduce_(Tensor(a!)[] tensors, int comm, int dst, str op) -> ()
    purlin::collective(Tensor[] inputs, Tensor(a!)[] outputs, int comm,
                       str name, int root, str op) -> ()
"""
from typing import List

_done = False


def register():
    global _done
    if _done:
        return
    _done = True
    import torch
    from .cuda import _COMMS

    @torch.library.custom_op("purlin::all_reduce_", mutates_args=("tensors",))
    def all_reduce_(tensors: List[torch.Tensor], comm: int, op: str) -> None:
        _COMMS[comm].run_standard("all_reduce", tensors, tensors, 0, op)

    @all_reduce_.register_fake
    def _(tensors, comm, op):
        return None

    @torch.library.custom_op("purlin::broadcast_", mutates_args=("tensors",))
    def broadcast_(tensors: List[torch.Tensor], comm: int, src: int) -> None:
        _COMMS[comm].run_standard("broadcast", tensors, tensors, src, "sum")

    @broadcast_.register_fake
    def _(tensors, comm, src):
        return None

    @torch.library.custom_op("purlin::reduce_", mutates_args=("tensors",))
    def reduce_(tensors: List[torch.Tensor], comm: int, dst: int, op: str) -> None:
        _COMMS[comm].run_standard("reduce", tensors, tensors, dst, op)

    @reduce_.register_fake
    def _(tensors, comm, dst, op):
        return None

    @torch.library.custom_op("purlin::collective", mutates_args=("outputs",))
    def collective(inputs: List[torch.Tensor], outputs: List[torch.Tensor],
                   comm: int, name: str, root: int, op: str) -> None:
        _COMMS[comm].run_standard(name, inputs, outputs, root, op)

    @collective.register_fake
    def _(inputs, outputs, comm, name, root, op):
        return None
