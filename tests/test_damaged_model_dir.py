"""A model directory damaged in any one file gives one line naming that file, never a traceback,
and nothing is accepted silently: the shipped simplifier's directory, copied and broken one way
per case."""

import json
import shutil
from pathlib import Path

import pytest

from wean.cli import main
from wean.errors import WeanError
from wean.inference.generator import load
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


def rewrite_weights(directory: Path, change, keep_digest: bool = False) -> None:
    """The shipped weights changed by ``change(tensors)`` and written again: with a fresh digest
    (as a faulty training would write them), or with the old metadata kept (a tool that edited
    the tensors and copied the rest)."""
    from safetensors import safe_open
    from safetensors.torch import save

    from wean.tensor_files import write_tensors

    path = directory / "model.safetensors"
    with safe_open(str(path), "pt") as weights:
        tensors = {name: weights.get_tensor(name) for name in weights.keys()}
        metadata = weights.metadata()
    change(tensors)
    if keep_digest:
        path.write_bytes(save(tensors, metadata=metadata))
    else:
        write_tensors(path, tensors, {k: v for k, v in metadata.items() if k != "wean.sha256"})


def flip_a_byte(directory: Path) -> None:
    path = directory / "model.safetensors"
    data = bytearray(path.read_bytes())
    data[-1000] ^= 0x10
    path.write_bytes(bytes(data))


def first_square(tensors):
    return next(name for name, tensor in tensors.items() if tensor.dim() == 2 and tensor.size(0) == tensor.size(1))


def other_sentencepiece(directory: Path) -> None:
    from wean.data.tokenizers import SentencePieceTokenizer

    texts = [f"zebra number {i} quietly yodels over xylophones" for i in range(200)]
    (directory / "sentencepiece.model").write_bytes(SentencePieceTokenizer.train("bpe", texts, 60, False).model_proto)


WEIGHT_CASES = {
    "a flipped byte": (flip_a_byte, "model.safetensors", "damaged"),
    "a transposed tensor, old digest kept": (
        lambda d: rewrite_weights(d, lambda t: t.update({first_square(t): t[first_square(t)].t().contiguous()}),
                                  keep_digest=True), "model.safetensors", "damaged"),
    "NaN": (lambda d: rewrite_weights(d, lambda t: t["encoder.embedding.weight"].view(-1)[7].fill_(float("nan"))),
            "model.safetensors", "NaN or infinite"),
    "infinity": (lambda d: rewrite_weights(d, lambda t: t["decoder.rnn.weight_hh_l0"].view(-1)[0].fill_(float("inf"))),
                 "model.safetensors", "NaN or infinite"),
    "all zero": (lambda d: rewrite_weights(d, lambda t: [tensor.zero_() for tensor in t.values()]),
                 "model.safetensors", "all zero"),
    "float64": (lambda d: rewrite_weights(d, lambda t: t.update({name: v.double() for name, v in t.items()})),
                "model.safetensors", "wrong type"),
    "an int tensor": (lambda d: rewrite_weights(d, lambda t: t.update(
        {"encoder.embedding.weight": t["encoder.embedding.weight"].long()})), "model.safetensors", "wrong type"),
    "tokenizer of another type": (lambda d: (d / "tokenizer.json").write_text('{"type": "unigram", "lowercase": false}'),
                                  "tokenizer.json", "config.yaml says data.tokenizer.type bpe"),
    "tokenizer lowercasing": (lambda d: (d / "tokenizer.json").write_text('{"type": "bpe", "lowercase": true}'),
                              "tokenizer.json", "lowercase false"),
    "another sentencepiece model": (other_sentencepiece, "sentencepiece.model", "not the tokenizer of this vocabulary"),
    "an empty config": (lambda d: (d / "config.yaml").write_text(""), "config.yaml", "empty"),
}


@pytest.mark.parametrize("case", list(WEIGHT_CASES))
def test_damaged_weights_and_mismatched_tokenizers_are_refused_by_name(tmp_path, case):
    broken = tmp_path / "model"
    shutil.copytree(SIMPLIFIER, broken)
    make, name, message = WEIGHT_CASES[case]
    make(broken)
    with pytest.raises(WeanError) as error:
        load(broken)
    text = str(error.value)
    assert str(broken / name) in text and message in text and "\n" not in text, text
    if name == "model.safetensors":
        assert main(["verify", str(broken)]) == 1


def test_weights_without_a_digest_load_with_a_warning_and_fail_verify(tmp_path, capsys):
    """Weights another tool rewrote without wean's digest (a transposed tensor, say) cannot be
    checked: loaded, as an earlier wean's files must be, but never silently."""
    from wean.tensor_files import UnverifiedWeightsWarning

    edited = tmp_path / "model"
    shutil.copytree(SIMPLIFIER, edited)

    def transpose_and_drop_the_digest(tensors):
        square = first_square(tensors)
        tensors[square] = tensors[square].t().contiguous()

    from safetensors import safe_open
    from safetensors.torch import save

    with safe_open(str(edited / "model.safetensors"), "pt") as weights:
        tensors = {name: weights.get_tensor(name) for name in weights.keys()}
        aliases = {k: v for k, v in weights.metadata().items() if k != "wean.sha256"}
    transpose_and_drop_the_digest(tensors)
    (edited / "model.safetensors").write_bytes(save(tensors, metadata=aliases))
    with pytest.warns(UnverifiedWeightsWarning, match="no sha256"):
        load(edited)
    assert main(["verify", str(edited)]) == 1
    assert "cannot be detected" in capsys.readouterr().err


