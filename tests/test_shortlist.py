"""The vocabulary shortlist: the table learnt from pairs, the words a batch keeps, output layers
scoring only them exactly, and search through it."""

import pytest
import torch
import yaml
from torch.ao.nn.quantized.dynamic import Linear as DynamicQuantizedLinear

from synthetic import reverse_pairs, tiny_config, write_corpus
from wean.cli import main
from wean.config import ModelConfig, section_config
from wean.data.vocabulary import EOS_ID, UNK_ID
from wean.errors import WeanError
from wean.inference.generator import load
from wean.inference.shortlist import ShortlistTable
from wean.models.interfaces import EncoderOutput, OutputContext
from wean.models.model import build_model
from wean.tensor_files import read_tensors
from wean.training import Trainer


def test_the_table_keeps_each_source_words_likeliest_rare_targets_seen_at_least_twice():
    # 10 and 11 are frequent targets; 20 follows source 5 three times in four, 21 once, 22 twice with 6
    pairs = [([5, 6], [10, 11, 20]), ([5], [10, 20]), ([5, 7], [11, 20, 21]), ([5], [10]), ([6], [10, 22]),
             ([6, 8], [11, 22])]
    table = ShortlistTable.learn(pairs, 30, 30, list(range(30)), per_word=2, frequent=2)
    assert table.by_frequency[:2].tolist() == [10, 11]
    assert table.translations[5].tolist() == [20, -1]  # 21: seen once; 10, 11: frequent
    assert table.translations[6].tolist() == [22, -1]  # 20 was seen with 6 once
    assert (table.translations[7] == -1).all()


def test_a_batch_keeps_the_frequent_words_its_tokens_their_table_words_eos_and_unk():
    table = ShortlistTable(torch.tensor([9, 8, 7, 6]), torch.tensor([[-1], [-1], [-1], [-1], [-1], [12], [-1]]),
                           torch.tensor([0, 1, 2, 3, 4, 5, -1]))
    source = torch.tensor([[5, 6, 40], [5, 0, 0]])  # 6 has no target word; 40 an extended id; 0 padding
    assert table.words(source, 2).tolist() == sorted({9, 8, 5, 12, EOS_ID, UNK_ID})


@pytest.mark.parametrize("layer", [{"type": "linear"}, {"type": "wean", "score": "general"},
                                   {"type": "wean", "score": "dot"},
                                   {"type": "pointer_generator", "vocabulary_layer": "linear"}])
def test_a_layer_scores_the_kept_words_as_before_renormalized_over_them(layer):
    torch.manual_seed(0)
    config = ModelConfig(embedding_size=16)
    config.encoder.hidden_size = config.decoder.hidden_size = 16
    config.output_layer = section_config("model.output_layer", layer)
    model = build_model(config, 40, 40).eval()
    source, lengths, previous = torch.randint(4, 40, (2, 6)), torch.tensor([6, 4]), torch.randint(4, 40, (2, 3))
    with torch.no_grad():
        encoded = model.encode(source, lengths)
        decoded = model.decoder(previous, encoded, model.init_state(encoded))
        context = OutputContext(decoded.attention, encoded, previous)
        full = model.output_layer.log_probs(decoded.queries, context)
        everything = model.output_layer.shortlist(torch.arange(40))
        assert torch.equal(model.output_layer.log_probs(decoded.queries, _with(context, everything)), full)
        words = torch.tensor(sorted({EOS_ID, UNK_ID, *source.flatten().tolist(), 30, 31}))
        kept = model.output_layer.log_probs(decoded.queries, _with(context, model.output_layer.shortlist(words)))
    outside = torch.ones(40, dtype=torch.bool)
    outside[words] = False
    assert torch.isinf(kept[..., outside]).all()  # the pointer-generator's too: no source word is outside
    if layer["type"] != "pointer_generator":  # there copying mixes in: renormalization is not the rule
        expected = torch.log_softmax(full[..., words], dim=-1)
        assert torch.allclose(kept[..., words], expected, atol=1e-5)
    assert torch.allclose(kept.exp().sum(-1), torch.ones(kept.shape[:-1]), atol=1e-5)


def _with(context: OutputContext, shortlist) -> OutputContext:
    encoded = context.encoded
    return OutputContext(context.attention, EncoderOutput(encoded.states, encoded.mask, encoded.embedded,
                                                          encoded.final, encoded.keys, encoded.source, shortlist),
                         context.previous)


def test_a_concat_wean_layer_has_no_shortlist_and_scores_every_word():
    config = ModelConfig(embedding_size=16)
    config.output_layer = section_config("model.output_layer", {"type": "wean", "score": "concat"})
    assert build_model(config, 20, 20).output_layer.shortlist(torch.arange(5)) is None


