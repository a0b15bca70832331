"""Training on several processes: PyTorch's ``torchrun`` starts them, ``DistributedDataParallel``
all-reduces their gradients, and this module holds what the trainer needs around that.

``torchrun --nproc_per_node N -m wean train CONFIG`` sets ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``,
``MASTER_ADDR`` and ``MASTER_PORT`` in each process; :func:`join` reads them and joins the process
group (gloo on CPUs, NCCL on GPUs). Without them, training is one process, as before.

How the work is split, and why:

- ``training.batch_size`` (and ``batch_tokens``) is the **global** batch of one update. Every
  process builds the same batch order (a function of the seed and the epoch) and takes every N-th
  sentence of each batch (:meth:`Distributed.shard`). The loss is normalized by the tokens of the
  whole batch, so the averaged gradient is the one-process gradient: the same config gives the
  same updates on any number of processes (to float rounding; dropout masks are drawn per process),
  the learning rate needs no scaling, and resume stays exact.
- Rank 0 alone writes (checkpoints, logs, TensorBoard, ``validations.json``) and alone validates;
  the others wait and receive its scores, so every process takes the same learning-rate and
  early-stopping decisions.
- A checkpoint keeps every process's random-number state: it resumes only with the same number of
  processes (a clear error otherwise).

The model directory must be on a file system every node sees (rank 0 writes the vocabulary there
before the others read it, and every process reads the checkpoint it resumes from). Every
parameter must take part in each update's loss (DDP waits for each one's gradient): wean's own
components do, and a plug-in that leaves one unused is named after the first update.
"""

from __future__ import annotations

import os
import socket
import time
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Sequence

import torch
import torch.distributed as dist

from wean.errors import WeanError

LAUNCHER_VARIABLES = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")


@dataclass(frozen=True)
class Distributed:
    rank: int = 0
    world_size: int = 1
    local_rank: int = 0

    @property
    def enabled(self) -> bool:
        return self.world_size > 1

    @property
    def main(self) -> bool:
        """Whether this process writes files and validates."""
        return self.rank == 0

    def shard(self, batch: Sequence) -> list:
        """This process's share of a global batch: every N-th sentence, starting at its rank
        (batches are sorted by length, so each share gets short and long ones alike). Empty
        when the batch has fewer sentences than there are processes."""
        return list(batch[self.rank :: self.world_size])

    def broadcast(self, value: Any) -> Any:
        """Rank 0's ``value``, on every process."""
        if not self.enabled:
            return value
        box = [value]
        dist.broadcast_object_list(box, src=0)
        return box[0]

    def gather(self, value: Any) -> list:
        """Every process's ``value``, in rank order, on every process."""
        if not self.enabled:
            return [value]
        values: list = [None] * self.world_size
        dist.all_gather_object(values, value)
        return values

    def total(self, value: float) -> float:
        """The sum of every process's ``value``."""
        if not self.enabled:
            return value
        total = torch.tensor([value], dtype=torch.float64)
        if dist.get_backend() == "nccl":
            total = total.cuda()
        dist.all_reduce(total)
        return float(total)

    def barrier(self) -> None:
        if self.enabled:
            dist.barrier()


def launched() -> bool:
    """Whether a launcher (torchrun) started this process as one of several."""
    return os.environ.get("WORLD_SIZE", "1") != "1"


def join(device: torch.device, timeout_s: float) -> tuple[Distributed, torch.device]:
    """This process's place among those torchrun started, and the device it trains on (its own GPU,
    ``cuda:LOCAL_RANK``, when training on GPUs). One process when no launcher set the variables."""
    if not launched():
        return Distributed(), device
    missing = [name for name in LAUNCHER_VARIABLES if name not in os.environ]
    if missing:
        raise WeanError(f"WORLD_SIZE is set but {', '.join(missing)} is not: start several processes "
                        "with torchrun (see the README, 'Training on several GPUs or machines')")
    try:
        rank, world_size, local_rank = (int(os.environ[name]) for name in ("RANK", "WORLD_SIZE", "LOCAL_RANK"))
    except ValueError:
        raise WeanError("RANK, WORLD_SIZE and LOCAL_RANK must be whole numbers") from None
    if not 0 <= rank < world_size:
        raise WeanError(f"RANK {rank} is not below WORLD_SIZE {world_size}")
    if device.type == "cuda":
        if local_rank >= torch.cuda.device_count():
            raise WeanError(f"LOCAL_RANK {local_rank}: this machine has {torch.cuda.device_count()} GPUs; "
                            "start at most that many processes per node (--nproc_per_node)")
        device = torch.device("cuda", local_rank)
        torch.cuda.set_device(device)
    if not dist.is_initialized():
        address = f"{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}"
        if rank > 0:  # in Python first: PyTorch's own failed connection logs pages of C++ frames
            _reach(os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"], timeout_s, rank, world_size)
        try:
            dist.init_process_group("nccl" if device.type == "cuda" else "gloo", rank=rank, world_size=world_size,
                                    timeout=timedelta(seconds=timeout_s))
        except Exception as error:  # the store's and gloo's errors: timeouts, refused connections
            reason = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise WeanError(
                f"process {rank} of {world_size} could not join the others at {address} within "
                f"{timeout_s:g} s (training.distributed_timeout): {reason}"
            ) from None
    return Distributed(rank, world_size, local_rank), device


def _reach(host: str, port: str, timeout_s: float, rank: int, world_size: int) -> None:
    """Return once rank 0's address takes connections; a WeanError after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            socket.create_connection((host, int(port)), timeout=max(0.1, min(5.0, deadline - time.monotonic()))).close()
            return
        except ValueError:
            raise WeanError(f"MASTER_PORT {port!r} is not a port number") from None
        except OSError as error:
            if time.monotonic() >= deadline:
                raise WeanError(
                    f"process {rank} of {world_size} could not reach process 0 at {host}:{port} within "
                    f"{timeout_s:g} s (training.distributed_timeout): {error.strerror or error}"
                ) from None
            time.sleep(0.2)


def leave() -> None:
    if dist.is_initialized():
        dist.destroy_process_group()
