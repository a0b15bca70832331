import re
from pathlib import Path

import pytest

from wean.config import Config, config_from_dict, load_config
from wean.errors import WeanError
from wean.models.model import build_model

CONFIGS = sorted(Path("configs").glob("*.yaml"))


def config_file(tmp_path, text):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


def test_presets_load_and_overrides_apply():
    config = load_config("configs/seq2seq-pwkp.yaml", ["training.max_epochs=3", "model.decoder.attention=concat"])
    assert config.training.max_epochs == 3 and config.model.decoder.attention == "concat"
    assert config.model.encoder.layers == 2 and config.model.dropout == 0.4
    assert config.training.batch_size == 64 and config.data.tokenizer.vocab_size == 50000


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_every_preset_validates_and_builds(path):
    config = load_config(path)
    vocabulary = config.data.tokenizer.vocab_size + 4
    model = build_model(config.model, vocabulary, vocabulary)
    assert sum(p.numel() for p in model.parameters()) > 0


def test_the_kauchak_cleaning_overlay_drops_pairs_with_lost_byte_mojibake():
    config = load_config(["configs/simplifier-control.yaml", "configs/overlays/kauchak-clean.yaml"])
    assert config.model.output_layer.type == "wean"  # the preset is kept under the overlay
    broken = re.compile(config.data.drop_if_matches)
    assert broken.search("born in ZÃ rich .") and broken.search("Dà il Ã")
    assert not broken.search("born in Zürich .") and not broken.search("an ASCII line .")
    # a word-final accented letter matches too: right for kauchak_v2, which has no intact non-ASCII
    # character, not for a corpus that has
    assert broken.search("a café .")


