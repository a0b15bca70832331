"""The simplifier shipped in wean/pretrained: what a user with no data and no training gets."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from rapidfuzz.distance import Levenshtein
from safetensors import safe_open

import wean
from wean.pretrained import SIMPLIFIER

WEAN = str(Path(sys.executable).with_name("wean"))
SENTENCE = "The committee, which was established in 1998, is responsible for the administration of the competition."


@pytest.fixture(scope="module")
def simplifier():
    return wean.load()


def test_it_is_small_fp16_and_documented():
    size = sum(path.stat().st_size for path in SIMPLIFIER.rglob("*") if path.is_file())
    assert size <= 20 * 2**20
    for model in (SIMPLIFIER, SIMPLIFIER / "reranker" / "channel"):
        with safe_open(str(model / "model.safetensors"), "pt") as weights:
            tensors = [weights.get_tensor(name) for name in weights.keys()]
        assert {str(t.dtype) for t in tensors if t.is_floating_point()} == {"torch.float16"}
    card = (SIMPLIFIER / "MODEL_CARD.md").read_text(encoding="utf-8")
    for needed in ("kauchak_v2", "TurkCorpus", "WikiSmall", "SARI", "FKGL", "CC BY-SA", "limits"):
        assert needed in card


def test_plain_english_in_plain_english_out(simplifier):
    output = simplifier.generate([SENTENCE])[0].text
    assert output and output[0].isupper() and output.endswith(".")
    assert " ," not in output and " ." not in output  # detokenized, not PTB tokens
    assert output != SENTENCE  # it simplifies: the default asks for change
    assert len(output) <= 1.2 * len(SENTENCE)


def test_control_values_change_what_it_writes(simplifier):
    assert simplifier.control.attributes == ["chars_ratio", "levenshtein", "word_rank"]
    card = (SIMPLIFIER / "MODEL_CARD.md").read_text(encoding="utf-8")
    for name, value in simplifier.control.defaults.items():
        assert f"| `{name}` |" in card and f"{value:.2f}" in card  # the card states the defaults
    # without the fallback, which may return the source for either
    close = simplifier.generate([SENTENCE], control={"levenshtein": 1.0}, fallback="none")[0].text
    free = simplifier.generate([SENTENCE], control={"levenshtein": 0.5}, fallback="none")[0].text
    assert close != free
    assert Levenshtein.normalized_similarity(close, SENTENCE) > Levenshtein.normalized_similarity(free, SENTENCE)


def test_no_character_is_invented_or_broken(simplifier):
    """Every character can be read (byte fallback); none is written that the input lacks, beyond
    ASCII, and no broken byte shows as U+FFFD."""
    texts = ["The ticket costs £50 — about €60 — and is valid in Zürich.",
             "“Curly quotes” surround the café’s name, São Paulo."]
    for text, generation in zip(texts, simplifier.generate(texts)):
        assert "\ufffd" not in generation.text and "<unk>" not in generation.tokens
        assert all(ord(c) < 128 or c in text for c in generation.text)


def test_a_sentence_it_would_garble_comes_back_unchanged_with_the_reason(simplifier):
    """The default pipeline's fallback: outputs that lose the source's characters, invent a name
    or read as unlikely to the channel model give way to the source, with a warning."""
    text = "The ticket costs £50 — about €60 — and is valid in Zürich."
    unguarded = simplifier.generate([text], fallback="none")[0]
    assert unguarded.text != text
    generation = simplifier.generate([text])[0]
    assert generation.text == text and "returned unchanged" in generation.warning


def test_the_api_returns_each_output_on_one_line_as_the_command_writes_it(simplifier):
    """A source returned unchanged, or an output that copies a word, keeps no line end and no
    control character: what generate() returns is what `wean simplify` writes."""
    texts = ["A line\u2028with a separator that is long enough to be left alone by the model today.",
             "Tab\there and a\rreturn and NUL\x00 and an escape\x1b[31m in red.", "One\x85two."]
    for fallback in ("source", "none"):
        for generation in simplifier.generate(texts, fallback=fallback):
            assert generation.text.splitlines() == [generation.text]
            assert not any(ord(c) < 32 or c in "\x7f\x85\u2028\u2029" for c in generation.text), generation.text


def test_an_n_best_line_marks_the_source_the_fallback_returned_and_the_outputs_it_rejected(tmp_path, capsys):
    from wean.cli import main

    text = "The ticket costs £50 — about €60 — and is valid in Zürich."
    (tmp_path / "in.txt").write_text(text + "\n", encoding="utf-8")
    assert main(["simplify", "--input", str(tmp_path / "in.txt"), "--nbest", "3"]) == 0
    first, *rest = json.loads(capsys.readouterr().out)["nbest"]  # the warning went to stderr
    assert first == {"text": text, "fell_back": True}  # no score the search never gave it
    assert rest and all(entry["rejected"] and "score" in entry for entry in rest)


def test_wean_simplify_on_the_command_line(simplifier):
    result = subprocess.run([WEAN, "simplify", SENTENCE], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout == simplifier.generate([SENTENCE])[0].text + "\n"


def test_load_takes_the_device_and_quantization_of_the_generator_it_returns():
    generator = wean.load(device="cpu", quantization="int8")
    assert next(generator.model.parameters()).device.type == "cpu"
    assert "Quantized" in type(generator.model.decoder.rnn).__name__ or "quantized" in type(
        generator.model.decoder.rnn).__module__


def test_texts_no_longer_wanted_come_back_none_and_the_others_unchanged(simplifier):
    """``wanted`` is asked per text, across the sentences a text is split into: text 1 (two
    sentences) is dropped, the others come out as they do alone."""
    texts = [SENTENCE, "He was born in Paris. He later moved to the city of London.", "It is a small town."]
    full = simplifier.generate(texts)
    asked = []

    def wanted(i):
        asked.append(i)
        return i != 1

    partial = simplifier.generate(texts, wanted=wanted)
    assert partial[1] is None and 1 in asked
    assert [g.text for g in partial[::2]] == [g.text for g in full[::2]]
    assert all(g is None for g in simplifier.generate(texts, wanted=lambda i: False))