def test_verify_reports_a_whole_directory(capsys):
    assert main(["verify", str(SIMPLIFIER)]) == 0
    out = capsys.readouterr().out
    assert "sha256 matches" in out and "tokenizer and vocabularies agree" in out
    assert f"{SIMPLIFIER / 'reranker' / 'channel' / 'model.safetensors'}: sha256 matches" in out  # its fallback's


@pytest.mark.parametrize("case", ["swapped words", "flipped byte"])
def test_a_token_file_that_loads_but_changed_is_refused_by_its_digest(tmp_path, capsys, case):
    """Two words of vocab.json swapped, or one byte of sentencepiece.model changed where it still
    parses, load without an error and write wrong words: the sha256 written with them catches it."""
    broken = tmp_path / "model"
    shutil.copytree(SIMPLIFIER, broken)
    if case == "swapped words":
        name = "vocab.json"
        words = json.loads((broken / name).read_text(encoding="utf-8"))
        words[100], words[101] = words[101], words[100]
        (broken / name).write_text(json.dumps(words), encoding="utf-8")
    else:
        name = "sentencepiece.model"
        data = bytearray((broken / name).read_bytes())
        score = data.index(b"\x15", data.index(b"simple"))  # the piece's score, a float after its text
        data[score + 1] ^= 0x01  # its lowest bit: the model parses and has every piece, one scored otherwise
        (broken / name).write_bytes(bytes(data))
    with pytest.raises(WeanError, match=f"{name}: damaged: its sha256 differs"):
        load(broken)
    assert main(["verify", str(broken)]) == 1
    assert f"{name}: damaged" in capsys.readouterr().err
    (broken / "tokens.sha256.json").unlink()  # a directory written before the digests: loads, not verified
    assert main(["verify", str(broken)]) == 1
    assert "no tokens.sha256.json (written by an earlier wean)" in capsys.readouterr().err


def test_verify_checks_the_models_a_directory_carries_for_its_fallback(tmp_path, capsys):
    broken = tmp_path / "model"
    shutil.copytree(SIMPLIFIER, broken)
    weights = broken / "reranker" / "channel" / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-100] ^= 0x01  # a flipped bit in a tensor
    weights.write_bytes(bytes(data))
    assert main(["verify", str(broken)]) == 1
    assert f"{weights}: damaged" in capsys.readouterr().err


@pytest.fixture
def no_hang():
    """Fail, not hang, where a read would never end or never begin."""
    import signal

    def hung(signum, frame):
        raise AssertionError("a read did not return within 20 s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(20)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize("name", ["model.safetensors", "vocab.json", "tokenizer.json", "sentencepiece.model",
                                  "config.yaml"])
@pytest.mark.parametrize("special", ["device", "pipe"])
def test_a_file_that_is_a_device_or_a_pipe_is_refused_before_a_byte_is_read(tmp_path, name, special, no_hang):
    import os

    broken = tmp_path / "model"
    shutil.copytree(SIMPLIFIER, broken)
    (broken / name).unlink()
    if special == "device":
        (broken / name).symlink_to("/dev/zero")  # read to the end, it never ends
    else:
        os.mkfifo(broken / name)  # read, it waits for a writer that never comes
    with pytest.raises(WeanError, match=f"{name}: not a regular file"):
        load(broken)
    with pytest.raises(WeanError, match=f"{name}: not a regular file"):
        main_verify(broken)


@pytest.mark.parametrize("name", ["model.safetensors", "vocab.json", "tokenizer.json", "sentencepiece.model"])
def test_a_file_far_larger_than_its_kind_is_refused_by_its_size_before_it_is_read(tmp_path, name, no_hang):
    """A huge regular file in a model file's place (a link to one, or padding after real weights)
    is refused by its size, checked before a byte of it is read: 64 GiB of a sparse file would
    otherwise be read whole."""
    broken = tmp_path / "model"
    shutil.copytree(SIMPLIFIER, broken)
    with open(broken / name, "r+b") as file:  # the real bytes, then holes up to 64 GiB
        file.truncate(64 << 30)
    with pytest.raises(WeanError, match=f"{name}: 68,719,476,736 bytes, more than the [0-9,]+ such a file holds"):
        load(broken)
    with pytest.raises(WeanError, match=f"{name}: 68,719,476,736 bytes, more than"):
        main_verify(broken)


@pytest.mark.parametrize("header", [b'{"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, Infinity]}}',
                                    b"[" * 100_000 + b"]" * 100_000, b'{"w": {"data_offsets": [0, -4]}}'])
def test_a_crafted_weights_header_is_one_line(tmp_path, header):
    broken = tmp_path / "model"
    shutil.copytree(SIMPLIFIER, broken)
    (broken / "model.safetensors").write_bytes(len(header).to_bytes(8, "little") + header)
    with pytest.raises(WeanError, match="model.safetensors: corrupt or incompatible tensors"):
        load(broken)


def main_verify(directory: Path) -> None:
    from wean.model_dir import verify_model_directory

    verify_model_directory(directory)


def test_a_device_given_as_input_hypotheses_or_references_is_one_line(tmp_path, capsys, no_hang):
    assert main(["generate", "--model", str(SIMPLIFIER), "--input", "/dev/zero"]) == 1
    assert capsys.readouterr().err.strip().endswith(
        "/dev/zero: not a regular file (a device, a pipe or a socket), which wean does not read")
    (tmp_path / "refs").write_text("a b\n")
    for hyp, refs in (("/dev/zero", tmp_path / "refs"), (tmp_path / "refs", "/dev/zero")):
        assert main(["evaluate", "--hyp", str(hyp), "--src", str(tmp_path / "refs"), "--refs", str(refs)]) == 1
        assert capsys.readouterr().err.strip().endswith("/dev/zero: not a regular file (a device, a pipe or a "
                                                        "socket), which wean does not read")
