"""``wean train``, ``wean generate`` and ``wean inspect`` as a user runs them."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from wean.cli import main
from wean.errors import WeanError

WEAN = str(Path(sys.executable).with_name("wean"))


def test_generate_from_stdin_and_files_keeps_input_order(model_dir, tmp_path):
    inputs = ["a b c d e f", "j i h g f e d c b a", "b b c"]
    result = subprocess.run([WEAN, "generate", "--model", str(model_dir), "--beam", "3", "--scores"],
                            input="\n".join(inputs) + "\n", capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 3 and all("\t" in line for line in lines)
    (tmp_path / "in.txt").write_text("\n".join(reversed(inputs)) + "\n")
    assert main(["generate", "--model", str(model_dir), "--input", str(tmp_path / "in.txt"),
                 "--output", str(tmp_path / "out.txt"), "--beam", "3"]) == 0
    reversed_outputs = (tmp_path / "out.txt").read_text().splitlines()
    assert reversed_outputs == [line.split("\t", 1)[1] for line in reversed(lines)]


def test_an_output_nowhere_to_go_is_one_line_before_the_model_loads(model_dir, tmp_path, capsys, monkeypatch):
    from wean.cli import options

    monkeypatch.setattr(options, "load_generator", lambda args: pytest.fail("the model was loaded"))
    (tmp_path / "in.txt").write_text("a b c\n")
    for output, said in ((tmp_path / "missing" / "out.txt", "does not exist"), (tmp_path, "a folder; name a file")):
        for command in ("generate", "simplify"):
            assert main([command, "--model", str(model_dir), "--input", str(tmp_path / "in.txt"),
                         "--output", str(output)]) == 1
            error = capsys.readouterr().err.strip()
            assert error.startswith(f"wean {command}: error: --output {output}") and said in error, error
            assert "\n" not in error


def test_inspect_counts_parameters_per_module(model_dir, capsys):
    assert main(["inspect", str(model_dir)]) == 0
    out = capsys.readouterr().out
    for group in ("embeddings", "encoder", "decoder", "attention", "output layer (linear)", "total"):
        assert group in out
    assert main(["inspect", "configs/seq2seq-pwkp.yaml"]) == 0
    out = capsys.readouterr().out
    # the WEAN paper's Table 5: 12.80M output-layer parameters for Seq2seq at 50,000 words, 256 hidden
    assert re.search(r"output layer \(linear\) +12,851,028\n", out)  # 256 x 50,004 + 50,004 biases


@pytest.mark.parametrize("case", ["missing_model", "corrupt_weights", "bad_beam", "missing_config", "bad_key"])
def test_bad_input_gives_one_clear_line(model_dir, tmp_path, capsys, case):
    broken = tmp_path / "broken"
    if case == "corrupt_weights":
        import shutil

        shutil.copytree(model_dir, broken)
        (broken / "model.safetensors").write_bytes(b"\x00garbage")
    argv, message = {
        "missing_model": (["generate", "--model", str(tmp_path / "none")], "model directory not found"),
        "corrupt_weights": (["generate", "--model", str(broken)], "corrupt or incompatible tensors"),
        "bad_beam": (["generate", "--model", str(model_dir), "--beam", "0"], "--beam is 0; it must be an integer from 1"),
        "missing_config": (["train", str(tmp_path / "no.yaml")], "no.yaml: config file not found"),
        "bad_key": (["train", "configs/demo.yaml", "--set", "training.epochs=3"],
                    "unknown key training.epochs (did you mean max_epochs?)"),
    }[case]
    status = main(argv)
    err = capsys.readouterr().err
    assert status == 1
    assert message in err and err.count("\n") == 1 and "Traceback" not in err


@pytest.mark.parametrize(
    "config, linear, concat, named",
    [
        # the WEAN paper's Table 5: 12.80M vs 0.13M (PWKP, EW-SEW) and 2.05M vs 0.52M (LCSTS);
        # ours add the linear layer's bias and the 4 special tokens to the vocabulary
        ("configs/wean-pwkp.yaml", "12,851,028", "131,328", r"output layer \(wean general\) +65,792"),
        ("configs/wean-lcsts.yaml", "2,054,052", "524,800", r"output layer \(wean general\) +262,656"),
        ("configs/seq2seq-lcsts.yaml", "2,054,052", "524,800", r"output layer \(linear\) +2,054,052"),
    ],
)
def test_inspect_reproduces_the_papers_output_layer_table(capsys, config, linear, concat, named):
    assert main(["inspect", config, "--compare-output-layers"]) == 0
    out = capsys.readouterr().out
    assert re.search(named, out)
    assert re.search(rf"linear \(Seq2seq\) +{linear}\n", out)
    assert re.search(rf"wean concat +{concat}\n", out)
    assert re.search(r"wean dot +0\n", out)


def test_export_fp16_halves_the_weights_and_keeps_the_outputs(model_dir, tmp_path, capsys):
    from wean.inference.generator import load

    out = tmp_path / "shipped"
    assert main(["export", str(model_dir), str(out), "--fp16", "--set", "generation.beam=2"]) == 0
    assert (out / "model.safetensors").stat().st_size < 0.55 * (model_dir / "model.safetensors").stat().st_size
    assert not (out / "checkpoints").exists()
    shipped, original = load(out), load(model_dir)
    assert shipped.config.generation.beam == 2
    inputs = ["a b c d e f", "j i h g f e d c b a", "b b c d"]
    ours, theirs = shipped.generate(inputs), original.generate(inputs, beam=2)
    assert [g.text for g in ours] == [g.text for g in theirs]
    assert [g.score for g in ours] == pytest.approx([g.score for g in theirs], abs=0.05)
    capsys.readouterr()
    assert main(["export", str(model_dir), str(tmp_path / "other"), "--set", "model.dropout=0"]) == 1
    assert "only generation.* settings" in capsys.readouterr().err


def test_an_exported_model_carries_the_models_it_reranks_with(model_dir, tmp_path, capsys):
    import yaml

    from wean.inference.generator import load

    out = tmp_path / "shipped"
    assert main(["export", str(model_dir), str(out), "--rerank", f"length=100,channel:{model_dir}=0.5",
                 "--set", "generation.rerank_size=4"]) == 0
    generation = yaml.safe_load((out / "config.yaml").read_text())["generation"]
    assert (generation["rerank"], generation["rerank_size"]) == ("length=100.0,channel:reranker/channel=0.5", 4)
    assert (out / "reranker" / "channel" / "model.safetensors").is_file()
    inputs = ["a b c d e f", "j i h g f e d c b a", "b b c d"]
    asked = load(model_dir).generate(inputs, nbest=4, rerank=f"length=100,channel:{model_dir}=0.5")
    assert [g.text for g in load(out).generate(inputs)] == [g.text for g in asked]
    capsys.readouterr()
    (tmp_path / "in.txt").write_text("".join(line + "\n" for line in inputs))
    assert main(["generate", "--model", str(out), "--input", str(tmp_path / "in.txt")]) == 0  # the command too
    assert capsys.readouterr().out.splitlines() == [g.text for g in asked]
    again = tmp_path / "again"  # exported again, it keeps its reranking models
    assert main(["export", str(out), str(again), "--fp16"]) == 0
    assert (again / "reranker" / "channel" / "model.safetensors").is_file()
    assert len(load(again).generate(inputs)) == 3
    capsys.readouterr()
    assert main(["export", str(model_dir), str(tmp_path / "bad"), "--rerank", "length"]) == 1
    assert "expected NAME=WEIGHT" in capsys.readouterr().err
    assert main(["export", str(model_dir), str(tmp_path / "typo"), "--rerank", f"channel:{tmp_path / 'nowhere'}=1"]) == 1
    assert "not a model directory" in capsys.readouterr().err and not (tmp_path / "typo").exists()


def test_plain_text_in_and_out(model_dir, tmp_path):
    """A PTB-tokenized, lowercasing model reads plain text and writes it back cased and detokenized."""
    from wean.inference.generator import load

    generator = load(model_dir)
    generator.config.data.tokenizer.corpus_tokenization = "ptb"
    generator.config.data.tokenizer.lowercase = True
    assert generator.plain_text.to_model_text('It isn\'t "cheap" (at all).') == "It is n't `` cheap '' -LRB- at all -RRB- ."
    source = "Paris, the capital of France, is (very) large."
    assert generator.plain_text.to_plain_text("paris is -lrb- very -rrb- large in france .", source) == \
        "Paris is (very) large in France."
    assert generator.plain_text.to_plain_text("it is large .", source) == "It is large."
    # a capital the source's first word has only by position does not spread through the output
    assert generator.plain_text.to_plain_text("a hole in the cloud .", "The spot is a hole in the Cloud.") == \
        "A hole in the Cloud."
    generated = generator.generate(["a b c"], plain_text=True)[0]
    assert generated.source == "a b c" and generated.text[:1].isupper()


def test_simplify_without_a_shipped_model_says_so(monkeypatch, tmp_path, capsys):
    import wean.pretrained

    monkeypatch.setattr(wean.pretrained, "SIMPLIFIER", tmp_path / "absent")
    assert main(["simplify", "A sentence."]) == 1
    assert "the pretrained simplifier is missing" in capsys.readouterr().err


def test_simplify_reads_arguments_or_stdin(model_dir, monkeypatch, capsys):
    import io

    assert main(["simplify", "--model", str(model_dir), "a b c d", "e f g"]) == 0
    from_arguments = capsys.readouterr().out.splitlines()
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"a b c d\ne f g\n")))
    assert main(["simplify", "--model", str(model_dir)]) == 0
    assert capsys.readouterr().out.splitlines() == from_arguments and len(from_arguments) == 2


def test_simplify_reads_a_file_with_input_and_hints_at_a_file_name_given_as_text(model_dir, tmp_path, capsys):
    texts = tmp_path / "texts.txt"
    texts.write_text("a b c d\ne f g\n")
    out = tmp_path / "out.txt"
    assert main(["simplify", "--model", str(model_dir), "--input", str(texts), "--output", str(out)]) == 0
    assert len(out.read_text().splitlines()) == 2
    assert main(["simplify", "--model", str(model_dir), str(texts)]) == 1
    assert f"is a file: to simplify its lines, use --input {texts}" in capsys.readouterr().err
    assert main(["simplify", "--model", str(model_dir), "--input", str(texts), "a b"]) == 1
    assert "not both" in capsys.readouterr().err
    from wean.inference.generator import load

    with pytest.raises(WeanError, match=r"takes a list of texts; to generate for one, pass \[text\]"):
        load(model_dir).generate("a b c")


@pytest.mark.parametrize("options, message", [
    ({"max_length": 0}, "max_length is 0"),
    ({"max_length": -1}, "max_length is -1"),
    ({"batch_size": -1}, "batch_size is -1"),
    ({"beam": 0}, "beam is 0"),
    ({"beam": -1}, "beam is -1"),
    ({"length_penalty": float("nan")}, "length_penalty is nan"),
    ({"min_length": 10**9}, "min_length is 1000000000"),
])
def test_generate_refuses_options_out_of_range_in_one_line(model_dir, options, message):
    from wean.inference.generator import load

    with pytest.raises(WeanError, match=f"^{message}; it must be"):
        load(model_dir).generate(["a b c"], **options)


def test_lone_surrogates_in_the_input_are_replaced_not_fatal(model_dir):
    from wean.inference.generator import load

    for plain_text in (False, True):
        outputs = load(model_dir).generate(["a \udca8 b c", "\ud800"], beam=2, plain_text=plain_text)
        for output in outputs:
            output.text.encode("utf-8")  # a lone surrogate cannot be written as UTF-8
            assert "\udca8" not in output.source


def test_an_interrupted_generate_keeps_the_finished_outputs(model_dir, tmp_path, monkeypatch, capsys):
    import wean.cli.generate as generate_command
    from wean.inference.generator import Generator

    (tmp_path / "in.txt").write_text("".join(f"{'a b c d e f g'[: 2 * (i % 5) + 3]}\n" for i in range(7)))
    monkeypatch.setattr(generate_command, "BLOCK", 3)
    real, calls = Generator.generate, []

    def interrupted_at_the_third_block(self, sentences, **options):
        calls.append(len(sentences))
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(self, sentences, **options)

    monkeypatch.setattr(Generator, "generate", interrupted_at_the_third_block)
    out = tmp_path / "out.txt"
    argv = ["generate", "--model", str(model_dir), "--input", str(tmp_path / "in.txt"), "--output", str(out)]
    assert main(argv) == 130
    assert "interrupted: 6 of 7 outputs written; they are in" in capsys.readouterr().err
    assert not out.exists() and len((tmp_path / "out.txt.partial").read_text().splitlines()) == 6
    monkeypatch.setattr(Generator, "generate", real)
    assert main(argv) == 0
    assert len(out.read_text().splitlines()) == 7 and not (tmp_path / "out.txt.partial").exists()


def test_reading_a_terminal_says_what_it_waits_for(model_dir, monkeypatch, capsys):
    import io

    class Terminal(io.TextIOWrapper):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stdin", Terminal(io.BytesIO(b"a b c\n"), encoding="utf-8"))
    assert main(["generate", "--model", str(model_dir)]) == 0
    out, err = capsys.readouterr()
    assert "end with Ctrl-D" in err and len(out.splitlines()) == 1


def test_export_overwrite_never_removes_the_model_it_exports(model_dir, tmp_path, capsys):
    """A source inside the folders that --overwrite replaces (the old model's reranker/ and
    ensemble/) is refused before anything is removed, with --fp16 as without."""
    import shutil

    target = tmp_path / "shipped"
    assert main(["export", str(model_dir), str(target)]) == 0
    for folder in ("reranker", "ensemble"):
        source = target / folder / "inner"
        shutil.copytree(model_dir, source)
        weights = (source / "model.safetensors").read_bytes()
        for fp16 in ([], ["--fp16"]):
            assert main(["export", str(source), str(target), "--overwrite", *fp16]) == 1
            assert f"{source}: inside {target / folder}, which --overwrite would remove" in capsys.readouterr().err
            assert (source / "model.safetensors").read_bytes() == weights


def test_train_and_export_refuse_a_directory_that_holds_something(model_dir, tmp_path, capsys):
    """No silent overwrite: a new run or an export into a non-empty directory is one line, unless
    --overwrite, which removes the old model's files (and only those)."""
    import shutil

    import yaml

    taken = tmp_path / "taken"
    shutil.copytree(model_dir, taken)
    shutil.rmtree(taken / "checkpoints", ignore_errors=True)  # a shipped-like directory: no run to resume
    (taken / "NOTES.md").write_text("mine")
    assert main(["export", str(model_dir), str(taken)]) == 1
    assert f"{taken}: not empty" in capsys.readouterr().err and (taken / "NOTES.md").exists()
    config = yaml.safe_load((model_dir / "config.yaml").read_text())
    config["model_dir"], config["training"]["max_updates"] = str(taken), 1
    config_file = tmp_path / "config.yaml"
    config_file.write_text(yaml.safe_dump(config))
    before = (taken / "model.safetensors").read_bytes()
    assert main(["train", str(config_file)]) == 1
    assert "--overwrite" in capsys.readouterr().err and (taken / "model.safetensors").read_bytes() == before
    (taken / "control-tuning.json").write_text("{}")  # the old model's: must not survive
    assert main(["train", str(config_file), "--overwrite"]) == 0
    assert not (taken / "control-tuning.json").exists() and (taken / "NOTES.md").read_text() == "mine"
    assert main(["export", str(model_dir), str(taken), "--overwrite"]) == 0
    assert not (taken / "checkpoints").exists() and (taken / "model.safetensors").exists()
    other = tmp_path / "not-a-model"
    other.mkdir()
    (other / "config.yaml").mkdir()  # a folder named like a model file
    assert main(["export", str(model_dir), str(other), "--overwrite"]) == 1
    assert "--overwrite replaces a wean model directory, and this is none" in capsys.readouterr().err
    assert (other / "config.yaml").is_dir()
