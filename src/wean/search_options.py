"""The search options, defined once: :class:`SearchOptions`. The config's ``generation:`` section,
the command line's flags (:func:`wean.cli.options.add_generation_options`), the server's request
fields, the server's batching key and the range checks are all derived from its fields, so a new
option is one field here (and the code of the strategy that reads it).

Every way of asking for an option is checked here: ``Generator.generate`` (and so the CLI and the
server), and ``generation:`` in a config. An option out of range is one line naming it as its user
wrote it, not a failure deep in the search or a silent greedy run. The upper bounds keep one call's
memory and time finite (``--beam 1000`` once took 12 GB); the server's own limits
(``wean serve --max-beam``, ...) are tighter.

This module imports no torch: config files are read with it.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from wean.errors import WeanError
from wean.registry import STRATEGIES


OUTPUTS = ("one", "beam", "samples")  # how many outputs a strategy finds: Capabilities.outputs


@dataclass(frozen=True)
class Capabilities:
    """What a search strategy can do, declared where it registers
    (``@STRATEGIES.register("my_search", capabilities=Capabilities(outputs="beam"))``), so that the
    option checks, the fallback, the model's own reranking, the shortlist and the server's bound on
    work ask the strategy, never its name.

    ``outputs``: ``one`` (one output per input; ``nbest`` above 1 is refused), ``beam`` (an n-best
    list of at most ``beam`` outputs, all of which the fallback reads) or ``samples`` (``nbest``
    outputs drawn apart). ``own_rerank``: the model's ``generation.rerank`` reorders its lists,
    the beam widened to ``rerank_size`` for it. ``compact``: it ranks whatever width the
    log-probabilities have and names no word id but the specials, so a shortlist may search over
    its list's positions. ``check(options, spelling)``: raises a WeanError for its own options'
    contradictions (``options``: those given, by name)."""

    outputs: str = "one"
    own_rerank: bool = False
    compact: bool = False
    check: Callable[[Mapping[str, Any], Callable[[str], str]], None] | None = None
    declared: bool = True  # False: what a strategy registered without capabilities is taken to have

    def __post_init__(self):
        if self.outputs not in OUTPUTS:
            raise WeanError(f"search strategy capabilities: outputs is {self.outputs!r}; choose one of "
                            f"{', '.join(OUTPUTS)}")

    def width(self, options: "SearchOptions") -> int:
        """Hypotheses searched per input at each step: what one input costs (a strategy that
        declared nothing: the beam's, since its cost is not known)."""
        if not self.declared:
            return options.beam
        return {"one": 1, "samples": options.nbest}.get(self.outputs, options.beam)


def capabilities(strategy: str) -> Capabilities:
    """What the strategy registered as ``strategy`` declared (one output, if it declared nothing)."""
    return STRATEGIES.entry(strategy, "strategy").capabilities or Capabilities(declared=False)


def option(default, help: str, low: float | None = None, high: float | None = None,
           above_low: bool = False, choices: tuple[str, ...] | None = None):
    """A field of :class:`SearchOptions`: its default, its help line, and its range (``low`` to
    ``high``, ``low`` itself excluded with ``above_low``) or its ``choices``."""
    return field(default=default, metadata={"help": help, "low": low, "high": high, "above_low": above_low,
                                            "choices": choices})


@dataclass
class SearchOptions:
    """How outputs are searched for. Each strategy reads the options that concern it and ignores
    the others (greedy search reads no beam width, only beam search a coverage penalty)."""

    strategy: str = option("beam", "beam | greedy | sampling | diverse_beam, or one a plug-in registers "
                           "(wean.registry.STRATEGIES); beam with beam 1 is greedy search")
    beam: int = option(5, "beam width (beam, diverse_beam)", 1, 100)
    nbest: int = option(1, "outputs per input, best first: at most beam for beam searches; samples per input "
                        "for sampling", 1, 100)
    length_penalty: float = option(0.0, "alpha: hypotheses are ranked by log-probability / lp(length); 0 ranks by "
                                   "raw log-probability", 0.0, 5.0)
    length_penalty_form: str = option("power", "lp(length) = length**alpha (power; alpha 1 is OpenNMT-py's avg) "
                                      "or ((5 + length) / 6)**alpha (wu: GNMT)", choices=("power", "wu"))
    coverage_penalty: str = option("none", "beam: none | wu (GNMT: beta * sum of log min(attention "
                                   "received, 1) over source tokens; favours covering the source) | summary "
                                   "(-beta * sum of attention received past 1: penalises attending to a source "
                                   "token twice, i.e. repeating it)", choices=("none", "wu", "summary"))
    coverage_weight: float = option(0.0, "beta, the weight of the coverage penalty", 0.0, 10.0)
    min_length: int = option(1, "no output shorter than this many tokens, </s> not counted", 0, 1000)
    max_length: int = option(100, "decoder steps at most, </s> included: outputs of max_length - 1 tokens at most",
                             1, 1000)
    block_ngram_repeat: int = option(0, "never repeat an n-gram of this size; 0: off", 0, 100)
    sampling_topk: int = option(0, "sampling: draw from the k most probable tokens only; 0: all", 0, 100000)
    sampling_topp: float = option(1.0, "sampling: draw from the smallest set of tokens whose probability "
                                  "reaches p (nucleus); 1: all", 0.0, 1.0, above_low=True)
    temperature: float = option(1.0, "sampling: divide the scores by this before drawing; below 1 sharper, "
                                "above 1 flatter", 0.01, 100.0)
    seed: int = option(0, "sampling: the same seed and input give the same samples, whatever the batch",
                       0, 2**62)
    diverse_groups: int = option(0, "diverse_beam: groups the beam is split into (Vijayakumar et al. 2018), "
                                 "the beam a multiple of it; 0: one group per beam", 0, 100)
    diverse_strength: float = option(0.5, "diverse_beam: lambda, the penalty per beam of an earlier group that "
                                     "has just chosen the same token", 0.0, 100.0)
    names_and_numbers: str = option("any", "from_source: write no number and no capitalised word that the source "
                                    "lacks, except a common word opening a sentence (wean/inference/source_names.py; "
                                    "every strategy); any: no constraint", choices=("any", "from_source"))
    fallback: str = option("none", "source: where an output has a fidelity fault (a number, name or non-ASCII "
                           "character its source lacks, a repeated phrase, a non-ASCII character of the "
                           "source lost, or no word left; wean/evaluation/fidelity.py), "
                           "the next of the beam's outputs (of beam and diverse beam search; greedy search and "
                           "sampling have only those asked for) that has none takes its place, and where none "
                           "is free of faults the source is returned unchanged; none: off",
                           choices=("none", "source"))
    fallback_words: str = option("any", "known: with fallback source, an output that writes a word its source lacks "
                                 "and English's frequency list (wordfreq) does not hold, as word pieces joined "
                                 "wrongly do, has a fault too; any: words are not checked",
                                 choices=("any", "known"))
    shortlist: int = option(0, "score only the N most frequent target words and, per batch, its sources' tokens "
                            "and their translation-table words (the model directory's shortlist.safetensors, "
                            "from wean shortlist; wean/inference/shortlist.py): faster, but outputs may change "
                            "(results/bench-shortlist); 0: every word",
                            0, 10**7)

    @classmethod
    def names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(SearchOptions))

    @classmethod
    def help(cls, name: str) -> str:
        return _field(name).metadata["help"]

    @classmethod
    def of(cls, values: Any) -> "SearchOptions":
        """The search options of an object that has them as attributes (a GenerationConfig)."""
        return SearchOptions(**{name: getattr(values, name) for name in cls.names()})

    def replace(self, **given) -> "SearchOptions":
        """These options with those ``given`` (None: not given, kept), checked."""
        chosen = dataclasses.replace(self, **{name: value for name, value in given.items() if value is not None})
        check_search_options(dataclasses.asdict(chosen))
        # refused only where words are newly asked to be checked: a call that turns a config's
        # fallback off, or that passes every option back (the server's batcher), is not refused
        if given.get("fallback_words") == "known" and self.fallback_words != "known":
            check_fallback_words(chosen.fallback, chosen.fallback_words)
        return chosen


