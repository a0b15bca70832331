"""The data root: --data-root, else $WEAN_DATA_ROOT, never a guess; ${WEAN_DATA_ROOT} in a
config's data paths expanded where they are read, kept as written in the model directory."""

from __future__ import annotations

import dataclasses
import json

import pytest
import yaml

from synthetic import tiny_config, write_corpus
from wean.cli import main
from wean.data.root import data_path, data_root, portable_path
from wean.errors import WeanError
from wean.training import Trainer


def test_the_root_is_the_option_else_the_variable_else_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("WEAN_DATA_ROOT", str(tmp_path))
    assert data_root() == tmp_path
    assert data_root(tmp_path / "..") == tmp_path / ".."
    with pytest.raises(WeanError, match=r"data root .*missing \(--data-root\) is not a folder"):
        data_root(tmp_path / "missing")
    monkeypatch.setenv("WEAN_DATA_ROOT", str(tmp_path / "missing"))
    with pytest.raises(WeanError, match=r"\(\$WEAN_DATA_ROOT\) is not a folder"):
        data_root()
    monkeypatch.delenv("WEAN_DATA_ROOT")
    with pytest.raises(WeanError, match="no data root: pass --data-root DIR or set WEAN_DATA_ROOT"):
        data_root()


def test_config_paths_expand_the_placeholder_only_at_their_start(tmp_path, monkeypatch):
    monkeypatch.setenv("WEAN_DATA_ROOT", str(tmp_path))
    assert data_path("${WEAN_DATA_ROOT}/kauchak_v2/train") == tmp_path / "kauchak_v2" / "train"
    assert str(data_path("data/x/train")) == "data/x/train"
    with pytest.raises(WeanError, match=r"may only begin a data path"):
        data_path("data/${WEAN_DATA_ROOT}/train")
    assert data_path("$WEAN_DATA_ROOT/kauchak_v2/train") == tmp_path / "kauchak_v2" / "train"  # the shell's spelling
    monkeypatch.delenv("WEAN_DATA_ROOT")
    with pytest.raises(WeanError, match=r"^\$\{WEAN_DATA_ROOT\}/x: WEAN_DATA_ROOT is not set"):
        data_path("${WEAN_DATA_ROOT}/x")


def test_training_reads_under_the_root_and_keeps_the_placeholder(tmp_path, monkeypatch):
    write_corpus(tmp_path / "root" / "toy", train=100, valid=10)
    monkeypatch.setenv("WEAN_DATA_ROOT", str(tmp_path / "root"))
    config = tiny_config(tmp_path, tmp_path / "model")
    config = dataclasses.replace(config, data=dataclasses.replace(
        config.data, train="${WEAN_DATA_ROOT}/toy/train", valid="${WEAN_DATA_ROOT}/toy/valid"))
    Trainer(config)
    saved = yaml.safe_load((tmp_path / "model" / "config.yaml").read_text(encoding="utf-8"))
    assert saved["data"]["train"] == "${WEAN_DATA_ROOT}/toy/train"  # no machine's folder in the model


def test_a_run_resumes_whichever_spelling_leads_to_its_data(tmp_path, monkeypatch):
    """A run saved with a relative data path resumes under ${WEAN_DATA_ROOT}/... naming the same
    files; other files are refused, naming the key."""
    import dataclasses

    write_corpus(tmp_path / "root" / "toy", train=100, valid=10)
    write_corpus(tmp_path / "root" / "other", train=100, valid=10)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WEAN_DATA_ROOT", str(tmp_path / "root"))
    config = tiny_config(tmp_path, tmp_path / "model", max_updates=2, batch_size=16)
    relative = dataclasses.replace(config.data, train="root/toy/train", valid="root/toy/valid")
    Trainer(dataclasses.replace(config, data=relative)).train()
    placed = dataclasses.replace(config.data, train="${WEAN_DATA_ROOT}/toy/train", valid="${WEAN_DATA_ROOT}/toy/valid")
    Trainer(dataclasses.replace(config, data=placed), resume=True)
    other = dataclasses.replace(placed, train="${WEAN_DATA_ROOT}/other/train")
    with pytest.raises(WeanError, match="data.train differs from the run being resumed"):
        Trainer(dataclasses.replace(config, data=other), resume=True)


def test_a_benchmark_without_a_root_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("WEAN_DATA_ROOT", raising=False)
    (tmp_path / "out.txt").write_text("a\n", encoding="utf-8")
    assert main(["evaluate", "--hyp", str(tmp_path / "out.txt"), "--benchmark", "turkcorpus-test"]) != 0
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and "no data root" in error


def test_records_name_files_under_the_root_by_the_placeholder(tmp_path, monkeypatch):
    (tmp_path / "root" / "set").mkdir(parents=True)
    monkeypatch.setenv("WEAN_DATA_ROOT", str(tmp_path / "root"))
    assert portable_path(tmp_path / "root" / "set" / "test.src") == "${WEAN_DATA_ROOT}/set/test.src"
    assert portable_path(tmp_path / "elsewhere.txt") == str(tmp_path / "elsewhere.txt")
    monkeypatch.delenv("WEAN_DATA_ROOT")
    assert portable_path(tmp_path / "root" / "set" / "test.src") == str(tmp_path / "root" / "set" / "test.src")
    # a command's --data-root names it as the variable would
    assert portable_path(tmp_path / "root" / "set" / "test.src", tmp_path / "root") == "${WEAN_DATA_ROOT}/set/test.src"


def test_an_evaluation_record_names_benchmark_files_under_the_data_root_option(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("WEAN_DATA_ROOT", raising=False)
    folder = tmp_path / "root" / "turkcorpus" / "case_detok"
    folder.mkdir(parents=True)
    (folder / "test.src").write_text("a b c\n", encoding="utf-8")
    for k in range(8):
        (folder / f"test.ref.{k}").write_text("a b\n", encoding="utf-8")
    (tmp_path / "out.txt").write_text("a b\n", encoding="utf-8")
    assert main(["evaluate", "--hyp", str(tmp_path / "out.txt"), "--benchmark", "turkcorpus-test", "--data-root",
                 str(tmp_path / "root"), "--metrics", "bleu", "--json"]) == 0
    inputs = json.loads(capsys.readouterr().out)["inputs"]
    assert inputs["source"]["path"] == "${WEAN_DATA_ROOT}/turkcorpus/case_detok/test.src"
    assert inputs["references"][7]["path"] == "${WEAN_DATA_ROOT}/turkcorpus/case_detok/test.ref.7"
