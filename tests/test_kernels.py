"""The kernels of a loaded model's float32 products (wean/models/kernels.py), and ``auto``'s
choice between them (wean/models/kernel_choice.py)."""

import json
from types import SimpleNamespace

import pytest
import torch
from torch import nn
from torch.nn import functional as F

from synthetic import reverse_pairs, tiny_config, write_corpus
from wean.cli import main
from wean.data.corpus import Example
from wean.errors import WeanError
from wean.inference.generator import load
from wean.models import deferred_gradients, kernels
from wean.models.kernels import OneDNNLinear, use_kernels

needs_onednn = pytest.mark.skipif(not kernels.ONEDNN, reason="this PyTorch has no oneDNN linear")


@needs_onednn
@pytest.mark.parametrize("shape", [(7, 16), (3, 5, 16), (0, 16)])
@pytest.mark.parametrize("with_bias", [True, False])
def test_the_onednn_product_is_the_linear_layers_product_up_to_rounding(shape, with_bias):
    torch.manual_seed(0)
    x, weight = torch.randn(*shape), torch.randn(40, 16)
    bias = torch.randn(40) if with_bias else None
    with torch.no_grad():
        product = kernels.linear(x, weight, bias, onednn=True)
    assert product.shape == F.linear(x, weight, bias).shape
    torch.testing.assert_close(product, F.linear(x, weight, bias), rtol=1e-5, atol=1e-5)
    # strided inputs and weights (slices of wider tensors) are read as their values, not their storage
    wide, wide_weight = torch.randn(7, 32), torch.randn(40, 48)
    with torch.no_grad():
        torch.testing.assert_close(kernels.linear(wide[:, ::2], weight, bias, onednn=True),
                                   F.linear(wide[:, ::2], weight, bias), rtol=1e-5, atol=1e-5)
        torch.testing.assert_close(kernels.linear(wide[:, :16], wide_weight[:, 8:24], bias, onednn=True),
                                   F.linear(wide[:, :16], wide_weight[:, 8:24], bias), rtol=1e-5, atol=1e-5)


@needs_onednn
def test_the_onednn_products_gradients_are_pytorchs_up_to_rounding():
    torch.manual_seed(0)
    leaves = [torch.randn(2, 6, 8), torch.randn(5, 8), torch.randn(5)]
    fast = [t.clone().requires_grad_() for t in leaves]
    exact = [t.clone().requires_grad_() for t in leaves]
    upstream = torch.randn(2, 6, 5)
    (kernels.linear(*fast, onednn=True) * upstream).sum().backward()
    (F.linear(*exact) * upstream).sum().backward()
    for a, b in zip(fast, exact):
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-5, atol=1e-5)
    # a frozen weight and no bias: only the input's gradient
    x = leaves[0].clone().requires_grad_()
    kernels.linear(x, leaves[1], None, onednn=True).sum().backward()
    torch.testing.assert_close(x.grad, torch.ones(2, 6, 5) @ leaves[1], rtol=1e-5, atol=1e-5)


@needs_onednn
def test_a_deferred_weight_gradient_is_the_sum_over_a_loops_steps_as_one_product(monkeypatch):
    """A recurrence h_t = tanh(W [x_t; h_{t-1}] + b) over 5 steps: with the weight's gradient
    deferred, every gradient is autograd's through F.linear, the weight's computed once per
    backward; a second backward of a retained graph gives it again, and a backward to the inputs
    alone first (autograd.grad) leaves nothing behind that a later one would count twice."""
    torch.manual_seed(0)
    leaves = [torch.randn(3, 5, 4), torch.randn(6, 10), torch.randn(6), torch.randn(3, 6)]

    def run(fast):
        x, weight, bias, h = [t.clone().requires_grad_() for t in leaves]
        deferred = kernels.deferring(True, weight) if fast else None
        for x_t in x.unbind(1):
            rows = torch.cat([x_t, h], 1)
            h = torch.tanh(kernels.linear(rows, weight, bias, True, deferred) if fast else F.linear(rows, weight, bias))
        loss = (h * torch.arange(6.0)).sum()
        torch.autograd.grad(loss, [x], retain_graph=True)  # through every step, not to the weight
        loss.backward(retain_graph=True)
        first = [t.grad.clone() for t in (x, weight, bias)]
        for t in (x, weight, bias):
            t.grad = None
        loss.backward()
        return first, [t.grad for t in (x, weight, bias)]

    calls, take = [], deferred_gradients.DeferredWeightGradient.take_gradient
    monkeypatch.setattr(deferred_gradients.DeferredWeightGradient, "take_gradient",
                        lambda self: calls.append(1) or take(self))
    (fast_first, fast_second), (exact, _) = run(True), run(False)
    assert len(calls) == 2  # once per backward that reaches the weight, not once per step
    for fast in (fast_first, fast_second):
        for a, b in zip(fast, exact):
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)
    # nothing is deferred without a gradient to compute
    assert kernels.deferring(True, leaves[1]) is None
    with torch.no_grad():
        assert kernels.deferring(True, leaves[1].clone().requires_grad_()) is None


