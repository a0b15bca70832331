"""The shipped simplifier on TurkCorpus."""

import pytest

import wean


@pytest.fixture(scope="module")
def simplifier():
    return wean.load()


def test_it_simplifies_turkcorpus_better_than_copying(simplifier, data_dir):
    """SARI above the identity baseline's 26.3 on the first 100 TurkCorpus test sentences."""
    from wean.evaluation import EvaluationSettings, evaluate
    from wean.textio import read_lines

    folder = data_dir / "turkcorpus/case_detok"
    sources = read_lines(folder / "test.src")[:100]
    references = [read_lines(folder / f"test.ref.{i}")[:100] for i in range(8)]
    outputs = [g.text for g in simplifier.generate(sources, beam=2)]
    settings = EvaluationSettings(metrics=("sari",))
    assert evaluate(outputs, sources, references, settings).scores["sari"] > \
        evaluate(sources, sources, references, settings).scores["sari"] + 3


def test_it_still_writes_its_committed_turkcorpus_outputs(simplifier, data_dir):
    """Generation is pinned: the first 40 outputs of its default pipeline
    (results/asset-simplifier/pg-seed1-default.turkcorpus-test.txt) and, with the checks and
    fallbacks off and the training's default control, the model's own beam
    (results/asset-simplifier/pg-seed1.turkcorpus-test.txt) come back byte for byte."""
    from pathlib import Path

    from wean.textio import read_lines

    sources = read_lines(data_dir / "turkcorpus/case_detok/test.src")[:40]
    results = Path(__file__).parents[2] / "results" / "asset-simplifier"
    outputs = [g.text for g in simplifier.generate(sources, plain_text=True, split_sentences=False)]
    assert outputs == read_lines(results / "pg-seed1-default.turkcorpus-test.txt")[:40]
    unguarded = simplifier.generate(sources, plain_text=True, split_sentences=False, fallback="none",
                                    names_and_numbers="any", fallback_words="any", fallback_control=[],
                                    control={"chars_ratio": 0.95, "levenshtein": 0.75, "word_rank": 0.75})
    assert [g.text for g in unguarded] == read_lines(results / "pg-seed1.turkcorpus-test.txt")[:40]
