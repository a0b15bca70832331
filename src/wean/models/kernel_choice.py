"""``kernels: auto`` (the default): the faster of oneDNN's and PyTorch's float32 products for one
model on this machine, measured rather than guessed from the CPU's vendor. On a 2-core AMD EPYC
oneDNN won beam search by 1.25x; on a 2-core Xeon with AMX PyTorch's own products won it by
1.05-1.08x and training by 1.05x (results/bench-peers-kernels, results/bench-peers-xeon; issue 94).

The measure is the model's own work: a teacher-forced batch of sentences (16 of 20 tokens for
inference; for training, as many as a training batch holds, since the decoder's per-step products
grow with it, of the run's mean source and target lengths) through the whole model, forward only
for inference, forward and backward for training (of the loss the trainer hands in, as its run
takes it under each kernel; without one, the mean log-probability), each kernel six times in ABBA
order (a machine whose speed drifts favours neither), the median kept: the two are often a few
per cent apart, about what one timing varies by. It takes a few seconds for the models here and
is done once: the choice is cached in ``kernels.json`` under ``$WEAN_CACHE_DIR`` (else
``$XDG_CACHE_HOME/wean``, else ``~/.cache/wean``), keyed by the CPU, PyTorch's version, the code of
the kernels, of the deferred gradients and of this measure, the threads, the batch, the training
setting the trainer names (precision, label smoothing) and the model's shapes. Where oneDNN cannot
apply (a PyTorch without it, a GPU, weights not float32) the choice is PyTorch's own without
measuring. Measuring leaves the model's weights, gradients, mode and the random state as it found
them.
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn

from wean.errors import WeanError
from wean.models import deferred_gradients
from wean.models import kernels as kernel_module
from wean.textio import atomic_write_json, read_json

WORKLOADS = ("inference", "training")
ROUNDS = 6  # per kernel, in ABBA order
BATCH, LENGTH = 16, 20


def cache_path() -> Path:
    if os.environ.get("WEAN_CACHE_DIR"):
        base = Path(os.environ["WEAN_CACHE_DIR"])
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "wean"
    return base / "kernels.json"


def _cpu_model() -> str:
    info = Path("/proc/cpuinfo")
    try:
        lines = info.read_text().splitlines() if info.exists() else []
    except OSError:
        lines = []
    return next((line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")), "unknown CPU")


def cache_key(model: nn.Module, workload: str, sentences: int = BATCH,
              lengths: tuple[int, int] = (LENGTH, LENGTH), setting: str = "") -> str:
    shapes = hashlib.sha256(json.dumps([[name, list(parameter.shape)] for name, parameter in model.named_parameters()])
                            .encode()).hexdigest()[:16]
    # the kernels' code and the model's own (a plug-in's too): a change to either may change which is faster
    modules = {getattr(sys.modules.get(type(module).__module__), "__file__", None) for module in model.modules()}
    sources = (kernel_module.__file__, deferred_gradients.__file__, __file__, *sorted(modules - {None}))
    code = hashlib.sha256(b"".join(Path(source).read_bytes() for source in sources)).hexdigest()[:12]
    return (f"{_cpu_model()} | torch {torch.__version__} | kernels {code} | {torch.get_num_threads()} threads"
            f" | {workload} {sentences}x{lengths[0]}x{lengths[1]}{f' ({setting})' if setting else ''} | {shapes}")


def onednn_can_apply(model: nn.Module) -> bool:
    parameters = list(model.parameters())
    return (kernel_module.ONEDNN and torch.backends.mkldnn.enabled and bool(parameters)
            and all(p.device.type == "cpu" and p.dtype == torch.float32 for p in parameters))


def _batch(model: nn.Module, sentences: int, lengths: tuple[int, int] = (LENGTH, LENGTH)
           ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Random word ids every embedding of the model holds (past the four special ones), sources
    and targets of ``lengths``."""
    sizes = [module.num_embeddings for module in model.modules() if isinstance(module, nn.Embedding)]
    high = max(5, min(sizes, default=5))
    generator = torch.Generator().manual_seed(0)
    source = torch.randint(4, high, (sentences, lengths[0]), generator=generator)
    target = torch.randint(4, high, (sentences, lengths[1]), generator=generator)
    return source, torch.full((sentences,), lengths[0], dtype=torch.long), target


