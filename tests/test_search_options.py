"""Search options are checked in one place (wean/search_options.py) for generate(), the CLI, the
server and config files: each value at and past its bounds, with one line naming the option."""

import math

import pytest

from wean.cli import main
from wean.config import config_from_dict
from wean.errors import WeanError
from wean.search_options import RANGES, check_search_options


@pytest.mark.parametrize("name", sorted(RANGES))
def test_every_option_is_accepted_at_its_bounds_and_refused_past_them(name):
    kind, lowest, highest = RANGES[name]
    for value in (lowest, highest):
        check_search_options({name: kind(value)})
    step = 1 if kind is int else 0.5
    for value in (lowest - step, highest + step):
        with pytest.raises(WeanError, match=f"^{name} is .*; it must be .* from {lowest:g} to {highest:g}$"):
            check_search_options({name: kind(value)})


@pytest.mark.parametrize("options", [
    {"beam": True},  # True is an int to Python
    {"beam": 2.0},
    {"max_length": "10"},
    {"length_penalty": math.nan},
    {"length_penalty": math.inf},
    {"batch_size": None, "beam": 0},
])
def test_wrong_types_and_non_finite_numbers_are_refused(options):
    with pytest.raises(WeanError, match="it must be"):
        check_search_options(options)


def test_min_length_past_max_length_is_refused_in_the_callers_spelling():
    with pytest.raises(WeanError, match="^--min-length is 9, more than --max-length \\(5\\)$"):
        check_search_options({"min_length": 9, "max_length": 5}, lambda name: "--" + name.replace("_", "-"))
    check_search_options({"min_length": 5, "max_length": 5})


@pytest.mark.parametrize("key, value", [("beam", 0), ("max_length", -1), ("length_penalty", float("nan"))])
def test_a_config_with_an_option_out_of_range_is_refused(key, value):
    with pytest.raises(WeanError, match=f"^config: generation.{key} is"):
        config_from_dict({"generation": {key: value}})


@pytest.mark.parametrize("argv, message", [
    (["--beam", "1000"], "--beam is 1000; it must be an integer from 1 to 100"),
    (["--max-length", "0"], "--max-length is 0"),
    (["--batch-size", "-1"], "--batch-size is -1"),
    (["--length-penalty", "nan"], "--length-penalty is nan"),
    (["--min-length", "50", "--max-length", "10"], "--min-length is 50, more than --max-length (10)"),
])
def test_the_cli_refuses_them_before_loading_a_model(tmp_path, capsys, argv, message):
    assert main(["generate", "--model", str(tmp_path / "no-model"), *argv]) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
