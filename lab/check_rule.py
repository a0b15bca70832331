"""Would a run's training decisions stand under converge.sh's patience rule?

Replays the rule (wean.training.patience: a validation without progress improves neither the
selection metric nor the loss; the learning rate halves every lr_patience of them in a row,
training stops at early_stopping_patience, both read from the run's config) over the run's
validations.json and compares the learning rate of each validation and the stop with what the
run did. A run that agrees to its end is the run the rule would have trained; one that parts can
be rewound to a checkpoint before the parting (rewind.py).

    python lab/check_rule.py RUN [RUN ...]
"""

import json
import sys
from pathlib import Path

import yaml

from wean.training.patience import halved, judge


def replay(validations: list, training: dict) -> tuple[list, int | None, int | None]:
    """The learning rate each validation runs under, the index where the rule stops, and the
    first index where its count of validations without progress differs from the metric's alone
    (the count a run trained before the rule keeps in its checkpoints). A run can be rewound to a
    checkpoint where the two counts are equal again and the learning rates agree (or are set)."""
    metric = training["selection_metric"]
    bad = metric_bad = 0
    rate, rates, parting = training["learning_rate"], [], None
    for index, record in enumerate(validations):
        rates.append(rate)
        improved, progress = judge(record, validations[:index], metric, watch_loss=True)
        bad = 0 if progress else bad + 1
        metric_bad = 0 if improved else metric_bad + 1
        if parting is None and bad != metric_bad:
            parting = index
        if bad and bad % training["lr_patience"] == 0:
            rate = halved(rate, training["min_learning_rate"])
        if bad >= training["early_stopping_patience"]:
            return rates, index, parting
    return rates, None, parting


def check(run: Path) -> str:
    if not (run / "validations.json").exists():
        return "no validation yet"
    validations = json.loads((run / "validations.json").read_text())
    training = yaml.safe_load((run / "config.yaml").read_text())["training"]
    rates, stop, parting = replay(validations, training)
    for index, (record, rate) in enumerate(zip(validations, rates)):
        if abs(record["learning_rate"] - rate) > 1e-12:
            return (f"parts at validation {index + 1} (epoch {record['epochs']:.0f}): learning rate "
                    f"{record['learning_rate']:g}, the rule's {rate:g}; the counts part at validation {parting + 1}")
    finished = (run / "finished").exists()
    if stop is not None and stop < len(validations) - 1:
        return f"parts after validation {stop + 1}: the rule stops there, the run went on"
    if finished and stop is None:
        return f"parts at the end: the run stopped after validation {len(validations)}, the rule would go on"
    return f"agrees over {len(validations)} validations" + ("" if finished else " (still training)")


def main() -> None:
    for run in map(Path, sys.argv[1:]):
        print(f"{run.name}: {check(run)}")


if __name__ == "__main__":
    main()
