"""What a validation means for the run: whether its selection metric improved (a new best
checkpoint), whether it counts as progress for ``lr_patience`` and ``early_stopping_patience``,
and the learning rate after a halving."""

from __future__ import annotations

from wean.registry import selectable_key


def higher_is_better(metric: str) -> bool:
    """The direction of a selection metric: loss and perplexity fall, each registered metric's
    score key goes the way its metric declares."""
    return selectable_key(metric, "selection metric")[1] == "higher"


def judge(record: dict, earlier: list[dict], metric: str, watch_loss: bool) -> tuple[bool, bool]:
    """(the selection metric beats every earlier validation's, the validation is progress): with
    ``watch_loss`` a loss below every earlier one is progress too."""
    if not earlier:
        return True, True
    values = [previous[metric] for previous in earlier]
    improved = record[metric] > max(values) if higher_is_better(metric) else record[metric] < min(values)
    lower_loss = record["loss"] < min(previous["loss"] for previous in earlier)
    return improved, improved or (watch_loss and lower_loss)


def halved(rate: float, floor: float) -> float:
    """Half the rate, not below ``floor``; a rate already under the floor stays as it is."""
    return min(rate, max(rate * 0.5, floor))
