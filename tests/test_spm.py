"""The source-side prediction module (Kiyono et al., PACLIC 2018)."""

import random

import pytest
import torch

from synthetic import tiny_config
from wean.data.corpus import IGNORE, Example, collate
from wean.data.vocabulary import EOS_ID, PAD_ID
from wean.inference.generator import load
from wean.models.spm import SourcePredictionModule
from wean.training import Trainer


def test_targets_are_continued_with_pad_up_to_the_source_length():
    short = Example(0, [5, 6, 7, 8, 9, 10], [5, 6, EOS_ID])  # J + 1 = 3 < I = 6
    long = Example(1, [5, 6], [5, 6, 7, EOS_ID])  # not shorter than its source: left as it is
    batch = collate([short, long], SourcePredictionModule(2, 30).extend_target)
    assert batch.target_output.tolist() == [[5, 6, EOS_ID, PAD_ID, PAD_ID, PAD_ID], [5, 6, 7, EOS_ID, IGNORE, IGNORE]]
    assert batch.target_input[0].tolist() == [2, 5, 6, EOS_ID, PAD_ID, PAD_ID]
    assert batch.target_tokens == 10
    plain = collate([short, long])
    assert plain.target_output.tolist() == [[5, 6, EOS_ID, IGNORE], [5, 6, 7, EOS_ID]]


def test_bag_of_words_loss_by_hand():
    spm = SourcePredictionModule(hidden_size=2, source_vocabulary_size=4, c=10.0)
    torch.nn.init.zeros_(spm.head.weight)
    torch.nn.init.zeros_(spm.head.bias)  # q_j uniform: 0.25 for each of the 4 words
    source = torch.tensor([[2, 3, 3, 0], [1, 0, 0, 0]])
    lengths = torch.tensor([3, 1])
    queries = torch.randn(2, 4, 2)  # the decoder ran 4 steps; each sentence counts its first I
    # sentence 1: q~ = 0.75 each, x~ = [0, 0, 1, 2] -> 0.5625 + 0.5625 + 0.0625 + 1.5625 = 2.75
    # sentence 2: q~ = 0.25 each, x~ = [0, 1, 0, 0] -> 3 * 0.0625 + 0.5625 = 0.75
    assert spm.bag_loss(queries, source, lengths).item() == pytest.approx((2.75 + 0.75) / 10)
    alignment = spm.alignment(queries, source)
    assert alignment.shape == (2, 4, 4) and torch.allclose(alignment, torch.full_like(alignment, 0.25))


def headline_corpus(folder, count, seed):
    """A lossy task: the target keeps the source's symbols after 'f' in the alphabet, in order."""
    rng = random.Random(seed)
    sources, targets = [], []
    while len(sources) < count:
        symbols = [rng.choice("abcdefghij") for _ in range(rng.randint(6, 12))]
        kept = [s for s in symbols if s > "e"]
        if kept and len(kept) < len(symbols):
            sources.append(" ".join(symbols))
            targets.append(" ".join(kept))
    return sources, targets


def test_model_with_spm_learns_a_lossy_task_and_never_emits_pad(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    for split, count, seed in (("train", 2000, 0), ("valid", 100, 1)):
        sources, targets = headline_corpus(data, count, seed)
        (data / f"{split}.src").write_text("\n".join(sources) + "\n")
        (data / f"{split}.dst").write_text("\n".join(targets) + "\n")
    config = tiny_config(data, tmp_path / "model", max_epochs=6)
    config.model.spm.enabled = True
    config.model.init_range = 0  # PyTorch's defaults: with uniform(-0.1, 0.1) it did not learn on an AVX2-only CPU
    state = Trainer(config).train()
    assert state.losses[-1] < state.losses[0] / 4
    model = load(tmp_path / "model")
    sources, targets = headline_corpus(None, 200, 7)
    outputs = model.generate(sources, beam=3)
    assert sum(o.text == t for o, t in zip(outputs, targets)) / len(targets) >= 0.9
    assert not any("<pad>" in o.tokens for o in outputs)
    # the trained module predicts the source's words: its bag is far closer to the true bag
    # than that of uniform predictions
    vocabulary = model.assets.source_vocabulary
    examples = [Example(i, vocabulary.encode(s.split()), vocabulary.encode(t.split(), add_eos=True))
                for i, (s, t) in enumerate(zip(sources[:50], targets[:50]))]
    batch = collate(examples, model.model.extend_target)
    uniform = SourcePredictionModule(64, len(vocabulary), config.model.spm.c)
    torch.nn.init.zeros_(uniform.head.weight)
    with torch.no_grad():
        queries = model.model(batch.source, batch.source_lengths, batch.target_input).queries
        trained_loss = model.model.spm.bag_loss(queries, batch.source, batch.source_lengths).item()
        uniform_loss = uniform.bag_loss(queries, batch.source, batch.source_lengths).item()
    assert trained_loss < 0.5 * uniform_loss  # measured: 0.39 of it after 6 epochs


def test_attention_figures_include_the_spm_alignment(tmp_path):
    from synthetic import write_corpus
    from wean.plotting import plot_attention_maps

    data = write_corpus(tmp_path / "data", train=40, valid=5)
    config = tiny_config(data, tmp_path / "model", max_updates=2)
    config.model.spm.enabled = True
    Trainer(config).train()
    maps = load(tmp_path / "model").attention_maps("a b c d e", "e d c")
    assert maps.source_prediction.shape == (4, 5)
    names = {p.name for p in plot_attention_maps(maps, tmp_path / "figures")}
    assert names == {"attention.png", "spm_alignment.png"}


@pytest.mark.parametrize("encoder", ["lstm", "conv"])
def test_spm_composes_with_every_other_module_through_configuration(encoder):
    """SPM with the selective gate, word attention with gates and the WEAN output layer on either
    encoder: one training step reaches every part, and search never needs the SPM head."""
    from wean.config import ModelConfig, section_config
    from wean.models.model import build_model
    from wean.search import beam_search
    from wean.training.criterion import Criterion

    torch.manual_seed(0)
    config = ModelConfig(embedding_size=16)
    config.encoder = section_config("model.encoder", {"type": encoder, "hidden_size": 16, "selective_gate": True,
                                                      **({"layers": 4} if encoder == "conv" else {})})
    config.decoder = section_config("model.decoder", {"type": "bahdanau", "hidden_size": 16, "word_attention": "gates",
                                                      "bridge": "zero" if encoder == "conv" else "copy"})
    config.output_layer = section_config("model.output_layer", {"type": "wean"})
    config.spm.enabled = True
    model = build_model(config, 30, 30)
    batch = collate([Example(0, [5, 6, 7, 8, 9, 10], [5, 7, EOS_ID]), Example(1, [11, 12, 13], [11, EOS_ID])],
                    model.extend_target)
    Criterion(model).training_loss(batch).backward()
    for part in (model.spm.head, model.selective_gate, model.encoder, model.decoder, model.output_layer):
        assert any(p.grad is not None and p.grad.abs().sum() > 0 for p in part.parameters()), part
    model.eval()
    model.spm = None  # inference must not touch the head
    hypotheses = beam_search(model, batch.source, batch.source_lengths, beam_size=3, max_length=8)
    assert len(hypotheses) == 2 and all(PAD_ID not in h.tokens for h in hypotheses)