def test_a_deferred_memory_gradient_is_the_sum_over_a_loops_steps_as_one_product(monkeypatch):
    """An attention over 5 steps whose query depends on the step before: with the keys' and
    values' gradients deferred, every gradient is autograd's through torch.bmm, each memory's
    computed once per backward; a second backward of a retained graph gives them again, and a
    backward to the queries alone first leaves nothing behind that a later one would count twice.
    Keys that are the values (dot attention) take one product for both."""
    torch.manual_seed(0)
    leaves = [torch.randn(3, 7, 4), torch.randn(3, 7, 4), torch.randn(3, 1, 4)]

    def run(fast, same):
        keys, values, start = [t.clone().requires_grad_() for t in leaves]
        values, query = keys if same else values, start
        memories = deferred_gradients.DeferredMemories() if fast else None
        bmm = memories.bmm if fast else lambda rows, memory, transposed=False: torch.bmm(
            rows, memory.transpose(1, 2) if transposed else memory)
        outputs = []
        for _ in range(5):
            weights = torch.softmax(bmm(query, keys, transposed=True), -1)
            query = torch.tanh(bmm(weights, values) + query)
            outputs.append(query)
        loss = (torch.cat(outputs, 1) * torch.arange(4.0)).sum()
        inputs = (keys,) if same else (keys, values)
        torch.autograd.grad(loss, [start], retain_graph=True)  # through every step, not to the memories
        loss.backward(retain_graph=True)
        first = [t.grad.clone() for t in inputs]
        for t in inputs:
            t.grad = None
        loss.backward()
        return first, [t.grad for t in inputs]

    calls, take = [], deferred_gradients.DeferredMemoryGradient.take_gradient
    monkeypatch.setattr(deferred_gradients.DeferredMemoryGradient, "take_gradient",
                        lambda self: calls.append(1) or take(self))
    for same, memories in ((False, 2), (True, 1)):
        calls.clear()
        (fast_first, fast_second), (exact, _) = run(True, same), run(False, same)
        assert len(calls) == 2 * memories  # once per backward and memory, not once per step
        for fast in (fast_first, fast_second):
            for a, b in zip(fast, exact):
                torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)
    # nothing is deferred without a gradient to compute
    memories, rows = deferred_gradients.DeferredMemories(), torch.randn(3, 1, 7)
    with torch.no_grad():
        memories.bmm(rows, leaves[0].clone().requires_grad_())
    memories.bmm(rows, leaves[0])
    assert memories.deferred == []


@needs_onednn
def test_a_gradient_of_the_onednn_products_gradient_is_refused_not_wrong():
    x, weight = torch.randn(3, 4, requires_grad=True), torch.randn(2, 4, requires_grad=True)
    (grad,) = torch.autograd.grad(kernels.linear(x, weight, None, onednn=True).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError):
        grad.sum().backward()


@pytest.mark.filterwarnings("ignore:TF32 acceleration")  # torch's flags() sets a TF32 switch this CPU build lacks
def test_blas_float64_and_autocast_take_pytorchs_own_product_bit_for_bit():
    torch.manual_seed(0)
    x, weight, bias = torch.randn(6, 8), torch.randn(5, 8), torch.randn(5)
    with torch.no_grad():
        assert torch.equal(kernels.linear(x, weight, bias, onednn=False), F.linear(x, weight, bias))
        assert torch.equal(kernels.linear(x.double(), weight.double(), bias.double(), onednn=True),
                           F.linear(x.double(), weight.double(), bias.double()))
        with torch.autocast("cpu", dtype=torch.bfloat16):
            assert kernels.linear(x, weight, bias, onednn=True).dtype == torch.bfloat16
        with torch.backends.mkldnn.flags(enabled=False):
            assert torch.equal(kernels.linear(x, weight, bias, onednn=True), F.linear(x, weight, bias))


