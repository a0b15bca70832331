"""Gradients of a tensor that a loop multiplies at every step, computed once over all steps.

A decoder's loop over a teacher-forced target multiplies the same weights, and its attention the
same encoder states, at every step. Autograd adds each step's share of their gradient into the
sum as it goes: a small product and a pass over the whole tensor per step (a 1024 x 768 weight,
or 64 x 25 x 256 states, read and written 16 times). Here each step keeps its two factors and the
gradient is one product over all steps, once the last step's backward is through: an anchor that
every step's product takes as an input runs its backward after all of theirs. The same function
up to float rounding (tests/test_kernels.py); the oneDNN path of training takes it
(:mod:`wean.models.kernels`).
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import contextmanager

import torch
from torch import nn


class DeferredGradient:
    """The gradient of a tensor that a loop multiplies at every step, as the module docstring
    says; a subclass says how the kept pairs of factors multiply (:meth:`product`)."""

    def __init__(self, tensor: torch.Tensor):
        self.lefts: list[torch.Tensor] = []
        self.rights: list[torch.Tensor] = []
        self.backward_pass: int | None = None
        # every step's product reads it, so autograd runs its backward after all of theirs
        self.anchor: torch.Tensor | None = _GradientAnchor.apply(tensor, self)

    def keep(self, left: torch.Tensor, right: torch.Tensor) -> None:
        # a backward pass that reached the steps but not the tensor (autograd.grad of the inputs
        # only) leaves what it kept behind: the gradient counts only this pass's steps
        backward_pass = torch._C._current_graph_task_id()
        if backward_pass != self.backward_pass:
            self.lefts, self.rights, self.backward_pass = [], [], backward_pass
        self.lefts.append(left)
        self.rights.append(right)

    def take_gradient(self) -> torch.Tensor:
        """The tensor's gradient from the steps kept in this backward pass, which are let go."""
        gradient = self.product(self.lefts, self.rights)
        self.lefts, self.rights, self.backward_pass = [], [], None
        self.anchor = None  # the anchor's node refers back to this object: no cycle is left
        return gradient

    @staticmethod
    def product(lefts: list[torch.Tensor], rights: list[torch.Tensor]) -> torch.Tensor:
        raise NotImplementedError


class DeferredWeightGradient(DeferredGradient):
    """A weight's gradient: each step keeps its output's gradient (rows, out) and its input (rows,
    in); the gradient (out, in) is their product over all steps' rows."""

    @staticmethod
    def product(lefts, rights):
        return torch.cat(lefts).t().mm(torch.cat(rights))


class DeferredMemoryGradient(DeferredGradient):
    """The gradient of states (batch, source, size) that every step multiplies by a row per
    sentence (an attention's keys or values): each step keeps a (batch, rows, source) and a
    (batch, rows, size) factor; the gradient is one batched product over all steps' rows."""

    @staticmethod
    def product(lefts, rights):
        return torch.bmm(torch.cat(lefts, 1).transpose(1, 2), torch.cat(rights, 1))


class _GradientAnchor(torch.autograd.Function):
    """A zero that every step's product takes as an input: its backward runs once all of theirs
    have, and gives the tensor the gradient they kept."""

    @staticmethod
    def forward(ctx, tensor, deferred):
        ctx.deferred = deferred
        return tensor.new_zeros(())

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, _):
        return ctx.deferred.take_gradient(), None


class _DeferredStepProductFunction(torch.autograd.Function):
    """One step's ``bmm(rows, memory)``, or ``bmm(rows, memory^T)`` where ``transposed``, whose
    memory's gradient a DeferredMemoryGradient computes."""

    @staticmethod
    def forward(ctx, rows, memory, anchor, deferred, transposed):
        ctx.save_for_backward(rows, memory)
        ctx.deferred, ctx.transposed = deferred, transposed
        return torch.bmm(rows, memory.transpose(1, 2) if transposed else memory)

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        rows, memory = ctx.saved_tensors
        if ctx.transposed:  # out = rows memory^T: memory's gradient is grad^T rows
            ctx.deferred.keep(grad, rows)
            grad_rows = torch.bmm(grad, memory) if ctx.needs_input_grad[0] else None
        else:  # out = rows memory: memory's gradient is rows^T grad
            ctx.deferred.keep(rows, grad)
            grad_rows = torch.bmm(grad, memory.transpose(1, 2)) if ctx.needs_input_grad[0] else None
        return grad_rows, None, grad.new_zeros(()), None, None


class DeferredMemories:
    """The states a decoder's loop multiplies at every step (its attention's keys and values),
    each with a :class:`DeferredMemoryGradient` made at its first product."""

    def __init__(self):
        self.deferred: list[tuple[torch.Tensor, DeferredMemoryGradient]] = []

    def bmm(self, rows: torch.Tensor, memory: torch.Tensor, transposed: bool = False) -> torch.Tensor:
        """``torch.bmm(rows, memory)`` (``memory^T`` where ``transposed``), memory's gradient
        deferred where it has one."""
        if not (memory.requires_grad and torch.is_grad_enabled()):
            return torch.bmm(rows, memory.transpose(1, 2) if transposed else memory)
        deferred = next((kept for tensor, kept in self.deferred if tensor is memory), None)
        if deferred is None:
            deferred = DeferredMemoryGradient(memory)
            self.deferred.append((memory, deferred))
        return _DeferredStepProductFunction.apply(rows, memory.detach(), deferred.anchor, deferred, transposed)


@contextmanager
def deferred_memory_gradients(module: nn.Module, enabled: bool):
    """Within it, where ``enabled`` (a loop over a teacher-forced target whose products take the
    oneDNN path: float32 on the CPU, no autocast), the modules of ``module`` that read the same
    states at every step (those with a ``deferred_memory`` attribute: attentions) get their
    gradients through :class:`DeferredMemories`. Without gradients (search) it does nothing."""
    layers = [m for m in module.modules() if hasattr(m, "deferred_memory")] \
        if enabled and torch.is_grad_enabled() else []
    for layer in layers:
        layer.deferred_memory = DeferredMemories()
    try:
        yield
    finally:
        for layer in layers:
            release_anchors(deferred for _, deferred in layer.deferred_memory.deferred)
            layer.deferred_memory = None


def release_anchors(deferred: Iterable[DeferredGradient | None]) -> None:
    """Let go of the anchors once a loop's forward is through: an anchor's node refers to its
    DeferredGradient, which would otherwise keep the node, and all the graph below it, alive in a
    cycle until the garbage collector runs (where no backward ever reaches it). The steps' nodes
    keep the anchor's node for backward."""
    for kept in deferred:
        if kept is not None:
            kept.anchor = None
