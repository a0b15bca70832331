"""Every named benchmark's files lie where the table says, with one line per source line in every
reference; the ASSET-based ones are TurkCorpus tune's sentences, line for line."""

from __future__ import annotations

import pytest

from wean.evaluation import BENCHMARKS, get_benchmark
from wean.textio import read_lines


@pytest.mark.parametrize("name", sorted(BENCHMARKS))
def test_a_benchmark_has_a_reference_line_for_every_source_line(name, data_dir):
    source, references = BENCHMARKS[name].paths(data_dir)
    lines = len(read_lines(source))
    assert lines > 0
    assert [len(read_lines(reference)) for reference in references] == [lines] * len(references)


def test_asset_valid_is_turkcorpus_tune_line_for_line(data_dir):
    """The 18-reference benchmark pairs TurkCorpus tune's sources with ASSET's references, so its
    lines must be the same sentences; they differ only in spacing ("1904 - 1961", "U. S.")."""
    asset, asset_references = get_benchmark("asset-valid").paths(data_dir)
    tune, references = get_benchmark("turkcorpus-asset-tune").paths(data_dir)
    assert len(references) == 18 and references[8:] == asset_references

    def squeezed(line: str) -> str:
        return "".join(line.split())

    differing = [(a, t) for a, t in zip(read_lines(asset), read_lines(tune), strict=True) if a != t]
    assert len(differing) == 68
    assert all(squeezed(a) == squeezed(t) for a, t in differing)