def _field(name: str) -> dataclasses.Field:
    for field_ in dataclasses.fields(SearchOptions):
        if field_.name == name:
            return field_
    raise KeyError(name)


def option_kind(name: str) -> type:
    return {"int": int, "float": float, "str": str}[_field(name).type]


def option_range(name: str) -> tuple[float | None, float | None, bool]:
    """(lowest, highest, lowest excluded) of a numeric option."""
    metadata = _field(name).metadata
    return metadata["low"], metadata["high"], metadata["above_low"]


def option_choices(name: str) -> tuple[str, ...] | None:
    return _field(name).metadata["choices"]


def check_search_options(options: Mapping[str, Any], spelling: Callable[[str], str] = str) -> None:
    """Raise a WeanError for the first option (None: not given) that is not of its type or out of
    its range, and for options that contradict each other (``min_length > max_length``, ``nbest``
    above the beam). ``spelling`` writes an option's name as the caller's user wrote it
    (``--max-length``, ``config: generation.max_length``)."""
    for name, value in options.items():
        if value is None:
            continue
        kind = option_kind(name)
        if kind is str:
            _check_choice(name, value, spelling)
            continue
        lowest, highest, above_lowest = option_range(name)
        if isinstance(value, bool):  # True is an int to Python, not a beam width to anyone
            well_typed = False
        elif kind is int:
            well_typed = isinstance(value, int)
        else:
            well_typed = isinstance(value, (int, float)) and math.isfinite(value)
        in_range = well_typed and (lowest < value if above_lowest else lowest <= value) and value <= highest
        if not in_range:
            what = "an integer" if kind is int else "a number"
            low, high = (f"{int(lowest)}", f"{int(highest)}") if kind is int else (f"{lowest:g}", f"{highest:g}")
            bounds = f"above {low} and at most {high}" if above_lowest else f"from {low} to {high}"
            raise WeanError(f"{spelling(name)} is {value!r}; it must be {what} {bounds}")
    given = {name: value for name, value in options.items() if value is not None}
    low, high = given.get("min_length"), given.get("max_length")
    if low is not None and high is not None and low >= high:
        raise WeanError(f"{spelling('min_length')} is {low}, not below {spelling('max_length')} ({high}), which "
                        "counts </s>: no output could be that long")
    penalty, weight = given.get("coverage_penalty"), given.get("coverage_weight")
    if penalty is not None and weight is not None and (penalty == "none") != (weight == 0):
        raise WeanError(f"{spelling('coverage_penalty')} is {penalty} and {spelling('coverage_weight')} {weight:g}: "
                        "a penalty needs a weight above 0, and a weight a penalty")
    strategy = given.get("strategy")
    if strategy is None:
        return
    can = capabilities(strategy)
    beam, nbest = given.get("beam"), given.get("nbest")
    if can.outputs == "one" and nbest is not None and nbest > 1:
        several = [name for name in STRATEGIES.names() if capabilities(name).outputs != "one"]
        several = ", ".join(several[:-1]) + f" and {several[-1]}" if len(several) > 1 else "".join(several)
        raise WeanError(f"{spelling('nbest')} is {nbest}; {strategy} search finds one output ({several} find several)")
    if can.outputs == "beam" and beam is not None and nbest is not None and nbest > beam:
        raise WeanError(f"{spelling('nbest')} is {nbest}, more than {spelling('beam')} ({beam}): a beam search "
                        "finds at most one output per beam")
    if can.check is not None:
        can.check(given, spelling)


