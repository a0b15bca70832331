"""The ranges of the search options, checked in one place for every way of asking for them:
``Generator.generate`` (and so the CLI and the server), and ``generation:`` in a config. An option
out of range is one line naming it, not a failure deep in the search or a silent greedy run.

The upper bounds keep one call's memory and time finite (``--beam 1000`` once took 12 GB); the
server's own limits (``wean serve --max-beam``, ...) are tighter.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping

from wean.errors import WeanError

# option -> (type, lowest, highest)
RANGES: dict[str, tuple[type, float, float]] = {
    "beam": (int, 1, 100),
    "length_penalty": (float, 0.0, 5.0),  # alpha in score / length**alpha
    "min_length": (int, 0, 1000),
    "max_length": (int, 1, 1000),  # decoder steps, </s> included
    "block_ngram_repeat": (int, 0, 100),
    "batch_size": (int, 1, 4096),
}


def check_search_options(options: Mapping[str, Any], spelling: Callable[[str], str] = str) -> None:
    """Raise a WeanError for the first option (None: not given) that is not of its type or out of
    its range, and for ``min_length > max_length``. ``spelling`` writes an option's name as the
    caller's user wrote it (``--max-length``, ``config: generation.max_length``)."""
    for name, value in options.items():
        if value is None:
            continue
        kind, lowest, highest = RANGES[name]
        if isinstance(value, bool):  # True is an int to Python, not a beam width to anyone
            well_typed = False
        elif kind is int:
            well_typed = isinstance(value, int)
        else:
            well_typed = isinstance(value, (int, float)) and math.isfinite(value)
        if not well_typed or not lowest <= value <= highest:
            what = "an integer" if kind is int else "a number"
            raise WeanError(f"{spelling(name)} is {value!r}; it must be {what} from {lowest:g} to {highest:g}")
    low, high = options.get("min_length"), options.get("max_length")
    if low is not None and high is not None and low > high:
        raise WeanError(f"{spelling('min_length')} is {low}, more than {spelling('max_length')} ({high})")
