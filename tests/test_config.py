import pytest

from wean.config import load_config
from wean.errors import WeanError


def config_file(tmp_path, text):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return path


def test_presets_load_and_overrides_apply():
    config = load_config("configs/seq2seq-pwkp.yaml", ["training.max_epochs=3", "model.decoder.attention=concat"])
    assert config.training.max_epochs == 3 and config.model.decoder.attention == "concat"
    assert config.model.encoder.layers == 2 and config.model.dropout == 0.4
    assert config.training.batch_size == 64 and config.data.tokenizer.vocab_size == 50000


@pytest.mark.parametrize(
    "text, message",
    [
        ("model:\n  encoder:\n    hiden_size: 3\n", "unknown key model.encoder.hiden_size (did you mean hidden_size?)"),
        ("training:\n  max_epochs: lots\n", "training.max_epochs must be int, got 'lots'"),
        ("training:\n  max_epochs: true\n", "training.max_epochs must be int"),
        ("model:\n  decoder:\n    attention: additive\n", "model.decoder.attention is 'additive'; choose one of"),
        ("model:\n  encoder: {bidirectional: true}\n  decoder: {attention: dot, bridge: linear}\n",
         "dot attention needs encoder states (512) as large as model.decoder.hidden_size (256)"),
        ("data:\n  tokenizer: {shared_vocab: false}\n", "share_embeddings needs data.tokenizer.shared_vocab"),
        ("model: [1, 2\n", "c.yaml:2: not valid YAML"),
    ],
)
def test_bad_configs_name_the_key(tmp_path, text, message):
    with pytest.raises(WeanError, match=message.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
        load_config(config_file(tmp_path, text))


def test_bad_override(tmp_path):
    with pytest.raises(WeanError, match="expected key=value"):
        load_config(config_file(tmp_path, "name: x\n"), ["training.max_epochs"])