@pytest.mark.parametrize(
    "text, message",
    [
        ("model:\n  encoder:\n    hiden_size: 3\n", "unknown key model.encoder.hiden_size (did you mean hidden_size?)"),
        ("training:\n  max_epochs: lots\n", "training.max_epochs must be int, got 'lots'"),
        ("training:\n  max_epochs: true\n", "training.max_epochs must be int"),
        ("model:\n  decoder:\n    attention: additive\n", "model.decoder.attention is 'additive'; choose one of"),
        ("training:\n  optimizer: adagrad\n", "training.optimizer is 'adagrad'; choose one of adam, sgd"),
        ("training:\n  loss_per: batch\n", "training.loss_per is 'batch'; choose one of token, sentence"),
        ("model:\n  encoder: {bidirectional: true}\n  decoder: {attention: dot, bridge: linear}\n",
         "dot attention needs encoder states (512) as large as model.decoder.hidden_size (256)"),
        ("data:\n  tokenizer: {shared_vocab: false}\n", "share_embeddings needs data.tokenizer.shared_vocab"),
        ("model:\n  encoder: {layers: 3}\n", "bridge copy needs as many encoder as decoder layers"),
        ("data:\n  tokenizer: {byte_fallback: true}\n", "byte_fallback is for the bpe and unigram tokenizers"),
        ("data:\n  tokenizer: {character_coverage: 0}\n", "data.tokenizer.character_coverage is 0.0; it must be in (0, 1]"),
        ("data:\n  drop_if_matches: '[a-'\n", "data.drop_if_matches is not a regular expression"),
        ("model: [1, 2\n", "c.yaml:2: not valid YAML"),
    ],
)
def test_bad_configs_name_the_key(tmp_path, text, message):
    with pytest.raises(WeanError, match=message.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
        load_config(config_file(tmp_path, text))


def test_bad_override(tmp_path):
    with pytest.raises(WeanError, match="expected key=value"):
        load_config(config_file(tmp_path, "name: x\n"), ["training.max_epochs"])


def _keys(values: dict, prefix: str = "") -> set[str]:
    """Dotted keys of a config dict; generation.control's values are data, not keys."""
    keys = set()
    for key, value in values.items():
        if isinstance(value, dict) and value and f"{prefix}{key}" != "generation.control":
            keys |= _keys(value, f"{prefix}{key}.")
        else:
            keys.add(f"{prefix}{key}")
    return keys


def test_the_reference_config_lists_every_key_of_every_builtin_component():
    import dataclasses

    import yaml

    from wean.config import COMPONENT_SECTIONS, Config

    reference = yaml.safe_load(Path("configs/seq2seq-pwkp.yaml").read_text())
    every = _keys(Config().to_dict())
    for section, registry in COMPONENT_SECTIONS.items():
        for name in registry.names():
            config = registry.entry(name).config
            every |= {f"{section}.{item.name}" for item in dataclasses.fields(config)} if config else set()
    assert _keys(reference) == every


def test_each_builtin_component_reads_only_its_own_keys():
    config = config_from_dict({"model": {"encoder": {"type": "conv", "kernel_width": 5},
                                         "decoder": {"type": "bahdanau", "word_attention": "gates", "bridge": "zero"},
                                         "output_layer": {"type": "wean", "score": "concat"}}})
    encoder, decoder, output = config.model.encoder, config.model.decoder, config.model.output_layer
    assert encoder.kernel_width == 5 and not hasattr(encoder, "bidirectional")
    assert decoder.word_attention == "gates" and not hasattr(decoder, "coverage")
    assert output.score == "concat" and not hasattr(Config().model.output_layer, "score")  # linear has none
    saved = config.to_dict()
    assert "bidirectional" not in saved["model"]["encoder"] and "input_feeding" not in saved["model"]["decoder"]
    with pytest.raises(WeanError, match=r"unknown key model.encoder.kernel_widht \(did you mean kernel_width\?\)"):
        config_from_dict({"model": {"encoder": {"type": "conv", "kernel_widht": 5}}})


def test_another_components_keys_are_set_aside_so_old_model_directories_and_presets_load():
    """Model directories saved when each section held every component's keys (a simplifier's
    config saved so, in tests/fixtures) load; a preset's LSTM keys do not stop --set
    model.encoder.type=conv."""
    from wean.models.encoder import LSTMEncoderConfig
    from wean.models.output_layer import WeanOutputLayerConfig

    saved = Path(__file__).parent / "fixtures" / "simplifier-config-saved-2026-12.yaml"
    shipped = load_config(saved)
    assert "kernel_width" in saved.read_text()
    assert shipped.model.encoder == LSTMEncoderConfig(type="lstm", hidden_size=128, layers=2, bidirectional=True,
                                                      dropout=0.2)
    assert isinstance(shipped.model.output_layer, WeanOutputLayerConfig)
    conv = load_config("configs/encdec-gigaword.yaml", ["model.encoder.type=conv", "model.decoder.bridge=zero"])
    assert conv.model.encoder.type == "conv" and not hasattr(conv.model.encoder, "bidirectional")


def test_another_components_key_that_asks_for_something_is_said_to_be_set_aside(recwarn):
    from wean.config import SetAsideWarning

    config_from_dict({"model": {"decoder": {"type": "luong", "word_attention": "none", "coverage": True}}})
    assert not [w for w in recwarn if w.category is SetAsideWarning]  # its default: says nothing
    with pytest.warns(SetAsideWarning, match=r"model.decoder.word_attention \('gates'\) is a key of the decoder "
                                             r"bahdanau; this decoder is 'luong' and sets it aside"):
        config_from_dict({"model": {"decoder": {"type": "luong", "word_attention": "gates"}}})


def test_a_preset_inherits_its_base_and_overrides_only_what_it_names(tmp_path):
    (tmp_path / "presets").mkdir()
    (tmp_path / "base.yaml").write_text(
        "name: base\nmodel:\n  dropout: 0.3\n  encoder: {hidden_size: 64, layers: 1}\n"
        "  decoder: {bridge: linear}\n"
    )
    (tmp_path / "presets" / "child.yaml").write_text(
        "base: ../base.yaml\nname: child\nmodel:\n  encoder: {layers: 2}\n"
    )
    config = load_config(tmp_path / "presets" / "child.yaml")
    assert config.name == "child" and config.model.dropout == 0.3
    assert (config.model.encoder.hidden_size, config.model.encoder.layers) == (64, 2)  # mappings merge key by key
    (tmp_path / "base.yaml").write_text("base: presets/child.yaml\n")
    with pytest.raises(WeanError, match="leads back to itself"):
        load_config(tmp_path / "presets" / "child.yaml")


def test_bases_and_config_files_read_in_order_and_null_takes_the_default(tmp_path):
    (tmp_path / "preset.yaml").write_text("model:\n  dropout: 0.3\n  encoder: {layers: 1}\n  decoder: {bridge: linear}\n"
                                          "generation:\n  beam: 7\n")
    (tmp_path / "schedule.yaml").write_text("training:\n  max_epochs: 9\nmodel:\n  encoder: {layers: 3}\n")
    (tmp_path / "row.yaml").write_text("base: [preset.yaml, schedule.yaml]\ngeneration:\n  beam: null\n")
    row = load_config(tmp_path / "row.yaml")
    assert (row.model.dropout, row.model.encoder.layers, row.training.max_epochs) == (0.3, 3, 9)  # later bases win
    assert row.generation.beam == Config().generation.beam  # null: wean's default, not the base's 7
    both = load_config([tmp_path / "preset.yaml", tmp_path / "schedule.yaml"])  # wean train A.yaml B.yaml
    assert (both.model.encoder.layers, both.training.max_epochs, both.generation.beam) == (3, 9, 7)
    (tmp_path / "bad.yaml").write_text("base: [preset.yaml, 3]\n")
    with pytest.raises(WeanError, match="base must be the path of another config file, or a list of them"):
        load_config(tmp_path / "bad.yaml")
    (tmp_path / "list.yaml").write_text("- a\n")
    with pytest.raises(WeanError, match="list.yaml: a config file is a mapping of sections"):
        load_config([tmp_path / "preset.yaml", tmp_path / "list.yaml"])


def test_presets_with_a_base_equal_their_full_listing():
    """wean-pwkp.yaml is seq2seq-pwkp.yaml and one key: the Seq2seq and WEAN rows differ only there
    (and in the WEAN layer's own keys, at the defaults the reference lists)."""
    import dataclasses

    from wean.models.output_layer import WeanOutputLayerConfig

    wean_keys = {f"model.output_layer.{item.name}" for item in dataclasses.fields(WeanOutputLayerConfig)} - {
        "model.output_layer.type"}
    for preset, base in (("wean-pwkp", "seq2seq-pwkp"), ("wean-lcsts", "seq2seq-lcsts")):
        child, parent = load_config(f"configs/{preset}.yaml").to_dict(), load_config(f"configs/{base}.yaml").to_dict()
        assert _keys(child) == _keys(parent) | wean_keys
        differ = {key for key in _keys(parent) if _get(child, key) != _get(parent, key)}
        assert differ == {"name", "model_dir", "model.output_layer.type"}


def _get(values: dict, key: str):
    for part in key.split("."):
        values = values.get(part, {}) if isinstance(values, dict) else None
    return values


BILLION_LAUGHS = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n' + "".join(
    f"{level}: &{level} [{', '.join([f'*{previous}'] * 9)}]\n" for previous, level in zip("abcdefgh", "bcdefghi"))


