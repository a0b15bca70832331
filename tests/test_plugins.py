"""A component from outside the package: registered in a user's file, chosen by one config key,
trained, saved and loaded back, without an edit to wean."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import yaml

from synthetic import reverse_pairs, tiny_config, write_corpus
from wean.config import config_from_dict, load_config
from wean.errors import WeanError
from wean.inference.generator import load
from wean.registry import OUTPUT_LAYERS, Registry
from wean.training import Trainer

PLUGIN = textwrap.dedent('''
    """An output layer wean does not have: a linear layer whose logits are divided by a
    temperature, which its own config key sets."""
    from dataclasses import dataclass

    from torch import nn

    from wean.config import OutputLayerConfig
    from wean.models.interfaces import OutputLayer
    from wean.registry import OUTPUT_LAYERS


    @dataclass
    class TemperedOutputConfig(OutputLayerConfig):
        temperature: float = 1.0


    @OUTPUT_LAYERS.register("tempered-linear", config=TemperedOutputConfig)
    class TemperedLinearOutput(OutputLayer):
        def __init__(self, hidden_size, vocabulary_size, temperature):
            super().__init__()
            self.projection = nn.Linear(hidden_size, vocabulary_size)
            self.temperature = temperature

        @classmethod
        def build(cls, config, embedding, hidden_size, vocabulary_size):
            return cls(hidden_size, vocabulary_size, config.temperature)

        def forward(self, queries):
            return self.projection(queries) / self.temperature
''')


@pytest.fixture(scope="module")
def plugin(tmp_path_factory):
    """One file for the module: a name registered from two different files is refused."""
    path = tmp_path_factory.mktemp("user") / "my_components.py"
    path.write_text(PLUGIN, encoding="utf-8")
    return path


def plugin_config(tmp_path, plugin, **output_layer):
    data = write_corpus(tmp_path / "data")
    values = tiny_config(data, tmp_path / "model").to_dict()
    values["plugins"] = [str(plugin)]
    values["model"]["output_layer"] = {"type": "tempered-linear", **output_layer}
    return values


def test_an_output_layer_from_a_users_file_trains_saves_and_generates(tmp_path, plugin):
    config = config_from_dict(plugin_config(tmp_path, plugin, temperature=0.5))
    assert config.model.output_layer.temperature == 0.5
    trainer = Trainer(config)
    assert type(trainer.model.output_layer).__name__ == "TemperedLinearOutput"
    trainer.train()

    saved = yaml.safe_load((tmp_path / "model" / "config.yaml").read_text())
    assert saved["model"]["output_layer"]["temperature"] == 0.5
    generator = load(tmp_path / "model")
    assert type(generator.model.output_layer).__name__ == "TemperedLinearOutput"
    assert generator.model.output_layer.temperature == 0.5
    sources, targets = reverse_pairs(200, seed=7)
    outputs = [g.text for g in generator.generate(sources, beam=5)]
    assert sum(o == t for o, t in zip(outputs, targets)) / len(targets) >= 0.9


def test_a_plugins_keys_are_checked_like_wean_s_own(tmp_path, plugin):
    with pytest.raises(WeanError, match=r"unknown key model.output_layer.temprature \(did you mean temperature\?\)"):
        config_from_dict(plugin_config(tmp_path, plugin, temprature=0.5))
    with pytest.raises(WeanError, match="model.output_layer.temperature must be float"):
        config_from_dict(plugin_config(tmp_path, plugin, temperature="hot"))


def test_unknown_type_names_every_registered_choice_plugins_included(tmp_path, plugin):
    values = plugin_config(tmp_path, plugin)
    config_from_dict(values)  # imports the plugin
    values["model"]["output_layer"]["type"] = "tempered"
    with pytest.raises(WeanError, match="model.output_layer.type is 'tempered'; choose one of linear, wean, pointer_generator, tempered-linear"):
        config_from_dict(values)


def test_a_plugin_tokenizer_checks_the_config_it_is_chosen_by(tmp_path):
    """The config asks each registered component what it needs (its check_config, in its own
    file): a tokenizer from a user's file refuses a setting it cannot honour, naming the key."""
    path = tmp_path / "cased_only.py"
    path.write_text(textwrap.dedent('''
        from wean.data.tokenizers import WordTokenizer
        from wean.errors import WeanError
        from wean.registry import TOKENIZERS


        @TOKENIZERS.register("cased-words")
        class CasedWordTokenizer(WordTokenizer):
            kind = "cased-words"

            @classmethod
            def check_config(cls, config):
                super().check_config(config)
                if config.data.tokenizer.lowercase:
                    raise WeanError("config: data.tokenizer.lowercase: cased-words keeps the case")
    '''), encoding="utf-8")
    values = {"plugins": [str(path)], "data": {"tokenizer": {"type": "cased-words"}}}
    assert config_from_dict(values).data.tokenizer.type == "cased-words"
    values["data"]["tokenizer"]["lowercase"] = True
    with pytest.raises(WeanError, match="lowercase: cased-words keeps the case"):
        config_from_dict(values)
    values["data"]["tokenizer"] = {"type": "cased-words", "byte_fallback": True}  # the base class's check still holds
    with pytest.raises(WeanError, match="byte_fallback is for the bpe and unigram"):
        config_from_dict(values)


