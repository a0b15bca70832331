"""SARI against EASSE's values, every variant."""

from functools import lru_cache

import pytest

from conftest import SHARED, parity_records, record_id
from wean.evaluation.sari import corpus_sari, sentence_sari
from wean.textio import read_lines


# Tighter than the 0.01 the field needs: the implementation reproduces EASSE to float rounding.
TOLERANCE = 1e-6


@lru_cache(maxsize=None)
def _testset(testset: str):
    folder = SHARED / "metric-parity" / testset
    references = sorted(folder.glob("ref.*.txt"), key=lambda p: int(p.name.split(".")[1]))
    return read_lines(folder / "orig.txt"), [read_lines(p) for p in references]


@lru_cache(maxsize=None)
def _system(testset: str, system: str):
    return read_lines(SHARED / "metric-parity" / testset / f"{system}.txt")


@pytest.mark.parametrize("record", parity_records("sari"), ids=record_id)
def test_sari_matches_easse(record):
    sources, references = _testset(record["testset"])
    outputs = _system(record["testset"], record["system"])
    variant = record["variant"]
    if variant.startswith("sentence"):
        i = record["index"]
        scores = sentence_sari(
            sources[i], outputs[i], [stream[i] for stream in references],
            variant="default" if variant == "sentence" else "del-precision",
            lowercase=record["lowercase"], tokenizer=record["tokenizer"],
        )
    else:
        scores = corpus_sari(sources, outputs, references, variant=variant, lowercase=record["lowercase"])
    assert scores.as_dict()[record["metric"]] == pytest.approx(record["value"], abs=TOLERANCE)