@pytest.mark.parametrize(
    "text, message",
    [
        (BILLION_LAUGHS, "more than 100,000 values once its aliases are expanded"),
        ("a: " + "[" * 200 + "]" * 200 + "\n", "nested deeper than 50 levels"),
        ("a: &x\n  b: *x\n", "an alias refers to a value that contains it"),
        ("a: " + "9" * 5000 + "\n", "a value that cannot be read as a number .Exceeds the limit .4300 digits"),
    ],
)
def test_yaml_that_would_eat_the_machine_is_refused_before_it_is_expanded(tmp_path, text, message):
    """A 2 KB alias bomb expands to 387 million strings; it is refused from its parsed graph,
    not after expansion (which took 1.17 GB and wrote a 226 MB error message)."""
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(WeanError, match=message) as error:
        load_config(config_file(tmp_path, text))
    assert len(str(error.value)) < 300
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 100_000  # KiB: under 100 MB more
    flow = "{" + ", ".join(line for line in text.splitlines() if line.strip()) + "}"
    if "&x" not in text:  # the same through --set, in YAML's one-line form
        with pytest.raises(WeanError, match=message):
            load_config(config_file(tmp_path, "name: x\n"), [f"model={flow}"])


def test_a_config_file_over_a_mebibyte_is_refused(tmp_path):
    path = config_file(tmp_path, "name: x\n" + "# padding\n" * 120_000)
    with pytest.raises(WeanError, match="bytes, more than the 1,048,576 such a file holds"):
        load_config(path)


def test_sizes_are_bounded_before_anything_is_built(tmp_path, monkeypatch):
    """A million layers is refused by the config, at once; a model larger than the machine's
    memory by counting its parameters on the meta device, before any is allocated."""
    with pytest.raises(WeanError, match="model.encoder.layers is 1,000,000; wean builds at most 64"):
        load_config(config_file(tmp_path, "model:\n  encoder: {layers: 1000000}\n"))
    import wean.models.model as model_module

    config = load_config(config_file(tmp_path, "model: {embedding_size: 64}\n"))
    small_memory = {"SC_PAGE_SIZE": 4096, "SC_PHYS_PAGES": 256}  # 1 MiB
    monkeypatch.setattr(model_module.os, "sysconf", lambda name: small_memory[name])
    with pytest.raises(WeanError, match=r"the model has [\d,]+ parameters \(.* GiB in float32\), more than this machine's"):
        build_model(config.model, 5000, 5000)


def test_no_value_of_any_key_ends_in_a_traceback():
    """Every setting given each kind of wrong value: a config error naming it, or a model built."""
    import dataclasses

    from wean.config import Config, apply_overrides, config_from_dict

    def keys(section, prefix=""):
        for field_ in dataclasses.fields(section):
            value = getattr(section, field_.name)
            if dataclasses.is_dataclass(value):
                yield from keys(value, f"{prefix}{field_.name}.")
            else:
                yield prefix + field_.name

    for key in keys(Config()):
        for value in ("~", "-1", "1000000000000", "x", "[1]", ".nan"):
            try:
                config = config_from_dict(apply_overrides(Config().to_dict(), [f"{key}={value}"]))
                build_model(config.model, 10, 10)
            except WeanError:
                pass