def test_a_broken_or_missing_plugin_is_one_line_naming_the_file(tmp_path, plugin):
    config_file = tmp_path / "config.yaml"
    values = plugin_config(tmp_path, plugin)
    values["plugins"] = [str(tmp_path / "absent.py")]
    config_file.write_text(yaml.safe_dump(values))
    with pytest.raises(WeanError, match="plugins: .*absent.py: file not found"):
        load_config(config_file)

    broken = tmp_path / "broken.py"
    broken.write_text("import torch\n\nraise RuntimeError('no GPU here')\n")
    values["plugins"] = [str(broken)]
    config_file.write_text(yaml.safe_dump(values))
    with pytest.raises(WeanError, match=r"plugins: .*broken.py:3: RuntimeError: no GPU here"):
        load_config(config_file)


def test_a_name_cannot_be_taken_twice():
    registry = Registry("thing", "wean.models")

    @registry.register("one")
    class One:
        pass

    registry.register("one")(One)  # the same class again (a file imported twice) is fine
    with pytest.raises(WeanError, match="thing 'one' is registered already"):
        registry.register("one")(type("Other", (), {}))
    assert "linear" in OUTPUT_LAYERS.names()


def test_the_documented_copying_output_layer_is_a_working_plugin(tmp_path):
    """docs/architecture.md's worked example, as written there: registered from its own file, it
    trains, and its model loads and copies words no vocabulary holds."""
    text = Path("docs/architecture.md").read_text(encoding="utf-8")
    section = text[text.index("## Adding a component"):]
    code = section[section.index("```python\n") + 10 : section.index("```\n", section.index("```python\n"))]
    path = tmp_path / "my_components.py"
    path.write_text(code, encoding="utf-8")
    data = write_corpus(tmp_path / "data", train=200, valid=10)
    values = tiny_config(data, tmp_path / "model", max_updates=3).to_dict()
    values["plugins"] = [str(path)]
    values["model"]["output_layer"] = {"type": "my_copy", "vocabulary_layer": "linear"}
    Trainer(config_from_dict(values)).train()
    generator = load(tmp_path / "model")
    assert generator.model.copies_source
    output = generator.generate(["a b zzz c d"], beam=2)[0]  # zzz: outside the vocabulary
    assert output.tokens and all(token in generator.assets.target_vocabulary.stoi or token == "zzz"
                                 for token in output.tokens)


