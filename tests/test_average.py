"""Checkpoint averaging: N copies of one checkpoint give it back, two give their mean, the result
is a model directory like any other, and what cannot be averaged is one line."""

from __future__ import annotations

import pytest
import torch
from safetensors.torch import load_file

from synthetic import tiny_config, write_corpus
from wean.cli import main
from wean.errors import WeanError
from wean.inference.generator import load
from wean.tensor_files import WEIGHTS
from wean.training import Trainer
from wean.training.average import average_checkpoints, choose_checkpoints, run_checkpoints


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A tiny run that keeps three validated checkpoints."""
    folder = tmp_path_factory.mktemp("average")
    data = write_corpus(folder / "data", train=200, valid=10)
    Trainer(tiny_config(data, folder / "model", max_updates=12, validate_every=4, keep_best=3,
                        early_stopping_patience=0, selection_metric="loss")).train()
    return folder / "model"


def weights(path):
    return load_file(str(path / WEIGHTS))


def test_copies_of_one_checkpoint_average_to_it_bit_for_bit(run, tmp_path):
    checkpoints = run_checkpoints(run)
    assert [p.name for p in checkpoints] == ["step-00000004", "step-00000008", "step-00000012"]
    average_checkpoints(run, [checkpoints[1]] * 3, tmp_path / "same")
    expected, averaged = weights(checkpoints[1]), weights(tmp_path / "same")
    assert expected.keys() == averaged.keys()
    assert all(torch.equal(expected[name], averaged[name]) for name in expected)


def test_two_checkpoints_average_to_their_mean_and_the_result_generates(run, tmp_path, capsys):
    assert main(["average", str(run), "--last", "2", "--out", str(tmp_path / "mean")]) == 0
    assert "the mean of 2 checkpoints (step-00000008, step-00000012)" in capsys.readouterr().out
    first, second = (weights(p) for p in run_checkpoints(run)[-2:])
    averaged = weights(tmp_path / "mean")
    for name in first:
        mean = ((first[name].double() + second[name].double()) / 2).to(first[name].dtype)
        assert torch.equal(averaged[name], mean), name
    assert not torch.equal(averaged[next(iter(first))], first[next(iter(first))])  # it did move
    outputs = load(tmp_path / "mean").generate(["a b c d e"], beam=2)
    assert outputs[0].text.strip()


def test_what_cannot_be_averaged_is_one_line(run, tmp_path, capsys):
    with pytest.raises(WeanError, match="4 checkpoints asked for, 3 kept"):
        choose_checkpoints(run, last=4)
    with pytest.raises(WeanError, match="'step-9': neither one of"):
        choose_checkpoints(run, names=["step-9"])
    # a checkpoint of a run with another architecture
    data = run.parent / "data"
    other = tmp_path / "other"
    config = tiny_config(data, other, max_updates=2, validate_every=2).to_dict()
    config["model"]["embedding_size"] = 16
    from wean.config import config_from_dict

    Trainer(config_from_dict(config)).train()
    with pytest.raises(WeanError, match="weights do not fit this model's configuration"):
        average_checkpoints(run, [run_checkpoints(run)[0], run_checkpoints(other)[0]], tmp_path / "mixed")
    assert main(["average", str(run), "--last", "1", "--out", str(run)]) == 1
    assert "holds a model already" in capsys.readouterr().err
