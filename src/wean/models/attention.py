"""Luong et al. (2015) global attention: one module, three score functions, padding masked.

score(s_t, h_j):
    dot      s_t · h_j                       (needs equal sizes)
    general  s_t · (W_a h_j)
    concat   v_a · tanh(W_q s_t + W_k h_j)

The key-side projections do not depend on the decoder step, so :meth:`project_keys` computes them
once per batch and every step reuses them.

With ``coverage`` (See et al. 2017, equation 11), each projected key also carries the coverage of
its source token, c_j = the attention it received at the steps before: key_j + w_c c_j, so that
concat is their v_a · tanh(W_q s_t + W_k h_j + w_c c_j) and general is s_t · (W_a h_j + w_c c_j).
"""

from __future__ import annotations

import torch
from torch import nn

from wean.models.deferred_gradients import DeferredMemories


class LuongAttention(nn.Module):
    # within a decoder's loop on the oneDNN path: the keys' and values' gradients as one product
    # over all steps (wean.models.deferred_gradients.deferred_memory_gradients sets it)
    deferred_memory: DeferredMemories | None = None

    def __init__(self, query_size: int, key_size: int, score: str = "general", coverage: bool = False):
        super().__init__()
        self.score = score
        if score == "dot":
            if query_size != key_size:
                raise ValueError(f"dot attention needs query size {query_size} == key size {key_size}")
        elif score == "general":
            self.key_projection = nn.Linear(key_size, query_size, bias=False)
        elif score == "concat":
            self.key_projection = nn.Linear(key_size, query_size, bias=False)
            self.query_projection = nn.Linear(query_size, query_size, bias=True)
            self.energy = nn.Linear(query_size, 1, bias=False)
        else:
            raise ValueError(f"unknown attention score {score!r}")
        if coverage:
            self.coverage_projection = nn.Linear(1, query_size, bias=False)  # w_c

    def project_keys(self, keys: torch.Tensor) -> torch.Tensor:
        """(batch, source, key) -> what :meth:`forward` compares queries with."""
        return keys if self.score == "dot" else self.key_projection(keys)

    def forward(
        self, queries: torch.Tensor, projected_keys: torch.Tensor, values: torch.Tensor, mask: torch.Tensor,
        coverage: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """queries (batch, steps, query), projected keys (batch, source, query), values (batch,
        source, value), mask (batch, source) True on real tokens, and with coverage, the coverage
        (batch, source) of one step. Returns the contexts (batch, steps, value) and the weights
        (batch, steps, source)."""
        deferred = self.deferred_memory
        if coverage is not None:  # a new tensor of keys at every step: their gradient is not deferred
            projected_keys = projected_keys + self.coverage_projection(coverage.unsqueeze(-1).to(projected_keys.dtype))
        if self.score == "concat":
            hidden = torch.tanh(self.query_projection(queries).unsqueeze(2) + projected_keys.unsqueeze(1))
            scores = self.energy(hidden).squeeze(-1)
        elif deferred is not None and coverage is None:
            scores = deferred.bmm(queries, projected_keys, transposed=True)
        else:
            scores = torch.bmm(queries, projected_keys.transpose(1, 2))
        scores = scores.masked_fill(~mask.unsqueeze(1), float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        context = deferred.bmm(weights, values) if deferred is not None else torch.bmm(weights, values)
        return context, weights
