"""Fuzzing (hypothesis, each property bounded to a few seconds) of what text, files, options and
configs a user can hand wean. The property everywhere: an input is either handled or refused with
a one-line WeanError; no other exception, no crash, nothing that cannot be written back as UTF-8.

Fault injection lives beside the code it breaks: a kill in the checkpoint-rewrite window
(test_checkpoint.py), a chunked oversized body and hung-up clients (test_server.py), damaged model
directories (test_damaged_model_dir.py), options at and past their bounds (test_search_options.py).
"""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wean.config import TokenizerConfig, config_from_dict
from wean.data.tokenizers import CharTokenizer, WordTokenizer, build_tokenizer
from wean.errors import WeanError
from wean.search_options import SearchOptions, check_search_options, option_kind, option_range
from wean.textio import read_lines

BOUNDED = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# every code point, lone surrogates and the characters tokenizers treat specially included
ANY_CHARACTER = st.one_of(
    st.characters(codec=None, categories=None, exclude_categories=()),
    st.sampled_from(["\ud800", "\udfff", "\u2581", "\ufdd0", "\ufffd", "\x00", "\n", "\u3000", "é", "天"]),
)
ANY_TEXT = st.lists(ANY_CHARACTER, max_size=40).map("".join)  # st.text would leave surrogates out


@pytest.fixture(scope="module")
def sentencepiece():
    corpus = [f"The cat sat on the mat {i} . Über naïve café ." for i in range(50)]
    return build_tokenizer(TokenizerConfig(type="bpe", vocab_size=400, byte_fallback=True), corpus)


@BOUNDED
@given(text=ANY_TEXT)
def test_tokenizers_take_any_text_and_give_back_writable_text(text, sentencepiece):
    expected = " ".join(text.split())
    for tokenizer in (WordTokenizer(), CharTokenizer(), sentencepiece):
        decoded = tokenizer.decode(tokenizer.encode(text))
        decoded.encode("utf-8")  # no lone surrogate survives
        if not isinstance(tokenizer, CharTokenizer):  # (char: runs of Unicode spaces are not collapsed alike)
            clean = "".join("\ufffd" if 0xD800 <= ord(c) <= 0xDFFF or c == "\ufdd0" else c for c in expected)
            assert decoded == " ".join(clean.split()), (text, decoded)


@BOUNDED
@given(name=st.sampled_from([name for name in SearchOptions.names() if option_kind(name) is not str]),
       value=st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=True),
                       st.text(max_size=5), st.lists(st.integers(), max_size=2)))
def test_search_options_are_accepted_in_range_or_refused_in_one_line(name, value):
    lowest, highest, above_lowest = option_range(name)
    try:
        check_search_options({name: value})
    except WeanError as error:
        assert "\n" not in str(error) and str(error).startswith(name)
        return
    assert value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)
                             and math.isfinite(value) and (lowest < value if above_lowest else lowest <= value)
                             and value <= highest and (option_kind(name) is float or isinstance(value, int)))


@BOUNDED
@given(data=st.binary(max_size=200))
def test_any_bytes_are_read_as_lines_or_refused_naming_the_file_and_line(data, tmp_path):
    path = tmp_path / "input.txt"
    path.write_bytes(data)
    try:
        lines = read_lines(path)
    except WeanError as error:
        assert str(error).startswith(f"{path}:") and "not valid UTF-8" in str(error) and "\n" not in str(error)
        return
    assert all("\n" not in line for line in lines)


CONFIG_KEYS = ["model.encoder.hidden_size", "model.decoder.layers", "model.dropout", "data.max_tokens",
               "training.batch_size", "training.learning_rate", "generation.beam", "generation.max_length",
               "data.tokenizer.type", "model.decoder.attention", "training.no_such_key", "data.control.bucket"]


@BOUNDED
@given(overrides=st.dictionaries(st.sampled_from(CONFIG_KEYS),
                                 st.one_of(st.integers(-5, 5), st.floats(allow_nan=True), st.text(max_size=6),
                                           st.booleans(), st.none(), st.lists(st.integers(), max_size=2)),
                                 max_size=3))
def test_any_config_values_build_a_config_or_are_refused_in_one_line(overrides):
    values: dict = {}
    for key, value in overrides.items():
        *sections, leaf = key.split(".")
        node = values
        for section in sections:
            node = node.setdefault(section, {})
        node[leaf] = value
    try:
        config_from_dict(values)
    except WeanError as error:
        assert str(error).startswith("config: ") and "\n" not in str(error)