@pytest.mark.parametrize("vocabulary, kept, rows", [(40, 3, 5), (6000, 2000, 320)])
def test_an_int8_linear_layer_scores_its_kept_words_as_its_full_int8_product_does(vocabulary, kept, rows):
    from wean.inference.quantize import quantize

    torch.manual_seed(0)
    config = ModelConfig(embedding_size=16)
    config.output_layer = section_config("model.output_layer", {"type": "linear"})
    layer = quantize(build_model(config, vocabulary, vocabulary).eval(), "int8", torch.device("cpu")).output_layer
    words = torch.randperm(vocabulary)[:kept].sort().values
    queries = torch.randn(rows, layer.projection.weight().size(1))
    shortlist = layer.shortlist(words)
    assert torch.equal(shortlist.logits(queries), layer(queries)[:, words])  # the same int8 product, fewer rows
    full = layer.shortlist(torch.arange(vocabulary))
    assert torch.equal(full.logits(queries), layer(queries))


def test_an_int8_shortlist_follows_weights_loaded_after_its_first_use():
    from wean.inference.quantize import quantize

    torch.manual_seed(0)
    config = ModelConfig(embedding_size=16)
    config.output_layer = section_config("model.output_layer", {"type": "linear"})
    model = quantize(build_model(config, 40, 40).eval(), "int8", torch.device("cpu"))
    other = quantize(build_model(config, 40, 40).eval(), "int8", torch.device("cpu"))
    words, queries = torch.tensor([EOS_ID, 7, 30]), torch.randn(3, model.output_layer.projection.in_features)
    before = model.output_layer.shortlist(words).logits(queries)
    model.load_state_dict(other.state_dict())
    after = model.output_layer.shortlist(words).logits(queries)
    assert not torch.equal(before, after)
    assert torch.equal(after, model.output_layer(queries)[:, words])


def test_an_int8_layer_quantized_per_matrix_is_refused_a_shortlist_in_one_line():
    from torch.ao.quantization import default_dynamic_qconfig, quantize_dynamic

    config = ModelConfig(embedding_size=16)
    config.output_layer = section_config("model.output_layer", {"type": "linear"})
    layer = quantize_dynamic(build_model(config, 40, 40).eval(), {"output_layer.projection": default_dynamic_qconfig},
                             dtype=torch.qint8).output_layer
    with pytest.raises(WeanError, match="a scale per row"):
        layer.shortlist(torch.arange(5))


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("shortlist")
    data = write_corpus(folder / "data", train=400, valid=20)
    Trainer(tiny_config(data, folder / "model", max_updates=60, validate_every=60)).train()
    return folder / "model"


def test_wean_shortlist_writes_the_table_and_search_keeps_to_its_words(model_dir, capsys):
    sources, _ = reverse_pairs(30, seed=3)
    model = load(model_dir)
    with pytest.raises(WeanError, match="no shortlist.safetensors; make one with `wean shortlist"):
        model.generate(sources, shortlist=5)
    assert main(["shortlist", str(model_dir), "--per-word", "2", "--frequent", "2"]) == 0
    assert "shortlist.safetensors: 400 training pairs" in capsys.readouterr().out
    model = load(model_dir)
    full = [g.text for g in model.generate(sources, beam=3)]
    assert [g.text for g in model.generate(sources, beam=3, shortlist=100_000)] == full  # every word kept
    vocabulary = model.assets.target_vocabulary
    table = ShortlistTable.load(model_dir / "shortlist.safetensors", vocabulary, vocabulary)
    few = ["a b c", "c b a b", "b a"]  # the shortlist is the batch's: these three share one
    allowed = {vocabulary.itos[i] for i in table.words(torch.tensor([[vocabulary.stoi[t] for t in "a b c".split()]]), 2)}
    assert len(allowed) < len(vocabulary)  # a real restriction
    for generation in model.generate(few, beam=3, shortlist=2):
        assert set(generation.tokens) <= allowed


def test_an_exported_model_keeps_its_shortlist_and_an_ensemble_is_refused_one(model_dir, tmp_path):
    if not (model_dir / "shortlist.safetensors").exists():
        assert main(["shortlist", str(model_dir)]) == 0
    assert main(["export", str(model_dir), str(tmp_path / "exported")]) == 0
    assert (tmp_path / "exported" / "shortlist.safetensors").read_bytes() == (model_dir / "shortlist.safetensors").read_bytes()
    with pytest.raises(WeanError, match="shortlist: a single model's option, not an ensemble's"):
        load([model_dir, model_dir]).generate(["a b c"], shortlist=5)
    table = ShortlistTable.load(model_dir / "shortlist.safetensors", *[load(model_dir).assets.target_vocabulary] * 2)
    table.vocabularies = "another model's, of the same size"
    table.save(tmp_path / "exported" / "shortlist.safetensors")
    with pytest.raises(WeanError, match="made for another model's vocabularies"):
        load(tmp_path / "exported").generate(["a b c"], shortlist=5)