def check_fallback_words(fallback: str, fallback_words: str, spelling: Callable[[str], str] = str) -> None:
    """Words are checked only to choose a fallback: ``fallback_words known`` alone would do nothing."""
    if fallback_words == "known" and fallback == "none":
        raise WeanError(f"{spelling('fallback_words')} is known, which needs fallback source (it is none): words "
                        "are checked only to choose a fallback")


BATCH_SIZE = (1, 4096)  # sentences per model call: not a search option, but checked like one


def check_batch_size(value: Any, spelling: str = "batch_size") -> None:
    lowest, highest = BATCH_SIZE
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or not lowest <= value <= highest):
        raise WeanError(f"{spelling} is {value!r}; it must be an integer from {lowest} to {highest}")


def _check_choice(name: str, value: Any, spelling: Callable[[str], str]) -> None:
    if name == "strategy":
        choices = tuple(STRATEGIES.names())
    else:
        choices = option_choices(name)
    if not isinstance(value, str) or value not in choices:
        raise WeanError(f"{spelling(name)} is {value!r}; choose one of {', '.join(choices)}")


# the strings of generation.rerank and generation.fallback_channel, read here so that configs are
# checked without loading a scorer
def _named_number(item: str) -> tuple[str, float] | None:
    """``NAME=NUMBER`` as (NAME, NUMBER); None unless both are there and the number is finite."""
    name, sep, number = item.rpartition("=")
    try:
        value = float(number)
    except ValueError:
        return None
    return (name.strip(), value) if sep and name.strip() and math.isfinite(value) else None


def parse_rerank(text: str) -> list[tuple[str, float]]:
    """``length=-0.1,unchanged=-2,channel:DIR=0.5`` as [("length", -0.1), ("unchanged", -2.0),
    ("channel:DIR", 0.5)]; ``none`` (or nothing) as []."""
    if text.strip() in ("", "none"):
        return []
    chosen = []
    for item in text.split(","):
        named = _named_number(item)
        if named is None:
            raise WeanError(f"--rerank {text!r}: expected NAME=WEIGHT,..., e.g. length=-0.1,unchanged=-2,channel:DIR=0.5")
        chosen.append(named)
    return chosen


def parse_threshold(text: str) -> tuple[str, float]:
    """``DIR=THRESHOLD`` (``generation.fallback_channel``) as (DIR, THRESHOLD): a model and the
    least per-token log-probability its score may have."""
    named = _named_number(text)
    if named is None:
        raise WeanError(f"{text!r}: expected DIR=THRESHOLD, e.g. reranker/channel=-2.5")
    return named
