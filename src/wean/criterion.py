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
    def __init__(self, model: nn.Module, label_smoothing: float = 0.0, bf16: bool = False):
        self.model = model
        self.with_spm = model.spm is not None
        self.bf16 = bf16  # the forward pass under bfloat16 autocast; the losses are still taken in fp32
        self.cross_entropy = nn.CrossEntropyLoss(ignore_index=IGNORE, reduction="sum", label_smoothing=label_smoothing)

    def training_batch(self, examples: Sequence[Example]) -> Batch:
        return collate(examples, extend_to_source=self.with_spm)

    def training_loss(self, batch: Batch) -> torch.Tensor:
        """The summed loss the optimizer minimises (divide by the batch's target tokens)."""
        return self._loss(batch, self.with_spm, self.bf16)

    def validation_loss(self, batch: Batch) -> torch.Tensor:
        """The summed cross-entropy on Y (a batch from :func:`wean.data.corpus.collate`)."""
        return self._loss(batch, False, False)

    def _loss(self, batch: Batch, with_spm: bool, bf16: bool) -> torch.Tensor:
        model = self.model
        with torch.autocast(batch.source.device.type, dtype=torch.bfloat16, enabled=bf16):
            output = model(batch.source, batch.source_lengths, batch.target_input)
            spm_loss = model.spm.loss(output.queries, batch.source, batch.source_lengths) if with_spm else 0.0
        logits, targets = output.logits, model.loss_targets(batch.target_output)
        return self.cross_entropy(logits.float().reshape(-1, logits.size(-1)), targets.reshape(-1)) + spm_loss
