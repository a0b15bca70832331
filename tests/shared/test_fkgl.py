"""FKGL against EASSE's values."""

import pytest

from conftest import SHARED, parity_records, record_id
from wean.evaluation.fkgl import corpus_fkgl
from wean.textio import read_lines


@pytest.mark.parametrize("record", parity_records("fkgl"), ids=record_id)
def test_fkgl_matches_easse(record):
    outputs = read_lines(SHARED / "metric-parity" / record["testset"] / f"{record['system']}.txt")
    assert corpus_fkgl(outputs) == pytest.approx(record["value"], abs=1e-6)