# a training step's loss on the measure's batch under the kernels named: (model, source, lengths,
# target, kernels) -> a scalar to take the gradient of
TrainingLoss = Callable[[nn.Module, torch.Tensor, torch.Tensor, torch.Tensor, str], torch.Tensor]


def mean_log_probability(model: nn.Module, source, lengths, target, kernels: str) -> torch.Tensor:
    return model(source, lengths, target).log_probs.float().mean()


def _seconds(model: nn.Module, workload: str, batch, loss: TrainingLoss) -> float:
    source, lengths, target = batch
    started = time.perf_counter()
    if workload == "training":
        loss(model, source, lengths, target, kernel_module.kernels_of(model)).backward()
    else:
        with torch.no_grad():
            model(source, lengths, target)
    return time.perf_counter() - started


def measure(model: nn.Module, workload: str, sentences: int = BATCH,
            loss: TrainingLoss = mean_log_probability,
            lengths: tuple[int, int] = (LENGTH, LENGTH)) -> dict[str, float]:
    """Median seconds of the workload under each kernel on ``sentences`` of ``lengths`` (source,
    target; training: the gradient of ``loss``); the model is left as it was found."""
    was_training, rng, kernels_before = model.training, torch.get_rng_state(), kernel_module.kernels_of(model)
    grads = {name: p.grad for name, p in model.named_parameters()}
    model.train(workload == "training")
    batch = _batch(model, sentences, lengths)
    times: dict[str, list[float]] = {"onednn": [], "blas": []}
    try:
        for kernels in times:  # one warm-up each: first calls allocate and pick their code paths
            kernel_module.use_kernels(model, kernels)
            _seconds(model, workload, batch, loss)
        for round_index in range(ROUNDS):
            for kernels in ("onednn", "blas") if round_index % 2 == 0 else ("blas", "onednn"):
                kernel_module.use_kernels(model, kernels)
                times[kernels].append(_seconds(model, workload, batch, loss))
    finally:
        for name, parameter in model.named_parameters():
            parameter.grad = grads[name]
        model.train(was_training)
        torch.set_rng_state(rng)
        kernel_module.use_kernels(model, kernels_before)
    return {kernels: statistics.median(values) for kernels, values in times.items()}


def resolved(model: nn.Module, kernels: str, workload: str = "inference") -> str:
    """``kernels`` as onednn or blas: ``auto`` chosen for ``model`` here, the others as they are."""
    return choose_kernels(model, workload) if kernels == "auto" else kernels


def choose_kernels(model: nn.Module, workload: str = "inference", sentences: int = BATCH,
                   loss: TrainingLoss = mean_log_probability,
                   lengths: tuple[int, int] = (LENGTH, LENGTH), setting: str = "") -> str:
    """onednn or blas, whichever runs ``model``'s ``workload`` on batches of ``sentences`` of
    ``lengths`` (source, target) faster here (cached, see above); ``loss``: what a training step
    takes the gradient of; ``setting``: what else of the caller's decides the loss's cost, for
    the cache's key."""
    if workload not in WORKLOADS:
        raise ValueError(f"workload {workload!r}: one of {', '.join(WORKLOADS)}")
    if not onednn_can_apply(model):
        return "blas"
    path, key = cache_path(), cache_key(model, workload, sentences, lengths, setting)
    try:
        cache = read_json(path) if path.is_file() else {}
    except WeanError:  # a damaged cache is measured again and rewritten
        cache = {}
    if not isinstance(cache, dict):
        cache = {}
    if isinstance(cache.get(key), dict) and cache[key].get("kernels") in ("onednn", "blas"):
        return cache[key]["kernels"]
    seconds = measure(model, workload, sentences, loss, lengths)
    chosen = min(seconds, key=seconds.get)
    cache[key] = {"kernels": chosen, "seconds": seconds}
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(path, cache)
    except OSError:  # a read-only home: measured again next time, nothing lost
        pass
    return chosen
