"""bench/timing.py: how every speed benchmark turns its rounds into rates and ratios, and reports them."""

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "bench"))
from timing import CPU_FLAGS, cpu, interleaved, rates, report  # noqa: E402


def test_rounds_are_interleaved_and_counted():
    calls = []
    times = interleaved({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, rounds=3)
    assert calls == ["a", "b"] * 3
    assert {name: len(values) for name, values in times.items()} == {"a": 3, "b": 3}


def test_fewer_than_three_rounds_is_refused():
    with pytest.raises(ValueError, match="at least 3"):
        interleaved({"a": lambda: None}, rounds=2)


def test_rates_are_medians_and_the_ratio_is_the_median_of_per_round_ratios():
    times = {"base": [2.0, 6.0, 2.0, 2.0, 2.0], "new": [1.0, 4.0, 1.0, 1.0, 1.0]}  # round 2 under load
    record = rates(times, amount=10, baseline="base")
    assert record["base"] == pytest.approx(5.0) and record["new"] == pytest.approx(10.0)
    assert record["new_over_base"] == pytest.approx(2.0)
    assert "base_over_base" not in record
    # per-round ratios 0.5, 2, 2 (median 2) where the ratio of the medians (2 / 2) would give 1
    uneven = {"base": [1.0, 2.0, 4.0], "new": [2.0, 1.0, 2.0]}
    assert rates(uneven, 1, "base")["new_over_base"] == pytest.approx(2.0)


def test_the_report_is_printed_and_kept_where_an_out_folder_is_given(tmp_path, capsys):
    results = {"new_over_base": 2.0, "setting": {"rounds": 3}}
    report(results, None)
    assert json.loads(capsys.readouterr().out) == results
    report(results, tmp_path / "bench")
    assert json.loads((tmp_path / "bench" / "metrics.json").read_text()) == results


def test_every_result_can_say_which_cpu_it_is_from(tmp_path, monkeypatch):
    """A speed figure holds on one CPU family: the record names the model and the flags that pick kernels."""
    info = tmp_path / "cpuinfo"
    info.write_text("model name\t: Intel(R) Xeon(R) Platinum 8481C\nflags\t\t: fpu avx2 fma avx512f amx_tile amx_bf16 sse\n")
    import timing

    real_path = timing.Path
    monkeypatch.setattr(timing, "Path", lambda text: info if text == "/proc/cpuinfo" else real_path(text))
    described = cpu()
    assert described["model"] == "Intel(R) Xeon(R) Platinum 8481C"
    assert described["flags"] == ["avx2", "fma", "avx512f", "amx_bf16", "amx_tile"]
    assert set(described["flags"]) <= set(CPU_FLAGS) and described["cores"] >= 1
