"""The training loss (wean/training/criterion.py): the cross-entropy taken from the logits in one
step equals PyTorch's, loss and gradient, and the criterion takes it wherever the output layer is
a softmax over logits, or from the targets' log-probabilities alone where the layer gives them
(the pointer-generator)."""

import pytest
import torch
from torch.nn import functional as F

from synthetic import conv_model, tiny_config, write_corpus
from test_pointer_generator import batch_with_copies, pointer_model
from wean.data.corpus import IGNORE, Example, collate
from wean.data.vocabulary import EOS_ID
from wean.models.model import target_length_groups
from wean.training import Trainer
from wean.training.criterion import Criterion, cross_entropy, softmax_cross_entropy


@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_the_softmax_cross_entropy_is_pytorchs_loss_and_gradient(label_smoothing):
    torch.manual_seed(0)
    logits = torch.randn(9, 13, dtype=torch.float64) * 3
    targets = torch.randint(0, 13, (9,))
    targets[[2, 7]] = IGNORE
    fused, exact = logits.clone().requires_grad_(), logits.clone().requires_grad_()
    loss = softmax_cross_entropy(fused, targets, label_smoothing)
    reference = F.cross_entropy(exact, targets, ignore_index=IGNORE, label_smoothing=label_smoothing, reduction="sum")
    torch.testing.assert_close(loss, reference)
    torch.testing.assert_close(loss, cross_entropy(torch.log_softmax(logits, -1), targets, label_smoothing))
    (loss * 0.37).backward()  # the upstream gradient scales every row
    (reference * 0.37).backward()
    torch.testing.assert_close(fused.grad, exact.grad)
    assert fused.grad[[2, 7]].abs().max() == 0  # ignored tokens have no gradient


def test_label_smoothing_spreads_its_mass_only_over_the_classes_a_row_can_be_given():
    # -inf logits: classes 0-2 for every row (words WEAN's candidates leave out), class 5 in row 4
    torch.manual_seed(1)
    logits = torch.randn(6, 9, dtype=torch.float64) * 2
    logits[:, :3] = float("-inf")
    logits[4, 5] = float("-inf")
    targets = torch.tensor([3, 4, 8, IGNORE, 6, 7])
    smoothing = 0.1
    log_probs = torch.log_softmax(logits, -1)
    nll = -sum(log_probs[i, t] for i, t in enumerate(targets.tolist()) if t != IGNORE)
    mean_possible = [-log_probs[i][torch.isfinite(log_probs[i])].mean() for i in range(6) if targets[i] != IGNORE]
    expected = (1 - smoothing) * nll + smoothing * sum(mean_possible)
    fused, exact = logits.clone().requires_grad_(), logits.clone().requires_grad_()
    loss = softmax_cross_entropy(fused, targets, smoothing)
    reference = cross_entropy(torch.log_softmax(exact, -1), targets, smoothing)
    assert torch.isfinite(loss) and torch.isfinite(reference)
    torch.testing.assert_close(loss, expected)
    torch.testing.assert_close(reference, expected)
    (loss * 0.37).backward()
    (reference * 0.37).backward()
    torch.testing.assert_close(fused.grad, exact.grad)
    assert fused.grad[:, :3].abs().max() == 0 and fused.grad[3].abs().max() == 0
    # the smoothed target: softmax - ((1 - s) onehot + s / possible classes), zero where -inf
    row = torch.softmax(logits[4], -1)
    row[3:] -= torch.tensor([1, 1, 0, 1, 1, 1], dtype=row.dtype) * smoothing / 5
    row[6] -= 1 - smoothing
    torch.testing.assert_close(fused.grad[4], 0.37 * row)
    # a row that can be given only its target: no loss, no gradient
    only = torch.full((1, 9), float("-inf"), dtype=torch.float64)
    only[0, 4] = 0.5
    only.requires_grad_()
    alone = softmax_cross_entropy(only, torch.tensor([4]), smoothing)
    alone.backward()
    assert alone.item() == 0 and only.grad.abs().max() == 0


