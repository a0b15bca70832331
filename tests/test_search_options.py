"""Search options are checked in one place (wean/search_options.py) for generate(), the CLI, the
server and config files: each value at and past its bounds, with one line naming the option."""

import dataclasses
import math

import pytest

from wean.cli import main
from wean.config import config_from_dict
from wean.errors import WeanError
from wean.search_options import SearchOptions, check_batch_size, check_search_options, option_kind, option_range

NUMERIC = [name for name in SearchOptions.names() if option_kind(name) is not str]
CHOICES = [name for name in SearchOptions.names() if option_kind(name) is str]


@pytest.mark.parametrize("name", NUMERIC)
def test_every_option_is_accepted_at_its_bounds_and_refused_past_them(name):
    kind = option_kind(name)
    lowest, highest, above_lowest = option_range(name)
    step = 1 if kind is int else 0.5
    for value in ((lowest + step / 10,) if above_lowest else (lowest,)) + (highest,):
        check_search_options({name: kind(value)})
    for value in ((lowest,) if above_lowest else ()) + (lowest - step, highest + step):
        low, high = (int(lowest), int(highest)) if kind is int else (f"{lowest:g}", f"{highest:g}")
        with pytest.raises(WeanError, match=f"^{name} is .*; it must be .* {low} .* {high}$"):
            check_search_options({name: kind(value)})


@pytest.mark.parametrize("name", CHOICES)
def test_an_option_of_names_takes_its_choices_only(name):
    check_search_options({name: getattr(SearchOptions(), name)})
    for value in ("no-such-choice", 3):
        with pytest.raises(WeanError, match=f"^{name} is .*; choose one of "):
            check_search_options({name: value})


def test_the_strategies_on_offer_are_the_registered_ones():
    with pytest.raises(WeanError, match="^strategy is 'beams'; choose one of greedy, beam, sampling, diverse_beam"):
        check_search_options({"strategy": "beams"})
    for strategy in ("beam", "greedy", "sampling", "diverse_beam"):
        check_search_options({"strategy": strategy})


@pytest.mark.parametrize("options, message", [
    ({"strategy": "beam", "beam": 4, "nbest": 5}, "^nbest is 5, more than beam \\(4\\)"),
    ({"strategy": "diverse_beam", "beam": 5, "nbest": 5, "diverse_groups": 2}, "^beam is 5, not a multiple of"),
    ({"strategy": "greedy", "nbest": 2}, "^nbest is 2; greedy search finds one output"),
])
def test_options_that_contradict_each_other_are_refused(options, message):
    with pytest.raises(WeanError, match=message):
        check_search_options(options)
    check_search_options({**options, "strategy": "sampling"})  # samples are not bounded by a beam


@pytest.mark.parametrize("penalty, weight", [("summary", 0.0), ("none", 0.3)])
def test_a_coverage_penalty_without_weight_or_a_weight_without_penalty_is_refused(penalty, weight):
    with pytest.raises(WeanError, match=f"^coverage_penalty is {penalty} and coverage_weight {weight:g}: a penalty"):
        check_search_options({"coverage_penalty": penalty, "coverage_weight": weight})
    check_search_options({"coverage_penalty": "wu", "coverage_weight": 0.3})


def test_checking_words_without_a_fallback_is_refused_where_it_is_asked_for():
    with pytest.raises(WeanError, match="^fallback_words is known, which needs fallback source"):
        SearchOptions().replace(fallback_words="known")
    checked = SearchOptions().replace(fallback="source", fallback_words="known")
    unguarded = checked.replace(fallback="none")  # turning a config's fallback off is no error
    assert unguarded.fallback_words == "known"
    assert checked.replace(**dataclasses.asdict(unguarded)) == unguarded  # every option passed back, as the server does
    with pytest.raises(WeanError, match="^config: generation.fallback_words is known, which needs fallback source"):
        config_from_dict({"generation": {"fallback_words": "known"}})
    config_from_dict({"generation": {"fallback_words": "known", "fallback": "source"}})


def test_batch_size_is_checked_like_a_search_option():
    check_batch_size(1)
    for value in (0, 5000, True, 2.0):
        with pytest.raises(WeanError, match="^--batch-size is .*; it must be an integer from 1 to 4096$"):
            check_batch_size(value, "--batch-size")


@pytest.mark.parametrize("options", [
    {"beam": True},  # True is an int to Python
    {"beam": 2.0},
    {"max_length": "10"},
    {"length_penalty": math.nan},
    {"length_penalty": math.inf},
    {"nbest": None, "beam": 0},
    {"strategy": None, "temperature": 0.0},
    {"sampling_topp": 0.0},
])
def test_wrong_types_and_non_finite_numbers_are_refused(options):
    with pytest.raises(WeanError, match="it must be"):
        check_search_options(options)


def test_a_min_length_max_length_cannot_reach_is_refused_in_the_callers_spelling():
    for low in (9, 5):  # max_length counts </s>: 5 steps write 4 tokens at most
        with pytest.raises(WeanError, match=f"^--min-length is {low}, not below --max-length \\(5\\), which counts"):
            check_search_options({"min_length": low, "max_length": 5}, lambda name: "--" + name.replace("_", "-"))
    check_search_options({"min_length": 4, "max_length": 5})


@pytest.mark.parametrize("key, value", [("beam", 0), ("max_length", -1), ("length_penalty", float("nan"))])
def test_a_config_with_an_option_out_of_range_is_refused(key, value):
    with pytest.raises(WeanError, match=f"^config: generation.{key} is"):
        config_from_dict({"generation": {key: value}})


@pytest.mark.parametrize("argv, message", [
    (["--beam", "1000"], "--beam is 1000; it must be an integer from 1 to 100"),
    (["--max-length", "0"], "--max-length is 0"),
    (["--batch-size", "-1"], "--batch-size is -1"),
    (["--strategy", "beam", "--nbest", "6", "--beam", "5"], "--nbest is 6, more than --beam (5)"),
    (["--sampling-topp", "1.5"], "--sampling-topp is 1.5; it must be a number above 0 and at most 1"),
    (["--temperature", "0"], "--temperature is 0.0; it must be a number from 0.01 to 100"),
    (["--strategy", "nucleus"], "--strategy is 'nucleus'; choose one of greedy, beam, sampling, diverse_beam"),
    (["--length-penalty", "nan"], "--length-penalty is nan"),
    (["--min-length", "50", "--max-length", "10"], "--min-length is 50, not below --max-length (10)"),
    (["--coverage-weight", "0.2", "--coverage-penalty", "none"], "--coverage-penalty is none and --coverage-weight 0.2"),
])
def test_the_cli_refuses_them_before_loading_a_model(tmp_path, capsys, argv, message):
    assert main(["generate", "--model", str(tmp_path / "no-model"), *argv]) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