def test_use_kernels_swaps_linear_layers_both_ways_and_keeps_their_weights():
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    keys = list(model.state_dict())
    use_kernels(model, "onednn")
    assert [type(m) for m in model] == [OneDNNLinear, nn.ReLU, OneDNNLinear]
    assert list(model.state_dict()) == keys
    x = torch.randn(5, 4)
    with torch.no_grad():
        fast = model(x)
        use_kernels(model, "blas")
        assert [type(m) for m in model] == [nn.Linear, nn.ReLU, nn.Linear]
        torch.testing.assert_close(fast, model(x), rtol=1e-5, atol=1e-6)
    with pytest.raises(WeanError, match="--kernels 'fast': choose one of onednn, blas"):
        use_kernels(model, "fast")


def test_a_trained_model_writes_the_same_outputs_with_either_kernels(model_dir):
    blas, onednn = load(model_dir, device="cpu", kernels="blas"), load(model_dir, device="cpu", kernels="onednn")
    assert onednn.kernels == "onednn" and blas.kernels == "blas"
    assert isinstance(onednn.model.output_layer.projection, OneDNNLinear)
    assert type(blas.model.output_layer.projection) is nn.Linear
    assert onednn.model.output_layer.onednn_products and not blas.model.output_layer.onednn_products
    sources, _ = reverse_pairs(60, seed=11)
    for options in ({"beam": 4}, {"beam": 1}, {"beam": 4, "nbest": 3}):
        assert [g.text for g in blas.generate(sources, **options)] == [g.text for g in onednn.generate(sources, **options)]


def test_a_reranking_model_is_loaded_with_the_generators_kernels(model_dir):
    from wean.inference import model_scores

    sources, _ = reverse_pairs(3, seed=5)
    for name in ("blas", "onednn"):
        load(model_dir, device="cpu", kernels=name).generate(sources, beam=2, nbest=2,
                                                             rerank=f"channel:{model_dir}=0.5")
        loaded = model_scores._loaded[(model_dir.resolve(), "cpu", name)]
        assert loaded.kernels == name
        assert loaded.model.output_layer.onednn_products == (name == "onednn")


@needs_onednn
def test_the_wean_output_layer_scores_through_the_kernels_it_is_given(monkeypatch):
    """WEAN multiplies by the embeddings itself, not through a linear layer: its own flag decides
    whether oneDNN's product is called (whether the floats then differ depends on the CPU)."""
    simplifier = load(device="cpu", kernels="onednn")
    layer = simplifier.model.output_layer.vocabulary  # the WEAN layer the pointer-generator copies beside
    assert layer.onednn_products
    calls, product = [], kernels._product
    monkeypatch.setattr(kernels, "_product", lambda *args: calls.append(args) or product(*args))
    queries = torch.randn(3, layer.embedding.embedding_dim)
    with torch.no_grad():
        fast = layer(queries)
        assert len(calls) == 1
        use_kernels(simplifier.model, "blas")
        assert not layer.onednn_products
        exact = layer(queries)
        assert len(calls) == 1
    torch.testing.assert_close(fast, exact, rtol=1e-4, atol=1e-4)


def test_kernels_on_the_command_line(model_dir, capsys, tmp_path):
    source = tmp_path / "in.txt"
    source.write_text("a b c\n")
    assert main(["generate", "--model", str(model_dir), "--input", str(source), "--kernels", "blas"]) == 0
    blas = capsys.readouterr().out
    assert main(["generate", "--model", str(model_dir), "--input", str(source)]) == 0
    assert capsys.readouterr().out == blas
    with pytest.raises(SystemExit):
        main(["generate", "--model", str(model_dir), "--kernels", "fast"])
    assert "invalid choice: 'fast'" in capsys.readouterr().err


def test_training_kernels_are_a_checked_config_choice(tmp_path):
    from wean.config import CHOICES, load_config

    assert CHOICES["training.kernels"] == kernels.KERNELS
    config = tmp_path / "c.yaml"
    config.write_text("training:\n  kernels: fast\n")
    with pytest.raises(WeanError, match="training.kernels"):
        load_config(config)