def test_label_smoothing_without_impossible_classes_keeps_its_floats():
    # the expression every committed run was trained with, bit for bit
    torch.manual_seed(2)
    log_probs = torch.log_softmax(torch.randn(40, 300), -1)
    targets = torch.randint(0, 300, (40,))
    targets[::7] = IGNORE
    trained = (targets != IGNORE).unsqueeze(1)
    nll = F.nll_loss(log_probs, targets, ignore_index=IGNORE, reduction="sum")
    smooth = -log_probs.sum(-1, keepdim=True).masked_fill(~trained, 0.0).sum()
    assert torch.equal(cross_entropy(log_probs, targets, 0.1), 0.9 * nll + smooth * (0.1 / 300))


@pytest.mark.parametrize("model", [pytest.param(lambda: conv_model(), id="linear output layer"),
                                   pytest.param(lambda: pointer_model("wean"), id="pointer-generator")])
def test_the_criterion_takes_the_loss_from_the_logits_or_the_targets_alone_where_the_layer_gives_them(model, monkeypatch):
    from wean.training import criterion as criterion_module

    calls, fused = [], criterion_module.softmax_cross_entropy
    monkeypatch.setattr(criterion_module, "softmax_cross_entropy", lambda *args: calls.append(1) or fused(*args))
    model = model()
    batch = batch_with_copies()
    source, lengths, previous = batch.source, batch.source_lengths, batch.target_input
    if model.output_layer.copies_source:  # the targets' log-probabilities alone
        assert model(source, lengths, previous, logits=True).logits is None
        targets = model.loss_targets(batch.target_output)
        alone = model(source, lengths, previous, logits=True, targets=targets)
        assert alone.log_probs is None and alone.logits is None
        whole = model(source, lengths, previous).log_probs.gather(-1, targets.clamp(min=0).unsqueeze(-1)).squeeze(-1)
        trained = targets != IGNORE
        torch.testing.assert_close(alone.target_log_probs[trained], whole[trained])
    else:
        source, previous = model.in_vocabulary(source), model.in_vocabulary(previous)
        batch.source, batch.target_input = source, previous
        batch.target_output = model.in_vocabulary(batch.target_output)
        output = model(source, lengths, previous, logits=True)
        assert output.log_probs is None
        torch.testing.assert_close(output.logits.log_softmax(-1), model(source, lengths, previous).log_probs)
    criterion = Criterion(model, loss_from_logits=True)
    loss = criterion.training_loss(batch)
    assert len(calls) == (0 if model.output_layer.copies_source else 1)
    loss.backward()
    grads = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
    model.zero_grad()
    log_probs = model(batch.source, lengths, batch.target_input).log_probs
    targets = model.loss_targets(batch.target_output).reshape(-1)
    expected = cross_entropy(log_probs.reshape(-1, log_probs.size(-1)), targets)
    torch.testing.assert_close(loss, expected)
    expected.backward()
    assert grads.keys() == {name for name, p in model.named_parameters() if p.grad is not None}
    for name, p in model.named_parameters():
        if name in grads:
            torch.testing.assert_close(grads[name], p.grad, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("kernels", ["onednn", "blas"])
def test_training_takes_the_loss_from_the_logits_on_the_fast_path_only(tmp_path, kernels):
    """blas keeps PyTorch's own operations throughout: the floats the tables' runs were trained with."""
    data = write_corpus(tmp_path / "data", train=40, valid=8)
    trainer = Trainer(tiny_config(data, tmp_path / "run", kernels=kernels))
    assert trainer.criterion.loss_from_logits == (kernels == "onednn")


def test_auxiliary_losses_get_the_log_probabilities_not_logits(monkeypatch):
    """A plug-in auxiliary loss may read the model's log-probabilities: with one, the criterion
    does not ask for logits, whatever the kernels."""
    model = conv_model()
    seen = []

    class ReadsLogProbs:
        def loss(self, output, source, lengths, mask):
            seen.append(output.log_probs)
            return output.log_probs.new_zeros(())

    batch = batch_with_copies()
    for name in ("source", "target_input", "target_output"):
        setattr(batch, name, model.in_vocabulary(getattr(batch, name)))
    monkeypatch.setattr(model, "losses", lambda: [ReadsLogProbs()])
    Criterion(model, loss_from_logits=True).training_loss(batch)
    assert seen and seen[0] is not None


def test_target_length_groups_cover_every_row_once_over_its_own_longest_target():
    lengths = [3, 12, 12, 2, 11, 4, 3, 12, 5, 2]
    target = torch.zeros(len(lengths), 12, dtype=torch.long)
    for row, length in enumerate(lengths):
        target[row, :length] = 7
    groups = target_length_groups(target)
    assert sorted(row for rows, _ in groups for row in rows.tolist()) == list(range(len(lengths)))
    assert all(steps == max(lengths[row] for row in rows.tolist()) for rows, steps in groups)
    assert sum(len(rows) * steps for rows, steps in groups) < len(lengths) * 12
    assert target_length_groups(torch.full((6, 5), 7)) is None  # one length: nothing to skip


def _batch_of_many_lengths():
    """Eight sentences whose targets hold 1 to 9 words, two of them copying a word outside the
    vocabulary (ids 30, 31)."""
    torch.manual_seed(5)
    examples = []
    for number, length in enumerate([9, 2, 6, 1, 9, 3, 5, 2]):
        source = torch.randint(4, 30, (length + 2,)).tolist()
        target = torch.randint(4, 30, (length,)).tolist()
        if number in (0, 5):
            source[1], target[0] = 30 + number % 2, 30 + number % 2
        examples.append(Example(number, source, target + [EOS_ID]))
    return collate(examples)


@pytest.mark.parametrize("model", [pytest.param(lambda: conv_model(), id="linear output layer"),
                                   pytest.param(lambda: pointer_model("wean").eval(), id="pointer-generator")])
@pytest.mark.parametrize("from_logits", [False, True])
@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_scoring_by_target_length_gives_the_loss_and_gradients_of_the_whole_batch(model, from_logits,
                                                                                  label_smoothing):
    model, batch = model(), _batch_of_many_lengths()
    if not model.output_layer.copies_source:
        for name in ("source", "target_input", "target_output"):
            setattr(batch, name, model.in_vocabulary(getattr(batch, name)))
    results = []
    for by_target_length in (False, True):
        model.zero_grad()
        criterion = Criterion(model, label_smoothing, loss_from_logits=from_logits, by_target_length=by_target_length)
        loss = criterion.training_loss(batch)
        loss.backward()
        results.append((loss, {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}))
    (whole, whole_grads), (grouped, grads) = results
    output = model(batch.source, batch.source_lengths, batch.target_input, by_target_length=True)
    assert output.parts is not None and len(output.parts) > 1  # the batch was scored in groups
    torch.testing.assert_close(grouped, whole)
    assert grads.keys() == whole_grads.keys()
    for name in grads:
        torch.testing.assert_close(grads[name], whole_grads[name], rtol=1e-4, atol=1e-6)


def test_a_model_with_an_auxiliary_loss_keeps_it_when_scored_by_target_length():
    """The coverage loss reads the attention of every step: the criterion scores such a model's
    whole output, and its loss is the same either way."""
    plain, model, batch = pointer_model("linear").eval(), pointer_model("linear", coverage_loss=1.0).eval(), \
        _batch_of_many_lengths()
    model.load_state_dict(plain.state_dict())  # the loss has no weights of its own
    grouped = Criterion(model, by_target_length=True).training_loss(batch)
    torch.testing.assert_close(grouped, Criterion(model).training_loss(batch))
    assert grouped > Criterion(plain, by_target_length=True).training_loss(batch)  # the coverage term is in it


@pytest.mark.parametrize("kernels, by_length", [("blas", False), ("onednn", True), ("auto", True)])
def test_training_scores_by_target_length_unless_its_kernels_are_the_tables_floats(tmp_path, kernels, by_length):
    data = write_corpus(tmp_path / "data", train=40, valid=8)
    assert Trainer(tiny_config(data, tmp_path / "run", kernels=kernels)).criterion.by_target_length is by_length
