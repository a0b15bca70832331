"""The pairs a run trains and validates on, as its config asks: read under the data root, a
validation split held out where none is named, pairs dropped by ``data.drop_if_matches``,
mojibake repaired (``data.fix_text``), turned to ``data.direction``. Validation text is kept as
written but for its direction."""

from __future__ import annotations

from wean.config import Config
from wean.data.corpus import ParallelText, drop_matching, hold_out, oriented, read_parallel
from wean.data.fix_text import fix_training_text
from wean.data.root import data_path
from wean.errors import WeanError


def training_text(config: Config) -> tuple[ParallelText, ParallelText, list[str]]:
    """(training pairs, validation pairs, what was done to them: lines for the log)."""
    train, valid, notes = _prepared(config, read_valid=True)
    assert valid is not None  # read, or held out of the training pairs
    return train, valid, notes


def training_pairs(config: Config) -> ParallelText:
    """The training pairs as :func:`training_text` gives them, without reading a validation file
    that ``data.valid`` names: for those who need only the pairs, on a machine where it may be gone."""
    return _prepared(config, read_valid=False)[0]


def _prepared(config: Config, read_valid: bool) -> tuple[ParallelText, ParallelText | None, list[str]]:
    data = config.data
    train = read_parallel(data_path(data.train))
    notes = []
    valid = None
    if data.valid:
        if read_valid:
            valid = read_parallel(data_path(data.valid))
    else:
        train, valid = hold_out(train, data.valid_holdout, config.training.seed)
        notes.append(
            f"data.valid is not set: {len(valid.sources)} of the {len(train.sources) + len(valid.sources):,} "
            f"training pairs (chosen with training.seed {config.training.seed}) are held out and validated on "
            "(data.valid_holdout)")
    if data.drop_if_matches:
        train, dropped = drop_matching(train, data.drop_if_matches)
        if not train.sources:
            raise WeanError(f"{data.train}: data.drop_if_matches drops every training pair")
        notes.append(f"data.drop_if_matches: {dropped:,} training pairs dropped, {len(train.sources):,} kept")
    if data.fix_text:
        train, repaired = fix_training_text(train)
        notes.append(f"data.fix_text: {repaired.pairs:,} of {len(train.sources):,} training pairs "
                     f"repaired ({repaired.sources:,} sources, {repaired.targets:,} targets)")
    if data.direction != "forward":
        train = oriented(train, data.direction)
        valid = oriented(valid, data.direction) if valid is not None else None
        notes.append(f"data.direction: {data.direction}")
    return train, valid, notes