def test_auto_takes_pytorchs_product_where_onednn_is_absent_without_measuring(model_dir, monkeypatch):
    from wean.models import kernel_choice

    monkeypatch.setattr(kernels, "ONEDNN", False)
    monkeypatch.setattr(kernel_choice, "measure", lambda *args: pytest.fail("measured where oneDNN cannot apply"))
    assert load(model_dir, device="cpu").kernels == "blas"


@needs_onednn
def test_auto_measures_once_keeps_the_choice_and_leaves_the_model_as_it_was(model_dir, monkeypatch, tmp_path):
    """The faster kernels win; the choice is cached per CPU, threads and model shapes, so a second
    load measures nothing; measuring changes no weight, gradient, mode or random state."""
    from wean.models import kernel_choice

    monkeypatch.setenv("WEAN_CACHE_DIR", str(tmp_path / "cache"))
    for faster in ("blas", "onednn"):
        (tmp_path / "cache").mkdir(exist_ok=True)
        for old in (tmp_path / "cache").iterdir():
            old.unlink()
        times = {"onednn": 2.0, "blas": 1.0} if faster == "blas" else {"onednn": 1.0, "blas": 2.0}
        monkeypatch.setattr(kernel_choice, "measure",
                            lambda model, workload, sentences, loss, lengths, times=times: dict(times))
        assert load(model_dir, device="cpu").kernels == faster
        monkeypatch.setattr(kernel_choice, "measure", lambda *args: pytest.fail("measured again"))
        assert load(model_dir, device="cpu").kernels == faster
    recorded = json.loads((tmp_path / "cache" / "kernels.json").read_text())
    (key, entry), = recorded.items()
    assert "inference" in key and "threads" in key and entry["kernels"] == "onednn"
    monkeypatch.undo()
    model = load(model_dir, device="cpu", kernels="blas").model
    model.train()
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    rng = torch.get_rng_state()
    seconds = kernel_choice.measure(model, "training")
    assert set(seconds) == {"onednn", "blas"} and all(value > 0 for value in seconds.values())
    assert torch.equal(torch.get_rng_state(), rng) and model.training and kernels.kernels_of(model) == "blas"
    assert all(torch.equal(p, before[name]) and p.grad is None for name, p in model.named_parameters())


@needs_onednn
def test_the_measure_times_each_kernel_in_abba_order_so_a_drifting_machine_favours_neither(model_dir, monkeypatch):
    """A machine that slows down through the measure costs both kernels alike, and the median of
    each kernel's rounds is compared."""
    from wean.models import kernel_choice

    model = load(model_dir, device="cpu", kernels="blas").model
    order, clock = [], iter(range(1, 1000))
    monkeypatch.setattr(kernel_choice, "_seconds",
                        lambda model, workload, batch, loss: order.append(kernels.kernels_of(model)) or next(clock))
    seconds = kernel_choice.measure(model, "inference")
    timed = order[2:]  # after one warm-up each
    assert len(timed) == 2 * kernel_choice.ROUNDS and kernel_choice.ROUNDS % 2 == 0
    assert timed[:4] == ["onednn", "blas", "blas", "onednn"]
    # each kernel's mean position in the run is the same
    positions = {name: sum(i for i, timed_name in enumerate(timed) if timed_name == name) for name in ("onednn", "blas")}
    assert positions["onednn"] == positions["blas"]
    assert seconds["onednn"] == seconds["blas"]


