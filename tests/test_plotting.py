import json

import pytest

from wean.cli import main
from wean.errors import WeanError
from wean.plotting import plot_curves


def fake_run(folder, values):
    folder.mkdir()
    records = [{"epochs": i + 1.0, "updates": 10 * (i + 1), "bleu": v, "sari": v / 2, "loss": 5 - v / 10,
                "perplexity": 2.0} for i, v in enumerate(values)]
    (folder / "validations.json").write_text(json.dumps(records))
    return folder


def test_curves_of_several_runs_are_written_as_png(tmp_path):
    runs = [fake_run(tmp_path / "a", [10, 20, 25]), fake_run(tmp_path / "b", [30, 31, 31.5])]
    out = tmp_path / "figure" / "bleu.png"
    plot_curves(runs, "bleu", out, labels=["Seq2seq", "WEAN"])
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 5000


def test_convergence_is_the_first_epoch_within_95_percent_of_the_best(tmp_path, capsys):
    from wean.plotting import convergence, read_validations

    run = fake_run(tmp_path / "a", [10, 28, 29, 30, 29.5])
    assert convergence(read_validations(run), "bleu") == {
        "best": 30, "best_epoch": 4.0, "epochs_to_95pct": 3.0, "still_improving": False
    }
    assert main(["plot", str(run), "--labels", "WEAN", "--out", str(tmp_path / "x.png")]) == 0
    assert "WEAN: best bleu 30.00 at epoch 4.00; 95% of it first at epoch 3.00\n" in capsys.readouterr().out
    rising = fake_run(tmp_path / "b", [10, 20, 30])
    assert convergence(read_validations(rising), "bleu")["still_improving"]
    assert main(["plot", str(rising), "--labels", "Seq2seq", "--out", str(tmp_path / "y.png")]) == 0
    assert "(still improving at the last validation: lower bounds)" in capsys.readouterr().out


def test_plot_errors_are_one_line(tmp_path, capsys):
    with pytest.raises(WeanError, match="validations.json: not found"):
        plot_curves([tmp_path], "bleu", tmp_path / "x.png")
    run = fake_run(tmp_path / "a", [1.0])
    assert main(["plot", str(run), "--labels", "a,b", "--out", str(tmp_path / "x.png")]) == 1
    assert "--labels has 2 names for 1 runs" in capsys.readouterr().err


def test_a_kept_copy_of_validations_json_plots_like_its_run(tmp_path, capsys):
    # results/ keep each run's validations.json: its curve outlives the run directory
    run = fake_run(tmp_path / "a", [10, 28, 29, 30, 29.5])
    kept = tmp_path / "kept" / "wean-seed1.json"
    kept.parent.mkdir()
    kept.write_bytes((run / "validations.json").read_bytes())
    assert main(["plot", str(kept), "--out", str(tmp_path / "x.png")]) == 0
    assert "wean-seed1: best bleu 30.00 at epoch 4.00" in capsys.readouterr().out
    assert (tmp_path / "x.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
