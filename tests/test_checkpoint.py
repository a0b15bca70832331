"""Weights files: tied tensors stored once, views of one buffer (how cuDNN packs an LSTM on a GPU)
saved as they are, files of earlier wean versions still read, misfits refused by name; a kill
while a checkpoint is rewritten leaves a whole copy."""

from pathlib import Path

import pytest
import torch
from safetensors import safe_open
from safetensors.torch import save_model
from torch import nn

from wean.errors import WeanError
from wean.tensor_files import load_weights, save_weights


class Tied(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = nn.Embedding(7, 3)
        self.decoder = nn.Embedding(7, 3)
        self.decoder.weight = self.encoder.weight
        self.projection = nn.Linear(3, 2)


class Packed(nn.Module):
    """Two parameters that are views of one flat buffer, as cuDNN's flattened LSTM weights."""

    def __init__(self):
        super().__init__()
        flat = torch.randn(10)
        self.first = nn.Parameter(flat[:6].view(2, 3))
        self.second = nn.Parameter(flat[6:].view(4))


def test_tied_weights_are_stored_once_and_come_back_tied(tmp_path):
    model = Tied()
    save_weights(model, tmp_path / "w.safetensors")
    with safe_open(str(tmp_path / "w.safetensors"), "pt") as saved:
        assert len(list(saved.keys())) == 3  # one embedding table, the projection's weight and bias
    fresh = Tied()
    load_weights(fresh, tmp_path / "w.safetensors")
    assert torch.equal(fresh.encoder.weight, model.encoder.weight)
    assert fresh.decoder.weight is fresh.encoder.weight
    assert torch.equal(fresh.projection.weight, model.projection.weight)


def test_views_of_one_buffer_are_saved_each_whole(tmp_path):
    model = Packed()
    assert model.first.data_ptr() + 6 * 4 == model.second.data_ptr()  # really one buffer
    with pytest.raises(RuntimeError):  # what save_model does with them, hence our own writer
        save_model(model, str(tmp_path / "refused.safetensors"))
    save_weights(model, tmp_path / "w.safetensors")
    fresh = Packed()
    load_weights(fresh, tmp_path / "w.safetensors")
    assert torch.equal(fresh.first, model.first) and torch.equal(fresh.second, model.second)


def test_files_written_by_save_model_still_load(tmp_path):
    from wean.tensor_files import UnverifiedWeightsWarning

    model = Tied()
    save_model(model, str(tmp_path / "old.safetensors"))  # how wean wrote weights before
    fresh = Tied()
    with pytest.warns(UnverifiedWeightsWarning, match="no sha256"):  # loaded, but not silently
        load_weights(fresh, tmp_path / "old.safetensors")
    assert torch.equal(fresh.decoder.weight, model.encoder.weight)


def test_weights_of_another_shape_are_refused_by_name(tmp_path):
    save_weights(Tied(), tmp_path / "w.safetensors")
    other = Tied()
    other.projection = nn.Linear(3, 5)
    with pytest.raises(WeanError, match="do not fit.*projection.weight"):
        load_weights(other, tmp_path / "w.safetensors")


def test_a_kill_while_a_checkpoint_is_rewritten_leaves_a_whole_copy(tmp_path, monkeypatch):
    """The last save of a run rewrites the step ``latest`` names. Killed after the old copy was
    moved out of the way and before the new one was renamed in, the run must still resume."""
    import wean.tensor_files as checkpoint

    model = nn.Linear(3, 2)
    step = tmp_path / "step-00000010"
    checkpoint.save_checkpoint(step, model, {"updates": 10})
    saved = model.weight.detach().clone()

    real_replace = checkpoint.os.replace

    def killed_before_the_new_copy_is_renamed_in(source, target):
        if str(source).endswith(".tmp") and Path(target) == step:
            raise KeyboardInterrupt("kill -9")
        real_replace(source, target)

    with torch.no_grad():
        model.weight.add_(1.0)
    monkeypatch.setattr(checkpoint.os, "replace", killed_before_the_new_copy_is_renamed_in)
    with pytest.raises(KeyboardInterrupt):
        checkpoint.save_checkpoint(step, model, {"updates": 10, "finished": True})
    monkeypatch.setattr(checkpoint.os, "replace", real_replace)

    resumed = nn.Linear(3, 2)
    assert checkpoint.load_checkpoint(step, resumed) == {"updates": 10}
    assert torch.equal(resumed.weight, saved)
    checkpoint.save_checkpoint(step, model, {"updates": 10, "finished": True})  # the next save goes through
    assert checkpoint.load_checkpoint(step, resumed) == {"updates": 10, "finished": True}
    assert sorted(path.name for path in tmp_path.iterdir()) == ["step-00000010"]


def test_weights_files_follow_the_umask_like_the_rest_of_a_model_directory(tmp_path):
    import os

    from wean.tensor_files import save_checkpoint

    previous = os.umask(0o022)
    try:
        save_weights(nn.Linear(3, 2), tmp_path / "model.safetensors")
        save_checkpoint(tmp_path / "step-1", nn.Linear(3, 2), {"updates": 1})
    finally:
        os.umask(previous)
    for path in (tmp_path / "model.safetensors", tmp_path / "step-1" / "model.safetensors",
                 tmp_path / "step-1" / "training.safetensors"):
        assert path.stat().st_mode & 0o777 == 0o644, path  # safetensors' own writer made them 0600