@needs_onednn
def test_a_training_run_keeps_the_kernels_auto_chose_for_its_resumes(tmp_path, monkeypatch):
    from wean.models import kernel_choice
    from wean.training import Trainer

    data = write_corpus(tmp_path / "data", train=40, valid=8)
    measured = []
    monkeypatch.setattr(kernel_choice, "measure", lambda model, workload, sentences, loss, lengths: (
        measured.append((sentences, lengths)) or {"onednn": 2.0, "blas": 1.0}))
    config = tiny_config(data, tmp_path / "run", max_updates=2, batch_size=24, kernels="auto")
    trainer = Trainer(config)
    trainer.train()
    assert json.loads((tmp_path / "run" / "kernels.json").read_text()) == {"kernels": "blas"}
    # measured on batches as large as the run's, of its pairs' mean lengths: 24 sentences, or
    # what 100 tokens hold in sources of that length
    examples = trainer.train_examples
    lengths = (round(sum(len(e.source) for e in examples) / len(examples)),
               round(sum(len(e.target) for e in examples) / len(examples)))
    Trainer(tiny_config(data, tmp_path / "tokens", max_updates=1, batch_size=24, batch_tokens=100, kernels="auto"))
    assert measured == [(24, lengths), (100 // max(lengths), lengths)] and 100 // max(lengths) < 24
    # the batch is global: each of 4 processes measures its share
    four = SimpleNamespace(config=tiny_config(data, tmp_path / "four", batch_size=24),
                           distributed=SimpleNamespace(world_size=4))
    assert Trainer._sentences_per_batch(four, 20) == 6
    # a resume takes the run's own choice, whatever measuring would say now
    monkeypatch.setattr(kernel_choice, "measure",
                        lambda model, workload, sentences, loss, lengths: {"onednn": 1.0, "blas": 2.0})
    resumed = Trainer(tiny_config(data, tmp_path / "run", max_updates=3, kernels="auto"), resume=True)
    assert kernels.kernels_of(resumed.model) == "blas"


@needs_onednn
def test_the_training_measure_times_the_loss_as_the_run_takes_it_under_each_kernel(tmp_path, monkeypatch):
    """oneDNN's path takes the loss from the logits (its gradient cheaper), and the measure
    credits it; both give the same loss up to rounding."""
    from wean.models import kernel_choice
    from wean.training import Trainer, criterion

    data = write_corpus(tmp_path / "data", train=40, valid=8)
    monkeypatch.setenv("WEAN_CACHE_DIR", str(tmp_path / "cache"))  # no choice cached by another test
    losses, measure = [], kernel_choice.measure
    monkeypatch.setattr(kernel_choice, "measure", lambda model, workload, sentences, loss, lengths: (
        losses.append(loss) or {"onednn": 2.0, "blas": 1.0}))
    trainer = Trainer(tiny_config(data, tmp_path / "run", max_updates=1, kernels="auto"))
    (loss,) = losses
    model = trainer.model
    model.train()
    source, lengths, target = kernel_choice._batch(model, 4)
    from_logits, fused = [], criterion.softmax_cross_entropy
    monkeypatch.setattr(criterion, "softmax_cross_entropy", lambda *args: from_logits.append(1) or fused(*args))
    value = {}
    for kernel in ("onednn", "blas"):
        use_kernels(model, kernel)
        torch.manual_seed(0)
        value[kernel] = loss(model, source, lengths, target, kernel)
        assert len(from_logits) == 1  # onednn's only
    torch.testing.assert_close(value["onednn"], value["blas"], rtol=1e-5, atol=1e-5)
    assert value["blas"].dim() == 0 and value["blas"].requires_grad
    # the measure takes its gradient under both kernels, on the lengths it is given
    seconds = measure(model, "training", 4, loss, (5, 3))
    assert set(seconds) == {"onednn", "blas"} and len(from_logits) > 1 + kernel_choice.ROUNDS
    # the pairs' mean lengths, the target as the decoder reads it: SPM's extends it to its source's
    config = tiny_config(data, tmp_path / "spm", max_updates=1, kernels="auto")
    config.model.spm.enabled = True
    spm = Trainer(config)
    examples = [Example(0, [5] * 10, [6] * 3), Example(1, [5] * 6, [6] * 4)]
    assert Trainer._mean_lengths(SimpleNamespace(train_examples=examples, model=trainer.model)) == (8, 4)
    assert Trainer._mean_lengths(SimpleNamespace(train_examples=examples, model=spm.model)) == (8, 8)


def test_a_cached_kernel_choice_is_measured_again_when_the_models_own_code_changes(tmp_path, monkeypatch):
    """The choice's key holds the code of every module the model is built from (a plug-in's
    too): a change to it may change which kernel is faster."""
    import importlib.util
    import sys

    from wean.models import kernel_choice

    source = tmp_path / "plugin_layer.py"
    source.write_text("from torch import nn\n\nclass Layer(nn.Linear):\n    pass\n")
    spec = importlib.util.spec_from_file_location("plugin_layer", source)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "plugin_layer", module)
    spec.loader.exec_module(module)
    model = nn.Sequential(module.Layer(4, 4))
    before = kernel_choice.cache_key(model, "training")
    assert kernel_choice.cache_key(model, "training") == before
    source.write_text(source.read_text() + "# changed\n")
    assert kernel_choice.cache_key(model, "training") != before
