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
