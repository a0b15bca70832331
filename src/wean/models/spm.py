"""The source-side prediction module, SPM (Kiyono, Takase, Suzuki, Okazaki, Inui and Nagata,
PACLIC 2018): while training, the decoder also predicts, at every step j, a distribution over the
*source* vocabulary from the same vector z_j that the output layer reads,

    q_j = softmax(W_q z_j + b_q),

and the summed predictions must match the source's bag of words x~ (equations 9-11):

    l_src = ||sum_j q_j - x~||^2 / C,       loss = l_trg(Y') + l_src.

Decisions the paper leaves open (its code is not public), and how they are taken here:

* Y' (section 4.1): the target is continued with <pad> up to the source length I, <pad> being a
  real output class trained by the cross-entropy; the decoder runs I steps (``extend_target``). A pair whose target is not shorter than its source (J + 1 >= I, which
  headline data should not have) keeps Y' = Y and the decoder runs J + 1 steps.
* q~ sums the first I steps of each sentence (so it has the mass of x~, I); steps past a
  sentence's own length in a padded batch count for nothing, and source padding is not in x~.
* C = ``model.spm.c`` (10 by default). l_src and the cross-entropy are both sums over the batch,
  divided together by the number of target tokens of Y' (the trainer's normalization), so their
  relative weight is the paper's.
* Inference uses neither the head nor <pad>: search stops at <eos> and never emits <pad>; the
  head's parameters stay in the checkpoint but cost no time.
* Memory: q is (batch, steps, source vocabulary) during training, as large as the output
  layer's logits; a subword vocabulary (the paper's BPE) keeps it small.
"""

from __future__ import annotations

import torch
from torch import nn

from wean.data.vocabulary import PAD_ID
from wean.models.interfaces import AuxiliaryLoss, ModelOutput
from wean.registry import AUXILIARY_LOSSES


@AUXILIARY_LOSSES.register("spm")
class SourcePredictionModule(AuxiliaryLoss):
    def __init__(self, hidden_size: int, source_vocabulary_size: int, c: float = 10.0):
        super().__init__()
        self.head = nn.Linear(hidden_size, source_vocabulary_size)  # W_q, b_q
        self.c = c

    @classmethod
    def build(cls, config, source_vocabulary_size: int) -> "SourcePredictionModule | None":
        if not config.spm.enabled:
            return None
        return cls(config.decoder.hidden_size, source_vocabulary_size, config.spm.c)

    def extend_target(self, source_length: int, target: list[int]) -> list[int]:
        """Y': the target continued with <pad> up to the source length; a target not shorter than
        its source is left as it is."""
        return list(target) + [PAD_ID] * max(0, source_length - len(target))

    def predicted_bag(self, queries: torch.Tensor, source_lengths: torch.Tensor) -> torch.Tensor:
        """q~: the sum of q_j over the first I steps of each sentence, (batch, source vocabulary)."""
        steps = torch.arange(queries.size(1), device=queries.device).unsqueeze(0)
        q = torch.softmax(self.head(queries).float(), dim=-1)  # fp32 under bf16 autocast too
        counted = (steps < source_lengths.to(queries.device).unsqueeze(1)).to(q.dtype)
        return (q * counted.unsqueeze(-1)).sum(1)

    def loss(self, output: ModelOutput, source: torch.Tensor, source_lengths: torch.Tensor,
             target_mask: torch.Tensor) -> torch.Tensor:
        return self.bag_loss(output.queries, source, source_lengths)

    def bag_loss(self, queries: torch.Tensor, source: torch.Tensor, source_lengths: torch.Tensor) -> torch.Tensor:
        """Sum over the batch of ||q~ - x~||^2 / C."""
        real = (torch.arange(source.size(1), device=source.device).unsqueeze(0) < source_lengths.unsqueeze(1))
        bag = torch.zeros(source.size(0), self.head.out_features, device=queries.device)
        bag.scatter_add_(1, source, real.to(bag.dtype))  # x~: counts of each source word
        return ((self.predicted_bag(queries, source_lengths) - bag) ** 2).sum() / self.c

    def extras(self, output: ModelOutput, source: torch.Tensor) -> dict[str, torch.Tensor]:
        return {"source_prediction": self.alignment(output.queries, source)}

    def alignment(self, queries: torch.Tensor, source: torch.Tensor) -> torch.Tensor:
        """For the heat map of the paper's Figure 4: the probability q_j gives each source token,
        (batch, steps, source length)."""
        q = torch.softmax(self.head(queries), dim=-1)
        return q.gather(2, source.unsqueeze(1).expand(-1, q.size(1), -1))
