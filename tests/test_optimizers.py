"""training.optimizer and training.loss_per: plain SGD learns, fairseq-lua's gradient scaling of
the conv encoder, and the loss averaged per sentence."""

import pytest
import torch

from synthetic import conv_model, reverse_pairs, tiny_config, write_corpus
from wean.inference.generator import load
from wean.models.conv_encoder import ConvBlock
from wean.training import Trainer
from wean.training.optimizers import scale_gradients


def test_plain_sgd_with_the_loss_per_sentence_learns_to_reverse_symbols(tmp_path):
    data = write_corpus(tmp_path / "data")
    # fairseq-lua's units (learning rate and clip per sentence); no halving, so SGD's pace alone
    # decides. Selected by loss: 0.96-0.995 on 8 seeds (by BLEU, which many checkpoints saturate
    # on the 20 validation sentences, 0.875-0.995 in 20 or 30 epochs)
    config = tiny_config(data, tmp_path / "model", optimizer="sgd", loss_per="sentence", learning_rate=0.2,
                         clip_grad_norm=25, max_epochs=30, lr_patience=0, early_stopping_patience=100,
                         max_valid_sentences=20, selection_metric="loss")
    trainer = Trainer(config)
    assert isinstance(trainer.optimizer, torch.optim.SGD)
    trainer.train()
    sources, targets = reverse_pairs(200, seed=7)
    outputs = [g.text for g in load(tmp_path / "model").generate(sources, beam=1)]
    assert sum(o == t for o, t in zip(outputs, targets)) / len(targets) >= 0.95


def _gradients(model):
    source, lengths = torch.tensor([[5, 6, 7, 8], [9, 10, 11, 0]]), torch.tensor([4, 3])
    model.zero_grad()
    model(source, lengths, torch.tensor([[2, 5, 6], [2, 9, 10]])).log_probs.square().sum().backward()
    return {name: p.grad.clone() for name, p in model.named_parameters()}


def test_sgd_scales_the_conv_gradients_by_one_over_sqrt_fan_in_and_nothing_else():
    plain, scaled = conv_model(seed=3), conv_model(seed=3)
    scale_gradients(scaled)
    expected = {f"{name}.{p}": module.conv.gradient_scale for name, module in scaled.named_modules()
                if isinstance(module, ConvBlock) for p in ("conv.weight", "conv.bias")}
    assert len(expected) == 2 * (4 + 2)  # CNN-a's 4 blocks and CNN-c's 2, weight and bias each
    assert {round(scale ** -2) for scale in expected.values()} == {24, 16}  # hidden and embedding channels
    before, after = _gradients(plain), _gradients(scaled)
    for name, gradient in before.items():
        assert gradient.abs().sum() > 0, name
        torch.testing.assert_close(after[name], gradient * expected.get(name, 1.0), msg=name)


def test_the_loss_per_sentence_is_the_loss_per_token_scaled_by_tokens_per_sentence(tmp_path):
    data = write_corpus(tmp_path / "data", train=64, valid=8)

    def one_step(loss_per, learning_rate):
        config = tiny_config(data, tmp_path / loss_per, optimizer="sgd", loss_per=loss_per,
                             learning_rate=learning_rate, clip_grad_norm=0, batch_size=64, max_updates=1)
        trainer = Trainer(config)
        start = {name: p.detach().clone() for name, p in trainer.model.named_parameters()}
        examples = trainer.train_examples
        logged, tokens = trainer._update(examples)
        step = {name: p.detach() - start[name] for name, p in trainer.model.named_parameters()}
        return step, logged, tokens / len(examples)

    per_token, logged_token, tokens_per_sentence = one_step("token", 0.1)
    per_sentence, logged_sentence, _ = one_step("sentence", 0.1)
    assert tokens_per_sentence > 2  # the two differ
    assert logged_sentence == pytest.approx(logged_token)  # the log says the loss per token either way
    for name, step in per_token.items():
        torch.testing.assert_close(per_sentence[name], step * tokens_per_sentence, rtol=1e-4, atol=1e-7, msg=name)