def test_the_table_needs_the_training_pairs_only_not_the_validation_split_the_config_names(model_dir, tmp_path,
                                                                                         capsys):
    train = load(model_dir).assets.config.data.train
    moved = tmp_path / "moved"  # on another machine: the run's validation file is not there
    assert main(["export", str(model_dir), str(moved)]) == 0
    config = yaml.safe_load((moved / "config.yaml").read_text())
    config["data"]["valid"] = str(tmp_path / "gone" / "valid")
    (moved / "config.yaml").write_text(yaml.safe_dump(config))
    small = ["--train", str(train), "--frequent", "2", "--per-word", "2"]  # table words for most source words
    assert main(["shortlist", str(moved), *small]) == 0
    assert main(["shortlist", str(model_dir), *small]) == 0
    made = [line.split(": ", 1)[1] for line in capsys.readouterr().out.splitlines() if "safetensors: " in line]
    assert len(made) == 2 and made[0] == made[1]  # the same pairs read
    (tables, metadata), (expected, expected_metadata) = (read_tensors(folder / "shortlist.safetensors")
                                                         for folder in (moved, model_dir))
    assert metadata == expected_metadata and tables.keys() == expected.keys()
    assert all(torch.equal(tables[name], expected[name]) for name in tables)


def test_a_shortlist_below_the_tables_cut_is_warned_and_validation_never_uses_one(model_dir, tmp_path):
    from wean.inference.generator import ShortlistWarning

    assert main(["shortlist", str(model_dir), "--frequent", "6"]) == 0
    with pytest.warns(ShortlistWarning, match="leave out the 6 most frequent, so those ranked 2 to 5"):
        load(model_dir).generate(["a b c"], shortlist=2)
    data = write_corpus(tmp_path / "data", train=60, valid=5)
    config = tiny_config(data, tmp_path / "model", max_updates=2, validate_every=2)
    config.generation.shortlist = 50  # the model has no table while it trains
    assert Trainer(config).train().validations


@pytest.fixture(scope="module")
def small_table(model_dir):
    """The model and a table that leaves out part of its vocabulary (3 frequent words, 2 per word)."""
    assert main(["shortlist", str(model_dir), "--per-word", "2", "--frequent", "3"]) == 0
    generator = load(model_dir)
    vocabulary = generator.assets.target_vocabulary
    return generator, ShortlistTable.load(model_dir / "shortlist.safetensors", vocabulary, vocabulary)


@pytest.mark.parametrize("search", [
    {"strategy": "beam", "beam": 3, "nbest": 3, "block_ngram_repeat": 2},
    {"strategy": "beam", "beam": 3, "coverage_penalty": "summary", "coverage_weight": 0.5, "length_penalty": 1.0},
    {"strategy": "greedy", "min_length": 4},
    {"strategy": "diverse_beam", "beam": 4, "diverse_groups": 2, "nbest": 2},
])
def test_a_compact_shortlist_searches_as_the_full_width_one(small_table, search):
    from wean.data.corpus import pad
    from wean.search import decode
    from wean.search_options import SearchOptions
    from wean.inference.shortlist import Shortlisted, compact_decode

    generator, table = small_table
    vocabulary = generator.assets.target_vocabulary
    sources = [[vocabulary.stoi[t] for t in s.split()] for s in ["a b c", "c b a b d", "b a e e"]]
    source, lengths = pad(sources), torch.tensor([len(s) for s in sources])
    options = SearchOptions(**search)
    banned = [vocabulary.stoi["b"], UNK_ID]  # a word of every list, and a special
    full = decode(Shortlisted(generator.model, table, 3), source, lengths, options, banned)
    compact_model = Shortlisted(generator.model, table, 3, compact=True)
    assert compact_model.compact and compact_model.words(source).numel() < len(vocabulary)  # a real restriction
    compact = compact_decode(compact_model, source, lengths, options, banned)
    assert [[h.tokens for h in n] for n in compact] == [[h.tokens for h in n] for n in full]
    # the same softmax, but for <pad> and <bos> at -inf among its terms: the sums' rounding may move
    assert torch.allclose(torch.tensor([h.log_prob for n in compact for h in n]),
                          torch.tensor([h.log_prob for n in full for h in n]), rtol=0, atol=1e-5)
    assert all(vocabulary.stoi["b"] not in h.tokens for n in compact for h in n)


def test_only_the_ranking_strategies_search_the_lists_width():
    from wean.search_options import SearchOptions
    from wean.inference.shortlist import searches_compactly

    assert all(searches_compactly(SearchOptions(strategy=s)) for s in ("beam", "greedy", "diverse_beam"))
    # sampling's seeded noise is drawn per word id; the names constraint masks columns by id
    assert not searches_compactly(SearchOptions(strategy="sampling"))
    assert not searches_compactly(SearchOptions(strategy="beam", names_and_numbers="from_source"))


def test_an_int8_model_samples_and_searches_through_a_shortlist(model_dir):
    if not (model_dir / "shortlist.safetensors").exists():
        assert main(["shortlist", str(model_dir)]) == 0
    model = load(model_dir, quantization="int8")
    assert isinstance(model.model.output_layer.projection, DynamicQuantizedLinear)
    for search in ({"beam": 3}, {"strategy": "sampling", "seed": 1}):
        generations = model.generate(["a b c", "c b a b"], shortlist=2, **search)
        assert all(g.tokens for g in generations)