def planted_model(model_dir: Path, tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A copy of ``model_dir`` whose config names a plug-in file ``name`` that, imported, writes the
    marker file; (the copy, the marker)."""
    import shutil

    planted = tmp_path / name
    marker = tmp_path / "it-ran"
    planted.write_text(f"from pathlib import Path\nPath({str(marker)!r}).write_text('ran')\n")
    copy = tmp_path / "model"
    shutil.copytree(model_dir, copy)
    config = yaml.safe_load((copy / "config.yaml").read_text())
    config["plugins"] = [str(planted)]
    (copy / "config.yaml").write_text(yaml.safe_dump(config))
    return copy, marker


def test_a_model_directory_runs_no_plugin_code_unless_trusted(model_dir, tmp_path, capsys):
    """A model directory is data: a plug-in its config names is refused in one line, not run,
    unless the user passes trust_plugins / --trust-plugins or imports that very file with --plugins."""
    from wean.cli import main

    copy, marker = planted_model(model_dir, tmp_path, "planted.py")
    with pytest.raises(WeanError, match=r"config.yaml: names plug-in code \(.*planted.py\), which loading a model "
                                         r"directory does not run unless asked: pass --trust-plugins"):
        load(copy)
    inputs = tmp_path / "in.txt"
    inputs.write_text("a b c\n")
    assert main(["generate", "--model", str(copy), "--input", str(inputs)]) == 1
    assert "--trust-plugins" in capsys.readouterr().err and not marker.exists()
    assert main(["generate", "--model", str(copy), "--input", str(inputs), "--trust-plugins"]) == 0
    assert marker.read_text() == "ran"  # asked for: imported
    load(copy)  # the file is imported now (as --plugins FILE would have done): accepted


def test_the_refusals_advice_works_from_the_top_level_load(model_dir, tmp_path):
    """The refusal tells the user to call wean.load(..., trust_plugins=True): that call exists and runs it."""
    import wean

    copy, marker = planted_model(model_dir, tmp_path, "planted_top.py")
    with pytest.raises(WeanError, match=r"wean.load\(\.\.\., trust_plugins=True\)"):
        wean.load(copy)
    assert not marker.exists()
    wean.load(copy, trust_plugins=True)
    assert marker.read_text() == "ran"


def test_a_run_from_a_model_whose_plugins_it_does_not_name_is_refused_without_running_them(model_dir, tmp_path):
    """training.init_from reads the starting model as data: plug-in code only it names is refused
    in one line that says what `wean train` can do (it has no --trust-plugins), and is not run."""
    copy, marker = planted_model(model_dir, tmp_path, "planted_start.py")
    data = write_corpus(tmp_path / "data", train=20, valid=5)
    with pytest.raises(WeanError, match=r"init_from: .*names plug-in code \(.*planted_start.py\) that this run's "
                                         r"config does not import: name those files \(or copies of them\) under "
                                         r"plugins: in yours"):
        Trainer(tiny_config(data, tmp_path / "tuned", init_from=str(copy), max_updates=1))
    assert not marker.exists() and not (tmp_path / "tuned").exists()
    config = tiny_config(data, tmp_path / "tuned", init_from=str(copy), max_updates=1).to_dict()
    config["plugins"] = [str(tmp_path / "planted_start.py")]  # the advice taken: the run's config names it
    Trainer(config_from_dict(config)).train()
    assert marker.read_text() == "ran"


def test_a_plugin_changed_since_training_is_refused(tmp_path, plugin):
    """The model directory keeps a copy of each plug-in file and its sha256; a changed copy is one line."""
    config = config_from_dict(plugin_config(tmp_path, plugin, temperature=0.5))
    config.training.max_updates = 1
    Trainer(config).train()
    copy = tmp_path / "model" / "plugins" / plugin.name
    assert copy.read_bytes() == plugin.read_bytes()
    assert yaml.safe_load((tmp_path / "model" / "config.yaml").read_text())["plugins"] == [f"plugins/{plugin.name}"]
    copy.write_text(copy.read_text() + "\n# changed\n")
    with pytest.raises(WeanError, match="my_components.py: this plug-in file changed since .* was written"):
        load(tmp_path / "model", trust_plugins=True)


def test_a_plugin_model_directory_loads_after_a_move_from_another_working_directory(tmp_path, plugin, monkeypatch):
    """The plug-in travels in the model directory: moved elsewhere and loaded from a third folder,
    it loads (trusted, or with the user's own copy of the file imported), and a plug-in named
    relative to a training config is found next to the config, like its base."""
    import shutil

    from wean.cli import main

    config_folder = tmp_path / "configs"
    config_folder.mkdir()
    shutil.copy(plugin, config_folder / plugin.name)
    values = plugin_config(tmp_path, plugin, temperature=0.5)
    values["plugins"] = [plugin.name]  # relative: next to the config file
    values["training"]["max_updates"] = 1
    (config_folder / "train.yaml").write_text(yaml.safe_dump(values))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["train", str(config_folder / "train.yaml")]) == 0
    moved = tmp_path / "moved" / "model"
    shutil.move(str(tmp_path / "model"), moved)
    (tmp_path / "third").mkdir()
    monkeypatch.chdir(tmp_path / "third")
    generator = load(moved, trust_plugins=True)
    assert type(generator.model.output_layer).__name__ == "TemperedLinearOutput"
    assert generator.generate(["a b c"])[0].tokens is not None
    # a fresh process, where nothing is imported yet: the directory's own copy is the code
    import subprocess
    import sys

    wean = str(Path(sys.executable).with_name("wean"))
    run = subprocess.run([wean, "generate", "--model", str(moved), "--trust-plugins"], input="a b c\n", text=True,
                         capture_output=True, cwd=tmp_path / "third", timeout=300)
    assert run.returncode == 0 and run.stdout.count("\n") == 1, run.stderr
    refused = subprocess.run([wean, "generate", "--model", str(moved)], input="a b c\n", text=True,
                             capture_output=True, cwd=tmp_path / "third", timeout=300)
    assert refused.returncode == 1 and "plugins/my_components.py" in refused.stderr

def test_resuming_with_a_changed_plugin_file_says_so(tmp_path):
    """--resume reads the model directory without trust: a plug-in the user changed since would be
    refused as untrusted code, with advice --resume cannot follow; it is named as changed."""
    from wean.model_dir import PLUGIN_DIGESTS, check_resumed_plugins, file_digest

    plugin = tmp_path / "mine.py"
    plugin.write_text("X = 1\n")
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / PLUGIN_DIGESTS).write_text(json.dumps({"plugins/mine.py": file_digest(plugin)}))
    check_resumed_plugins(tmp_path / "run", [str(plugin)])  # the same code: fine
    plugin.write_text("X = 2\n")
    with pytest.raises(WeanError, match="mine.py: this plug-in file changed since .*run was trained with it"):
        check_resumed_plugins(tmp_path / "run", [str(plugin)])
