"""The training loss, and the batches it is taken on.

Cross-entropy summed over the target tokens (with ``training.label_smoothing``), on the
log-probabilities the model's output layer gives (``model.log_probs``), compared with the targets
it can generate (WEAN's ``candidates`` map the others to <unk>), plus the model's auxiliary losses
(SPM's bag-of-words term, the coverage loss: :class:`wean.models.interfaces.AuxiliaryLoss`). An
auxiliary loss may continue the targets (SPM's Y'), so the criterion also decides how training
batches are padded.

The validation loss is the plain cross-entropy on Y: comparable across models with and without
auxiliary losses.
"""

from __future__ import annotations

from typing import Sequence

import torch
from torch import nn
from torch.nn import functional as F

from wean.data.corpus import IGNORE, Batch, Example, collate


def cross_entropy(log_probs: torch.Tensor, targets: torch.Tensor, label_smoothing: float = 0.0) -> torch.Tensor:
    """Summed cross-entropy of (tokens, classes) normalized ``log_probs`` with ``targets``
    (IGNORE: no loss), label smoothing spreading ``label_smoothing`` of each target's mass
    uniformly over the classes: the terms, in the order, of PyTorch's cross_entropy after its
    log_softmax, so a vocabulary layer's loss is what cross_entropy of its logits was."""
    nll = F.nll_loss(log_probs, targets, ignore_index=IGNORE, reduction="sum")
    if not label_smoothing:
        return nll
    trained = (targets != IGNORE).unsqueeze(1)
    smooth = -log_probs.sum(-1, keepdim=True).masked_fill(~trained, 0.0).sum()
    return (1 - label_smoothing) * nll + smooth * (label_smoothing / log_probs.size(-1))


class Criterion:
    def __init__(self, model: nn.Module, label_smoothing: float = 0.0, autocast: torch.dtype | None = None,
                 training_forward: nn.Module | None = None):
        """``autocast``: the dtype the training forward pass runs in (bf16, fp16; None: fp32); the
        losses are still taken in fp32. ``training_forward``: what the training loss calls
        instead of ``model`` (its DistributedDataParallel wrapper, which all-reduces gradients)."""
        self.model = model
        self.training_forward = training_forward or model
        self.auxiliary = model.losses()
        self.label_smoothing = label_smoothing
        self.autocast = autocast

    def training_batch(self, examples: Sequence[Example]) -> Batch:
        return collate(examples, self.model.extend_target if self.auxiliary else None)

    def target_tokens(self, examples: Sequence[Example]) -> int:
        """The target tokens :meth:`training_batch` would hold for ``examples``, without building it."""
        if self.auxiliary:
            return sum(len(self.model.extend_target(len(e.source), e.target)) for e in examples)
        return sum(len(e.target) for e in examples)

    def training_loss(self, batch: Batch) -> torch.Tensor:
        """The summed loss the optimizer minimises (divide by the batch's target tokens)."""
        return self._loss(batch, self.auxiliary, self.autocast, self.training_forward)

    def validation_loss(self, batch: Batch) -> torch.Tensor:
        """The summed cross-entropy on Y (a batch from :func:`wean.data.corpus.collate`)."""
        return self._loss(batch, [], None, self.model)

    def _loss(self, batch: Batch, auxiliary: list, autocast: torch.dtype | None, forward: nn.Module) -> torch.Tensor:
        model = self.model
        with torch.autocast(batch.source.device.type, dtype=autocast or torch.bfloat16, enabled=autocast is not None):
            output = forward(batch.source, batch.source_lengths, batch.target_input)
            extra = 0.0
            if auxiliary:
                source, mask = model.in_vocabulary(batch.source), batch.target_output != IGNORE
                for loss in auxiliary:
                    extra = extra + loss.loss(output, source, batch.source_lengths, mask)
        log_probs, targets = output.log_probs, model.loss_targets(batch.target_output)
        return cross_entropy(log_probs.reshape(-1, log_probs.size(-1)), targets.reshape(-1), self.label_smoothing) + extra
