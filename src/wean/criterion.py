"""The training loss, and the batches it is taken on.

Cross-entropy summed over the target tokens (with ``training.label_smoothing``), compared with the
targets the output layer can generate (WEAN's ``candidates`` map the others to <unk>), plus, for
a model with the source-side prediction module, SPM's bag-of-words term (Kiyono et al. 2018; the
decisions are in :mod:`wean.models.spm`). SPM trains on targets continued with <pad> up to the
source length (Y'), so the criterion also decides how training batches are padded.

The validation loss is the plain cross-entropy on Y: comparable across models with and without SPM.
"""

from __future__ import annotations

from typing import Sequence

import torch
from torch import nn

from wean.data.corpus import IGNORE, Batch, Example, collate


class Criterion:
    def __init__(self, model: nn.Module, label_smoothing: float = 0.0, autocast: torch.dtype | None = None,
                 training_forward: nn.Module | None = None):
        """``autocast``: the dtype the training forward pass runs in (bf16, fp16; None: fp32); the
        losses are still taken in fp32. ``training_forward``: what the training loss calls
        instead of ``model`` (its DistributedDataParallel wrapper, which all-reduces gradients)."""
        self.model = model
        self.training_forward = training_forward or model
        self.with_spm = model.spm is not None
        self.autocast = autocast
        self.cross_entropy = nn.CrossEntropyLoss(ignore_index=IGNORE, reduction="sum", label_smoothing=label_smoothing)

    def training_batch(self, examples: Sequence[Example]) -> Batch:
        return collate(examples, extend_to_source=self.with_spm)

    def target_tokens(self, examples: Sequence[Example]) -> int:
        """The target tokens :meth:`training_batch` would hold for ``examples``, without building it."""
        if self.with_spm:  # targets continued with <pad> up to the source length
            return sum(max(len(e.target), len(e.source)) for e in examples)
        return sum(len(e.target) for e in examples)

    def training_loss(self, batch: Batch) -> torch.Tensor:
        """The summed loss the optimizer minimises (divide by the batch's target tokens)."""
        return self._loss(batch, self.with_spm, self.autocast, self.training_forward)

    def validation_loss(self, batch: Batch) -> torch.Tensor:
        """The summed cross-entropy on Y (a batch from :func:`wean.data.corpus.collate`)."""
        return self._loss(batch, False, None, self.model)

    def _loss(self, batch: Batch, with_spm: bool, autocast: torch.dtype | None, forward: nn.Module) -> torch.Tensor:
        model = self.model
        with torch.autocast(batch.source.device.type, dtype=autocast or torch.bfloat16, enabled=autocast is not None):
            output = forward(batch.source, batch.source_lengths, batch.target_input)
            spm_loss = model.spm.loss(output.queries, batch.source, batch.source_lengths) if with_spm else 0.0
        logits, targets = output.logits, model.loss_targets(batch.target_output)
        return self.cross_entropy(logits.float().reshape(-1, logits.size(-1)), targets.reshape(-1)) + spm_loss
