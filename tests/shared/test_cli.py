"""``wean evaluate`` on the named benchmarks and the data root."""

import json

import pytest

from wean.cli import main


def run(capsys, *argv):
    status = main(["evaluate", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_identity_on_turkcorpus_test_has_high_bleu_and_low_sari(data_dir, capsys):
    """The known behaviour of copying the source: BLEU is high against 8 cautious references,
    SARI is low because nothing is added or deleted."""
    source = data_dir / "turkcorpus/case_detok/test.src"
    status, out, _ = run(capsys, "--hyp", str(source), "--benchmark", "turkcorpus-test",
                         "--data-root", str(data_dir), "--json")
    scores = json.loads(out)["scores"]
    assert status == 0
    assert scores["bleu"] > 90 and scores["sari"] < 30
    assert scores["sari_add"] == 0.0 and scores["sari_del"] == 0.0
    assert scores["identical_to_source"] == 100.0 and scores["compression_ratio"] == 1.0


def test_data_root_from_environment(data_dir, capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("WEAN_DATA_ROOT", str(data_dir))
    monkeypatch.chdir(tmp_path)  # so that ../shared/data is not found by accident
    hyp = data_dir / "lcsts/part3_label3plus.dst"
    status, out, _ = run(capsys, "--hyp", str(hyp), "--benchmark", "lcsts-test", "--json")
    record = json.loads(out)
    assert status == 0
    assert record["signatures"]["rouge"]["tokenization"] == "char"
    assert record["scores"]["rouge1"] == pytest.approx(100.0)  # the references themselves
