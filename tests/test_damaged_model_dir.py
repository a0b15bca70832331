"""A model directory damaged in any one file gives one line naming that file, never a traceback,
and nothing is accepted silently: the shipped simplifier's directory, copied and broken one way
per case."""

import json
import shutil
from pathlib import Path

import pytest

from wean.cli import main
from wean.errors import WeanError
from wean.generator import load
from wean.pretrained import SIMPLIFIER


def replace_in(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


def damage(directory: Path, case: str) -> tuple[str, str]:
    """Break ``directory`` one way; return the file named and a part of the expected message."""
    config = (directory / "config.yaml").read_text(encoding="utf-8")
    writes = {
        "tokenizer not JSON": ("tokenizer.json", b'{"type": ', "corrupt JSON"),
        "tokenizer a JSON list": ("tokenizer.json", b"[]", "expected a JSON object"),
        "tokenizer not UTF-8": ("tokenizer.json", b"\xff\xfe{}", "corrupt JSON"),
        "sentencepiece random": ("sentencepiece.model", bytes(range(256)) * 4, "not a sentencepiece model"),
        "sentencepiece truncated": ("sentencepiece.model", (directory / "sentencepiece.model").read_bytes()[:1000],
                                    "not a sentencepiece model"),
        "sentencepiece empty": ("sentencepiece.model", b"", "not a sentencepiece model (the file is empty)"),
        "config not UTF-8": ("config.yaml", b"name: \xff\n", "not UTF-8 text"),
        "config bad YAML": ("config.yaml", b"name: x\nmodel: [\n  a: b\n", "not valid YAML"),
        "negative hidden size": ("config.yaml", replace_in(config, "hidden_size: 256", "hidden_size: -5").encode(),
                                 "model.decoder.hidden_size is -5; it must be at least 1"),
        "negative max_length": ("config.yaml", replace_in(config, "max_length: 100", "max_length: -1").encode(),
                                "generation.max_length is -1"),
        "beam 0": ("config.yaml", replace_in(config, "beam: 5", "beam: 0").encode(), "generation.beam is 0"),
    }
    if case == "duplicate token":
        vocabulary = json.loads((directory / "vocab.json").read_text(encoding="utf-8"))
        vocabulary[10] = vocabulary[11]
        (directory / "vocab.json").write_text(json.dumps(vocabulary), encoding="utf-8")
        return "vocab.json", "appears twice"
    name, data, message = writes[case]
    (directory / name).write_bytes(data)
    return name, message


CASES = ["tokenizer not JSON", "tokenizer a JSON list", "tokenizer not UTF-8", "sentencepiece random",
         "sentencepiece truncated", "sentencepiece empty", "config not UTF-8", "config bad YAML",
         "negative hidden size", "negative max_length", "beam 0", "duplicate token"]


@pytest.mark.parametrize("case", CASES)
def test_one_damaged_file_is_one_line_naming_it(tmp_path, case):
    broken = tmp_path / "model"
    shutil.copytree(SIMPLIFIER, broken)
    name, message = damage(broken, case)
    with pytest.raises(WeanError) as error:
        load(broken)
    text = str(error.value)
    assert str(broken / name) in text and message in text and "\n" not in text, text


def test_the_cli_says_it_in_one_line_with_exit_1(tmp_path, capsys):
    broken = tmp_path / "model"
    shutil.copytree(SIMPLIFIER, broken)
    damage(broken, "config bad YAML")
    assert main(["simplify", "--model", str(broken), "A sentence."]) == 1
    err = capsys.readouterr().err
    assert "config.yaml:4: not valid YAML" in err and err.count("\n") == 1 and "Traceback" not in err
