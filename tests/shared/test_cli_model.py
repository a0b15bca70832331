"""``wean test``: outputs and scores per benchmark."""

import json

from wean.cli import main


def test_wean_test_writes_outputs_and_scores_per_benchmark(model_dir, data_dir, tmp_path, capsys):
    out = tmp_path / "results"
    assert main(["test", "--model", str(model_dir), "--benchmark", "wikismall-test", "--system", "tiny",
                 "--out-dir", str(out), "--data-root", str(data_dir), "--beam", "2"]) == 0
    assert "tiny on wikismall-test: sari" in capsys.readouterr().out
    outputs = (out / "tiny.wikismall-test.txt").read_text().splitlines()
    assert len(outputs) == 100  # one line per source line, in order
    record = json.loads((out / "metrics.json").read_text())["tiny"]["wikismall-test"]
    assert record["inputs"]["benchmark"] == "wikismall-test" and record["generation"] == {"beam": 2, "detokenize": "none"}
    assert {"sari", "bleu", "multi_bleu", "fkgl"} <= set(record["scores"])
    assert main(["test", "--model", str(model_dir), "--benchmark", "wikismall-test", "--system", "plain",
                 "--out-dir", str(out), "--data-root", str(data_dir), "--beam", "2", "--plain-text"]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert set(metrics) == {"tiny", "plain"} and metrics["plain"]["wikismall-test"]["generation"]["plain_text"]
