"""One process per GPU from Python: 2, 4 and 8 processes on this one GPU
(under MPS when tools/python-gpu.sh started its daemon), each a rank of
purlin.Communicator.from_process_group over a gloo group: every standard
call and a user-written collective with symmetric (comm.empty) and
registered torch buffers, counts 0 .. 65537, checked bit for bit against a
CPU reference; a CUDA graph replayed 1,000 times in each process; a CUDA
graph whose tensor is allocated during the capture, registered after it
(comm.register_graph_buffers), replayed 1,000 times; an unregistered
tensor through the staging area, and one past its size refused. Sharing one GPU proves correctness, not speed.

    PURLIN_BUILD_DIR=build-gpu PYTHONPATH=python python3 -m pytest python/tests/gpu/test_mp.py
"""
import os
import sys

import pytest
import torch
import torch.multiprocessing as mp

import purlin

HERE = os.path.dirname(os.path.abspath(__file__))


def _entry(rank, R, init_file, outdir):
    sys.path[:0] = [HERE, os.path.dirname(HERE)]  # mp_worker, collectives
    import mp_worker
    mp_worker.main(rank, R, init_file, outdir)


@pytest.mark.parametrize("R", [2, 4, 8])
def test_processes(R, tmp_path):
    init = tmp_path / "init"
    mp.spawn(_entry, args=(R, str(init), str(tmp_path)), nprocs=R, join=True)
    lines = [(tmp_path / f"rank-{r}.txt").read_text() for r in range(R)]
    report = os.environ.get("PURLIN_MP_REPORT")
    if report:
        with open(report, "a") as fh:
            fh.writelines(lines)
    for r, line in enumerate(lines):
        assert line.startswith(f"rank {r} of {R}:"), line
    print("".join(lines))


def test_not_initialized():
    import torch.distributed as dist
    if dist.is_initialized():
        pytest.skip("a process group exists")
    with pytest.raises(RuntimeError, match="init_process_group first"):
        purlin.Communicator.from_process_group()
