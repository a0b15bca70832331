"""The coverage loss of See, Liu and Manning (ACL 2017, equations 12-13): at each target step t,
attention that falls again on source tokens already attended to costs

    covloss_t = sum_i min(a_i^t, c_i^t),      c^t = sum_{t' < t} a^{t'},

and the loss adds lambda * covloss_t (``model.coverage_loss``: lambda; 0: off) to each step's
cross-entropy. It is summed over the trained steps of the batch, like the cross-entropy it is
divided with. Attention that never returns to a source token costs nothing; the paper found
lambda = 1 to work, after the model has trained without it.
"""

from __future__ import annotations

import torch

from wean.models.interfaces import AuxiliaryLoss, ModelOutput
from wean.registry import AUXILIARY_LOSSES


def coverage_loss(attention: torch.Tensor, target_mask: torch.Tensor) -> torch.Tensor:
    """sum over the rows and the steps ``target_mask`` (batch, steps) keeps of covloss_t, for
    ``attention`` (batch, steps, source)."""
    earlier = torch.cat([torch.zeros_like(attention[:, :1]), attention[:, :-1]], 1)
    coverage = earlier.cumsum(1)  # c^t: the attention of the steps before t
    per_step = torch.minimum(attention, coverage).sum(-1)
    return (per_step * target_mask.to(per_step.dtype)).sum()


@AUXILIARY_LOSSES.register("coverage_loss")
class CoverageLoss(AuxiliaryLoss):
    def __init__(self, weight: float):
        super().__init__()
        self.weight = weight

    @classmethod
    def build(cls, config, source_vocabulary_size: int) -> "CoverageLoss | None":
        return cls(config.coverage_loss) if config.coverage_loss > 0 else None

    def loss(self, output: ModelOutput, source: torch.Tensor, source_lengths: torch.Tensor,
             target_mask: torch.Tensor) -> torch.Tensor:
        return self.weight * coverage_loss(output.attention.float(), target_mask)
