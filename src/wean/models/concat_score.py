"""WEAN's concat score, v^T tanh(a_n + k_i) for every query n and word i, fused.

The (queries x words x hidden) tensor under the tanh is what makes concat slow: ``WeanOutput``'s
chunked kernel writes it out and reads it back chunk by chunk (about 6 minutes an update at
results/wean/converged-cpu's scale on one CPU thread). Here the score and each gradient is one
reduction over that tensor whose values are computed where they are summed and never stored:
four kernels that ``torch.compile`` generates (Triton on a GPU, C++ on a CPU, which needs a C++
compiler), each recomputing the tanh. Its speed and memory against the chunked kernel:
results/wean/concat-init/README.md.

Why four and not fewer: ``torch.compile`` writes out a value that two reductions share, so the
query gradient and the energy gradient, both sums over the words, are separate kernels.
"""

import shutil

import torch

from wean.errors import WeanError


def _scores(query_side: torch.Tensor, key_side: torch.Tensor, energy: torch.Tensor) -> torch.Tensor:
    return (torch.tanh(query_side[:, None, :] + key_side[None]) * energy).sum(-1)


def _query_grad(query_side, key_side, energy, grad):
    tanh = torch.tanh(query_side[:, None, :] + key_side[None])
    return (grad[:, :, None] * (1 - tanh * tanh)).sum(1) * energy


def _key_grad(query_side, key_side, energy, grad):
    tanh = torch.tanh(query_side[:, None, :] + key_side[None])
    return (grad[:, :, None] * (1 - tanh * tanh)).sum(0) * energy


def _energy_grad(query_side, key_side, grad):
    return (grad[:, :, None] * torch.tanh(query_side[:, None, :] + key_side[None])).sum(1).sum(0)


_kernels: dict = {}


def _kernel(function):
    # compiled on first use, once: dynamic, since the number of queries changes with each batch
    if function not in _kernels:
        _kernels[function] = torch.compile(function, dynamic=True, fullgraph=True)
    return _kernels[function]


class _FusedConcatScore(torch.autograd.Function):
    @staticmethod
    def forward(ctx, query_side, key_side, energy):
        ctx.save_for_backward(query_side, key_side, energy)  # inputs only: (N x H), (V x H), (H)
        return _kernel(_scores)(query_side, key_side, energy)

    @staticmethod
    def backward(ctx, grad):
        query_side, key_side, energy = ctx.saved_tensors
        grad = grad.contiguous()
        needs_query, needs_keys, needs_energy = ctx.needs_input_grad
        # each gradient in its input's dtype: under autocast the projections are bf16 or fp16, v fp32
        return (
            _kernel(_query_grad)(query_side, key_side, energy, grad).to(query_side.dtype) if needs_query else None,
            _kernel(_key_grad)(query_side, key_side, energy, grad).to(key_side.dtype) if needs_keys else None,
            _kernel(_energy_grad)(query_side, key_side, grad).to(energy.dtype) if needs_energy else None,
        )


def fused_concat_scores(query_side: torch.Tensor, key_side: torch.Tensor, energy: torch.Tensor) -> torch.Tensor:
    """(..., H) projected queries W_q q, (V, H) projected embeddings W_e e_i and the (H,) energy
    vector v -> (..., V) scores v^T tanh(W_q q + W_e e_i). Under autocast the scores are fp32
    (v is fp32 and the sums are taken in it), where the chunked kernel's Linear gives bf16 or fp16."""
    if query_side.device.type == "cpu" and not (shutil.which("c++") or shutil.which("g++")):
        raise WeanError("model.output_layer.concat_kernel: fused needs a GPU, or a C++ compiler on a CPU "
                        "(none found); use chunked")
    leading = query_side.shape[:-1]
    flat = query_side.reshape(-1, query_side.size(-1)).contiguous()
    scores = _FusedConcatScore.apply(flat, key_side.contiguous(), energy)
    return scores.reshape(*leading, key_side.size(0))
