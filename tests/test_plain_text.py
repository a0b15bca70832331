"""Plain text as people write it: paragraphs are simplified sentence by sentence and come back as
one text, a sentence longer than the model was trained on comes back unchanged with a warning,
and with byte fallback every character can be read and <unk> is never written."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from synthetic import tiny_config, write_corpus
from wean.cli import main
from wean.data.sentences import split_sentences
from wean.data.vocabulary import UNK_ID
from wean.inference.generator import load
from wean.inference.pipeline import banned_ids
from wean.training import Trainer


def test_sentences_split_where_people_expect():
    paragraph = ("The festival was cancelled. Heavy rainfall had flooded the venue, which is located near the "
                 "river. Organisers subsequently announced a new date.")
    assert len(split_sentences(paragraph)) == 3
    assert split_sentences("Mr. Smith moved to the U.S. in 1990. He stayed.") == [
        "Mr. Smith moved to the U.S. in 1990.", "He stayed."]
    assert split_sentences("It cost $5 (approx.) then.") == ["It cost $5 (approx.) then."]
    assert split_sentences("   ") == []


def test_a_language_models_source_token_is_read_whole_and_other_sources_as_the_corpus_is_written():
    from wean.config import TokenizerConfig
    from wean.data.corpus import LM_SOURCE
    from wean.data.plain_text import PlainText

    plain_text = PlainText(TokenizerConfig(corpus_tokenization="ptb"))
    assert plain_text.to_model_text(LM_SOURCE) != LM_SOURCE  # tokenized as text it would be split
    assert plain_text.to_model_source(LM_SOURCE) == LM_SOURCE
    assert plain_text.to_model_source("It cost $5, then.") == plain_text.to_model_text("It cost $5, then.")


@pytest.fixture(scope="module")
def copier(tmp_path_factory):
    folder = tmp_path_factory.mktemp("plain")
    data = write_corpus(folder / "data", train=600, valid=20, reverse=False)
    config = tiny_config(data, folder / "model", max_epochs=4)
    config.data.max_tokens, config.generation.plain_text = 20, True
    Trainer(config).train()
    return folder / "model"


def test_a_paragraph_is_simplified_sentence_by_sentence(copier):
    generator = load(copier)
    sentences = ["a b c d e .", "f g h i .", "j a b c d e f ."]
    whole = generator.generate([" ".join(sentences)], beam=2)[0]
    parts = generator.generate(sentences, beam=2)
    assert whole.text == " ".join(part.text for part in parts)
    assert whole.tokens == [token for part in parts for token in part.tokens]
    assert whole.score == pytest.approx(sum(part.score for part in parts))
    # one attention block per sentence, and the <eos> row of the last: sparse, as a long paragraph's
    # dense matrix would be gigabytes of zeros
    assert whole.attention.is_sparse
    attention = whole.attention.to_dense()
    assert attention.shape == (len(whole.tokens) + 1, len(whole.source_tokens))
    first = parts[0].attention[:-1]
    assert torch.equal(attention[: first.size(0), : first.size(1)], first)
    assert attention[: first.size(0), first.size(1):].abs().sum() == 0
    assert torch.equal(attention[-1, -parts[-1].attention.size(1):], parts[-1].attention[-1])
    # benchmarks read each line as one sentence
    unsplit = generator.generate([" ".join(sentences)], beam=2, split_sentences=False)[0]
    assert len(unsplit.source_tokens) == 19 and unsplit.warning is None


def test_a_paragraph_prints_no_warning_of_pytorchs(copier):
    """PyTorch warns once per process about a sparse tensor built without saying whether to check
    it: in a fresh process, a paragraph's attention must not print that to the user's screen."""
    code = ("import sys; from wean.inference.generator import load; "
            "load(sys.argv[1]).generate(['a b c d e . f g h i .'], beam=2)")
    result = subprocess.run([sys.executable, "-W", "default", "-c", code, str(copier)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert "Sparse invariant checks" not in result.stderr, result.stderr


def test_progress_is_told_batch_by_batch_in_sentences(copier):
    """A long text is one line but many sentences: progress counts those, after each batch."""
    generator = load(copier)
    told = []
    text = " ".join(["a b c d e ."] * 10)
    generator.generate([text, "f g h ."], batch_size=4, progress=lambda done, total: told.append((done, total)))
    assert told == [(4, 11), (8, 11), (11, 11)]


def test_an_over_long_sentence_comes_back_unchanged_with_a_warning(copier, tmp_path, capsys):
    generator = load(copier)
    long = " ".join("abcdefghij"[i % 10] for i in range(30)) + " ."
    result = generator.generate([f"a b c . {long}"])[0]
    assert result.text.endswith(long) and "longer than any this model was trained on" in result.warning
    assert result.text.startswith(generator.generate(["a b c ."])[0].text)
    (tmp_path / "in.txt").write_text(f"a b c .\n{long}\n")
    assert main(["generate", "--model", str(copier), "--input", str(tmp_path / "in.txt")]) == 0
    captured = capsys.readouterr()
    assert captured.out.splitlines()[1] == long  # one line in, one line out
    assert captured.err.strip() == (f"warning: {tmp_path / 'in.txt'}:2: a sentence of 31 tokens, longer than any "
                                    "this model was trained on (data.max_tokens 20), was left unchanged")
    # a paragraph: a warning line per sentence concerned, each naming it
    (tmp_path / "paragraph.txt").write_text(f"{long} a b c . {long}\n")
    assert main(["generate", "--model", str(copier), "--input", str(tmp_path / "paragraph.txt")]) == 0
    where = f"warning: {tmp_path / 'paragraph.txt'}:1:"
    assert capsys.readouterr().err.strip().splitlines() == [
        f"{where} sentence {k}: a sentence of 31 tokens, longer than any this model was trained on (data.max_tokens "
        "20), was left unchanged" for k in (1, 3)]


LINE_TROUBLE = ["\r", "\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\t", "\x1b[31m", "\x00", "\ufffd"]


@pytest.mark.parametrize("nbest", [1, 2])
def test_n_lines_in_are_n_lines_out_whatever_the_characters(tmp_path, nbest):
    """Inside outputs the model writes and over-long inputs it gives back unchanged, every
    character a reader takes for a line end, tabs and control characters: each output is one line
    to str.splitlines(), to open() and to wc -l, as text and as n-best JSON."""
    import json

    from wean.pretrained import SIMPLIFIER

    long = " ".join(["word"] * 90)  # beyond the shipped model's 80 tokens: given back as it is
    lines = [f"The {mark} committee met {mark} in 1998." for mark in LINE_TROUBLE]
    lines += [f"{long} {mark} {long}" for mark in LINE_TROUBLE]
    (tmp_path / "in.txt").write_bytes(("\n".join(lines) + "\n").encode("utf-8"))
    out = tmp_path / "out.txt"
    assert main(["simplify", "--model", str(SIMPLIFIER), "--input", str(tmp_path / "in.txt"), "--output", str(out),
                 "--beam", str(nbest), "--nbest", str(nbest)]) == 0
    data = out.read_bytes()
    text = data.decode("utf-8")
    assert len(text.splitlines()) == len(lines) and data.count(b"\n") == len(lines)
    with open(out, encoding="utf-8") as file:  # universal newlines: \r is a line end too
        assert len(file.readlines()) == len(lines)
    assert "\ufffd" in text.splitlines()[-1] or "\\ufffd" in text.splitlines()[-1]  # kept, not dropped
    if nbest > 1:
        assert [json.loads(line)["source"] for line in text.splitlines()][:2] == lines[:2]


def test_with_byte_fallback_unk_is_never_written(tmp_path):
    data = write_corpus(tmp_path / "data", train=300, valid=10, reverse=False)
    config = tiny_config(data, tmp_path / "model", max_updates=4, validate_every=4)
    config.data.tokenizer.type, config.data.tokenizer.vocab_size = "bpe", 300
    config.data.tokenizer.byte_fallback = True
    Trainer(config.validate()).train()
    generator = load(tmp_path / "model")
    assert UNK_ID in banned_ids(generator.assets)
    text = "a b £50 — Zürich c"
    assert UNK_ID not in generator.assets.source_vocabulary.encode(generator.tokenizer.encode(text))
    for generation in generator.generate([text, "“é ã”"], beam=3):
        assert "<unk>" not in generation.tokens and "\u2047" not in generation.text
