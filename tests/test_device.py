"""Where models run: the device setting, batches moved whole, and training and generation on a GPU
(those skip where PyTorch sees none, as in CI; they were run on a lent H100)."""

import dataclasses

import pytest
import torch

from synthetic import reverse_pairs, tiny_config, write_corpus
from wean.config import config_from_dict
from wean.data.corpus import Batch, Example, collate
from wean.errors import WeanError
from wean.inference.generator import load
from wean.models.device import resolve_device
from wean.training import Trainer

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="PyTorch sees no CUDA GPU")


def test_auto_takes_the_gpu_only_where_there_is_one():
    assert resolve_device("auto").type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert resolve_device("cpu").type == "cpu"


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is here")
def test_asking_for_cuda_without_a_gpu_is_a_clear_error():
    with pytest.raises(WeanError, match="sees no CUDA GPU"):
        resolve_device("cuda")


def test_taking_a_gpu_keeps_fp32_convolutions_and_products_in_fp32(monkeypatch):
    """PyTorch's default lets cuDNN convolutions (the conv encoder) run in TF32 on Ampere and newer."""
    flags = (torch.backends.cudnn, torch.backends.cuda.matmul)
    saved = [f.allow_tf32 for f in flags]  # process-wide: put back after the test
    try:
        for f in flags:
            f.allow_tf32 = True
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        assert resolve_device("cuda").type == "cuda"
        assert [f.allow_tf32 for f in flags] == [False, False]
        if hasattr(torch.backends.cudnn, "conv"):  # PyTorch >= 2.9 names the precision per operation too
            assert "tf32" not in (torch.backends.cudnn.conv.fp32_precision, torch.backends.cudnn.rnn.fp32_precision)
    finally:
        for f, value in zip(flags, saved):
            f.allow_tf32 = value


def test_an_unknown_device_is_refused_by_the_config():
    with pytest.raises(WeanError, match="training.device is 'gpu'"):
        config_from_dict({"training": {"device": "gpu"}})


def test_a_batch_moves_every_tensor():
    batch = collate([Example(0, [4, 5, 6], [7, 8]), Example(1, [4], [9, 9, 9])]).to(torch.device("meta"))
    assert all(getattr(batch, f.name).device.type == "meta" for f in dataclasses.fields(Batch))


@needs_cuda
def test_a_small_model_learns_on_the_gpu_and_generates_on_either_device(tmp_path):
    data = write_corpus(tmp_path / "data")
    Trainer(tiny_config(data, tmp_path / "model", device="cuda")).train()
    sources, targets = reverse_pairs(200, seed=7)
    on_gpu = [g.text for g in load(tmp_path / "model", device="cuda").generate(sources, beam=5)]
    on_cpu = [g.text for g in load(tmp_path / "model", device="cpu").generate(sources, beam=5)]
    assert sum(o == t for o, t in zip(on_gpu, targets)) / len(targets) >= 0.95
    assert sum(a == b for a, b in zip(on_gpu, on_cpu)) / len(targets) >= 0.98  # rounding may flip a tie


@needs_cuda
def test_resume_on_the_gpu_restores_its_dropout_masks(tmp_path):
    data = write_corpus(tmp_path / "data", train=300, valid=20)
    settings = dict(max_updates=16, validate_every=5, batch_size=16, max_epochs=10, device="cuda")

    def config(name, **changes):
        config = tiny_config(data, tmp_path / name, **{**settings, **changes})
        config.model.dropout = 0.3  # masks drawn from the GPU's generator
        return config

    full = Trainer(config("full")).train()
    Trainer(config("resumed", max_updates=8)).train()
    resumed = Trainer(config("resumed"), resume=True).train()
    # GPU kernels sum in no fixed order, so not bit-exact; a different dropout mask moves it by far more
    assert resumed.losses[8:] == pytest.approx(full.losses[8:16], rel=1e-4)
