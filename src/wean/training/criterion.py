"""The training loss, and the batches it is taken on.

Cross-entropy summed over the target tokens (with ``training.label_smoothing``), on the
log-probabilities the model's output layer gives (``model.log_probs``), compared with the targets
it can generate (WEAN's ``candidates`` map the others to <unk>); with ``loss_from_logits``, an
output layer that is a softmax over logits gives those, and the loss is taken from them in one
step (:func:`softmax_cross_entropy`), and one that scores the targets alone (the
pointer-generator) gives only their log-probabilities, without label smoothing (both while no
auxiliary loss asks for the model's output); plus
the model's auxiliary losses
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
from wean.models.interfaces import ModelOutput, OutputPart


def cross_entropy(log_probs: torch.Tensor, targets: torch.Tensor, label_smoothing: float = 0.0) -> torch.Tensor:
    """Summed cross-entropy of (tokens, classes) normalized ``log_probs`` with ``targets``
    (IGNORE: no loss), label smoothing spreading ``label_smoothing`` of each target's mass
    uniformly over the classes: the terms, in the order, of PyTorch's cross_entropy after its
    log_softmax, so a vocabulary layer's loss is what cross_entropy of its logits was. Classes a
    row gives probability 0 (log -inf: the words WEAN's ``candidates`` leave out) get none of that
    mass, as Joey NMT's smoothing leaves out <pad>: spread over them it made the loss infinite. So
    with candidates, a target keeps 1 - s and each of the K words a row can be given s / K."""
    nll = F.nll_loss(log_probs, targets, ignore_index=IGNORE, reduction="sum")
    if not label_smoothing:
        return nll
    trained = (targets != IGNORE).unsqueeze(1)
    return (1 - label_smoothing) * nll + _smoothing(log_probs, trained, label_smoothing)[0]


def _smoothing(log_probs: torch.Tensor, trained: torch.Tensor, label_smoothing: float) -> tuple[torch.Tensor, bool]:
    """The label-smoothing term over the ``trained`` (tokens, 1) rows: ``label_smoothing`` times
    minus the mean of each row's log-probabilities over the classes it can be given, summed; and
    whether some row has a class it cannot be given (a -inf, seen in its row's sum)."""
    row_sums = log_probs.sum(-1, keepdim=True)
    if not bool(torch.isneginf(row_sums).any()):
        smooth = -row_sums.masked_fill(~trained, 0.0).sum()
        return smooth * (label_smoothing / log_probs.size(-1)), False
    impossible = torch.isneginf(log_probs)
    possible = (~impossible).sum(-1, keepdim=True).clamp_min(1).to(log_probs.dtype)
    per_row = -log_probs.masked_fill(impossible, 0.0).sum(-1, keepdim=True) / possible
    return per_row.masked_fill(~trained, 0.0).sum() * label_smoothing, True


class _SoftmaxCrossEntropy(torch.autograd.Function):
    """:func:`cross_entropy` of ``log_softmax(logits)``, its gradient in one pass over the
    (tokens, classes) matrix: softmax - (1 - s) onehot - s / K per trained row (K: the classes the
    row can be given, every class unless some logits are -inf), 0 on the others, rather than the
    loss's dense one-hot gradient and then the log-softmax's."""

    @staticmethod
    def forward(ctx, logits, targets, label_smoothing):
        log_probs = torch.log_softmax(logits, dim=-1)
        trained = targets != IGNORE
        picked = targets.masked_fill(~trained, 0)
        loss = -log_probs.gather(1, picked.unsqueeze(1)).squeeze(1).masked_fill(~trained, 0.0).sum()
        ctx.masked = False
        if label_smoothing:
            smooth, ctx.masked = _smoothing(log_probs, trained.unsqueeze(1), label_smoothing)
            loss = (1 - label_smoothing) * loss + smooth
        ctx.save_for_backward(log_probs, picked, trained)
        ctx.label_smoothing = label_smoothing
        return loss

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        log_probs, picked, trained = ctx.saved_tensors
        smoothing = ctx.label_smoothing
        impossible = torch.isneginf(log_probs) if ctx.masked else None
        # the softmax in the saved buffer (a second backward of the same graph is refused by
        # autograd's check of saved tensors, not given wrong values)
        grads = log_probs.exp_()
        if impossible is not None:  # s / K on the K classes a row can be given, nothing on the rest
            possible = (~impossible).sum(-1, keepdim=True).clamp_min(1).to(grads.dtype)
            grads.sub_(smoothing / possible).masked_fill_(impossible, 0.0)
        elif smoothing:
            grads.sub_(smoothing / grads.size(-1))
        row_scale = (trained.to(grads.dtype) * grad).unsqueeze(1)
        grads.mul_(row_scale)
        return grads.scatter_add_(1, picked.unsqueeze(1), -(1 - smoothing) * row_scale), None, None


def softmax_cross_entropy(logits: torch.Tensor, targets: torch.Tensor, label_smoothing: float = 0.0) -> torch.Tensor:
    """``cross_entropy(log_softmax(logits), targets, label_smoothing)``, up to rounding, with a
    cheaper gradient; (tokens, classes) float ``logits``."""
    return _SoftmaxCrossEntropy.apply(logits, targets, label_smoothing)


class Criterion:
    def __init__(self, model: nn.Module, label_smoothing: float = 0.0, autocast: torch.dtype | None = None,
                 training_forward: nn.Module | None = None, loss_from_logits: bool = False,
                 by_target_length: bool = False):
        """``autocast``: the dtype the training forward pass runs in (bf16, fp16; None: fp32); the
        losses are still taken in fp32. ``training_forward``: what the training loss calls
        instead of ``model`` (its DistributedDataParallel wrapper, which all-reduces gradients).
        ``loss_from_logits``: the training loss of an output layer that is a softmax over logits
        is :func:`softmax_cross_entropy` of them, and that of a layer that scores the targets alone
        reads only their log-probabilities (each the same up to rounding, its gradient cheaper).
        ``by_target_length``: the training loss's output layer scores groups of rows of similar
        target length, each over its own longest target, and so skips most padded positions
        (:func:`wean.models.model.target_length_groups`; the same loss up to rounding), while no
        auxiliary loss asks for the model's whole output."""
        self.loss_from_logits = loss_from_logits
        self.by_target_length = by_target_length
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
        # auxiliary losses (a plug-in's among them) may read the log-probabilities: logits only without them
        from_logits = self.loss_from_logits and not self.auxiliary
        by_target_length = self.by_target_length and not self.auxiliary
        return self._loss(batch, self.auxiliary, self.autocast, self.training_forward, from_logits, by_target_length)

    def validation_loss(self, batch: Batch) -> torch.Tensor:
        """The summed cross-entropy on Y (a batch from :func:`wean.data.corpus.collate`)."""
        return self._loss(batch, [], None, self.model, False, False)

    def _loss(self, batch: Batch, auxiliary: list, autocast: torch.dtype | None, forward: nn.Module,
              from_logits: bool, by_target_length: bool) -> torch.Tensor:
        model = self.model
        targets = model.loss_targets(batch.target_output)
        # an output layer may score the targets alone (the pointer-generator), where the loss reads nothing else
        alone = targets if from_logits and not self.label_smoothing else None
        with torch.autocast(batch.source.device.type, dtype=autocast or torch.bfloat16, enabled=autocast is not None):
            output = forward(batch.source, batch.source_lengths, batch.target_input, logits=from_logits,
                             by_target_length=by_target_length, targets=alone)
            extra = 0.0
            if auxiliary:
                source, mask = model.in_vocabulary(batch.source), batch.target_output != IGNORE
                for loss in auxiliary:
                    extra = extra + loss.loss(output, source, batch.source_lengths, mask)
        if output.parts is not None:
            parts = [self._summed(part, targets[:, : part.steps].index_select(0, part.rows)) for part in output.parts]
            return sum(parts) + extra
        return self._summed(output, targets) + extra

    def _summed(self, output: ModelOutput | OutputPart, targets: torch.Tensor) -> torch.Tensor:
        """The summed cross-entropy of ``output``'s logits, targets' or whole log-probabilities
        with ``targets``."""
        if output.target_log_probs is not None:
            return -output.target_log_probs.masked_fill(targets == IGNORE, 0.0).sum()
        if output.logits is not None:
            return softmax_cross_entropy(output.logits.reshape(-1, output.logits.size(-1)), targets.reshape(-1),
                                         self.label_smoothing)
        log_probs = output.log_probs
        return cross_entropy(log_probs.reshape(-1, log_probs.size(-1)), targets.reshape(-1), self.label_smoothing)
