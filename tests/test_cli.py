"""``wean evaluate`` end to end: real files, the installed command, and every kind of bad input."""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from wean.cli import main


def run(capsys, *argv):
    status = main(["evaluate", *argv])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture
def tiny(tmp_path):
    files = {
        "src": "The cat perched on the mat .\nHe departed quickly .\n",
        "hyp": "The cat sat on the mat .\nHe left .\n",
        "ref0": "The cat sat on the mat .\nHe left fast .\n",
        "ref1": "A cat sat on the mat .\nHe went away quickly .\n",
    }
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return tmp_path


def test_table_and_json_with_signatures(tiny, capsys):
    status, out, _ = run(capsys, "--hyp", str(tiny / "hyp"), "--src", str(tiny / "src"),
                         "--refs", str(tiny / "ref0"), str(tiny / "ref1"))
    assert status == 0
    assert "variant:default|case:lc|tok:13a|nrefs:2" in out
    status, out, _ = run(capsys, "--hyp", str(tiny / "hyp"), "--src", str(tiny / "src"),
                         "--refs", str(tiny / "ref0"), str(tiny / "ref1"), "--json",
                         "--metrics", "sari,bleu,multi-bleu,rouge,fkgl,stats", "--sari-variant", "xu2016")
    record = json.loads(out)
    assert record["segments"] == 2 and record["references"] == 2
    assert set(record["scores"]) >= {"sari", "sari_add", "bleu", "multi_bleu", "rouge1", "rougeL", "fkgl",
                                     "compression_ratio", "identical_to_source", "repeated_tokens"}
    assert record["signatures"]["sari"]["variant"] == "xu2016"
    assert record["signatures"]["sari"]["level"] == "sentence mean"
    assert record["signatures"]["multi_bleu"]["tokenizer"] == "none"
    assert record["signatures"]["bleu"]["library"].startswith("sacrebleu==")
    assert record["signatures"]["rouge"]["library"].startswith("rouge-score==")
    assert len(record["inputs"]["hypothesis"]["sha256"]) == 64


def test_a_metric_list_starting_with_plus_adds_to_the_default(tiny, capsys):
    files = ["--hyp", str(tiny / "hyp"), "--src", str(tiny / "src"), "--refs", str(tiny / "ref0"), "--json"]
    _, default, _ = run(capsys, *files)
    _, added, _ = run(capsys, *files, "--metrics", "+multi-bleu,bleu")
    default, added = json.loads(default)["signatures"], json.loads(added)["signatures"]
    assert "multi_bleu" not in default and list(added) == list(default) + ["multi_bleu"]


def test_options_change_the_signature_and_the_score(tiny, capsys):
    args = ["--hyp", str(tiny / "hyp"), "--refs", str(tiny / "ref0"), "--metrics", "bleu", "--json"]
    _, cased, _ = run(capsys, *args, "--no-lowercase", "--tokenize", "none")
    _, lowered, _ = run(capsys, *args)
    cased, lowered = json.loads(cased), json.loads(lowered)
    assert cased["signatures"]["bleu"]["lowercase"] is False
    assert cased["signatures"]["bleu"]["tokenizer"] == "none"
    assert lowered["signatures"]["bleu"]["tokenizer"] == "13a"


def test_sentence_sari_file(tiny, capsys, tmp_path):
    out_file = tmp_path / "sentence.tsv"
    status, _, _ = run(capsys, "--hyp", str(tiny / "hyp"), "--src", str(tiny / "src"),
                       "--refs", str(tiny / "ref0"), "--sentence-sari", str(out_file))
    assert status == 0
    rows = [line.split("\t") for line in out_file.read_text().splitlines()]
    assert len(rows) == 2
    assert all(float(r[0]) == pytest.approx((float(r[1]) + float(r[2]) + float(r[3])) / 3, abs=1e-3) for r in rows)


@pytest.mark.parametrize(
    "case, message",
    [
        ("missing", "nothere: file not found"),
        ("short_ref", "ref0: has 1 lines but"),
        ("long_hyp", "hyp: has 3 lines but"),
        ("empty_hyp", "hyp: empty file, no outputs"),
        ("latin1_hyp", "hyp:2: not valid UTF-8"),
        ("no_refs", "no references"),
        ("bad_metric", "unknown metric 'meteor'"),
        ("sari_without_source", "metric 'sari' needs a source file"),
        ("unknown_benchmark", "unknown benchmark 'asset-test'"),
    ],
)
def test_bad_input_gives_one_line_and_nonzero_status(tiny, capsys, case, message):
    hyp, ref0 = str(tiny / "hyp"), str(tiny / "ref0")
    if case == "short_ref":
        (tiny / "ref0").write_text("only one line\n", encoding="utf-8")
    if case == "long_hyp":
        (tiny / "hyp").write_text("a\nb\nc\n", encoding="utf-8")
    if case == "empty_hyp":
        (tiny / "hyp").write_text("", encoding="utf-8")
    if case == "latin1_hyp":
        (tiny / "hyp").write_bytes("ok\ncaf\xe9\n".encode("latin-1"))
    argv = {
        "missing": ["--hyp", str(tiny / "nothere"), "--refs", ref0],
        "no_refs": ["--hyp", hyp],
        "bad_metric": ["--hyp", hyp, "--refs", ref0, "--metrics", "bleu,meteor"],
        "sari_without_source": ["--hyp", hyp, "--refs", ref0, "--metrics", "sari"],
        "unknown_benchmark": ["--hyp", hyp, "--benchmark", "asset-test"],
    }.get(case, ["--hyp", hyp, "--src", str(tiny / "src"), "--refs", ref0])
    status, out, err = run(capsys, *argv)
    assert status == 1
    assert out == ""
    assert err.count("\n") == 1 and message in err and "Traceback" not in err


def test_empty_output_lines_are_scored_with_a_warning(tiny, capsys):
    (tiny / "hyp").write_text("The cat sat on the mat .\n\n", encoding="utf-8")
    status, _, err = run(capsys, "--hyp", str(tiny / "hyp"), "--refs", str(tiny / "ref0"), "--metrics", "bleu")
    assert status == 0
    assert "1 empty line(s), first at line 2" in err


def test_missing_data_root_is_a_clear_error(capsys, tiny):
    status, _, err = run(capsys, "--hyp", str(tiny / "hyp"), "--benchmark", "turkcorpus-test",
                         "--data-root", str(tiny / "no-such-dir"))
    assert status == 1 and "no-such-dir (--data-root) is not a folder" in err


def installed_wean() -> str:
    beside_python = Path(sys.executable).with_name("wean")
    return str(beside_python) if beside_python.exists() else shutil.which("wean")


def test_installed_console_command(tiny):
    wean = installed_wean()
    result = subprocess.run([wean, "evaluate", "--hyp", str(tiny / "hyp"), "--refs", str(tiny / "ref0"),
                             "--metrics", "bleu"], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert "style:sacrebleu" in result.stdout
    result = subprocess.run([wean, "evaluate", "--hyp", str(tiny / "missing"), "--refs", str(tiny / "ref0")],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 1 and result.stderr.startswith("wean evaluate: error:")


def test_closed_pipe_ends_quietly(tiny):
    """`wean evaluate ... | head -c 10`: the reader is gone before wean writes; no traceback."""
    wean = installed_wean()
    read_end, write_end = os.pipe()
    os.close(read_end)  # every write to write_end now fails with EPIPE
    try:
        result = subprocess.run([wean, "evaluate", "--hyp", str(tiny / "hyp"), "--refs", str(tiny / "ref0"),
                                 "--metrics", "bleu", "--json"], stdout=write_end, stderr=subprocess.PIPE,
                                text=True, check=False)
    finally:
        os.close(write_end)
    assert result.returncode == 141
    assert result.stderr == ""


@pytest.mark.parametrize("token_text, message", [
    ("two words\n", "expected one line holding the token"),
    ("first\nsecond\n", "expected one line holding the token"),
    ("", "expected one line holding the token"),
])
def test_serve_refuses_a_token_file_it_cannot_read_one_token_from(tmp_path, capsys, token_text, message):
    token_file = tmp_path / "token"
    token_file.write_text(token_text)
    assert main(["serve", "--token-file", str(token_file)]) == 1
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.parametrize("flag, benchmark_plain, expected", [
    (None, True, True), (None, False, False), (False, True, False), (True, False, True),
])
def test_wean_test_reads_a_benchmark_as_plain_text_when_the_benchmark_is(tmp_path, monkeypatch, flag,
                                                                         benchmark_plain, expected):
    """A PTB-trained model scored on EASSE's detokenized TurkCorpus without --plain-text lost 2.8 BLEU:
    the benchmark knows its source is plain text; --plain-text / --no-plain-text still decide."""
    import dataclasses

    from wean.evaluation import benchmarks
    from wean.inference.generator import Generation
    from wean.inference.benchmark_scores import score_on_benchmarks

    (tmp_path / "b.src").write_text("A plain sentence .\n")
    (tmp_path / "b.ref").write_text("A plain sentence .\n")
    bench = dataclasses.replace(benchmarks.BENCHMARKS["wikismall-test"], name="tiny", source="b.src",
                                references=("b.ref",), plain_text=benchmark_plain)
    monkeypatch.setitem(benchmarks.BENCHMARKS, "tiny", bench)
    seen = []

    class Recorder:
        def generate(self, sentences, plain_text=None, **options):
            seen.append(plain_text)
            return [Generation(s, s, [], [], 0.0, 0.0, None) for s in sentences]

    score_on_benchmarks(Recorder(), ["tiny"], "system", tmp_path / "out", tmp_path, plain_text=flag)
    assert seen == [expected]


def test_two_wean_tests_writing_one_folder_keep_both_records(tmp_path, monkeypatch):
    """metrics.json was read before the generation and written after it: a second `wean test`
    into the same folder in between lost its record (the convergence queues share folders)."""
    import dataclasses
    import json

    from wean.evaluation import benchmarks
    from wean.inference.generator import Generation
    from wean.inference.benchmark_scores import score_on_benchmarks

    (tmp_path / "b.src").write_text("A plain sentence .\n")
    (tmp_path / "b.ref").write_text("A plain sentence .\n")
    bench = dataclasses.replace(benchmarks.BENCHMARKS["wikismall-test"], name="tiny", source="b.src",
                                references=("b.ref",))
    monkeypatch.setitem(benchmarks.BENCHMARKS, "tiny", bench)
    out = tmp_path / "out"

    class Copier:
        def __init__(self, during=None):
            self.during = during

        def generate(self, sentences, **options):
            if self.during:
                self.during()
            return [Generation(s, s, [], [], 0.0, 0.0, None) for s in sentences]

    score_on_benchmarks(Copier(), ["tiny"], "first", out, tmp_path)
    score_on_benchmarks(Copier(lambda: score_on_benchmarks(Copier(), ["tiny"], "other", out, tmp_path)),
                        ["tiny"], "second", out, tmp_path)
    assert sorted(json.loads((out / "metrics.json").read_text())) == ["first", "other", "second"]
    assert sorted(p.name for p in out.iterdir()) == ["first.tiny.txt", "metrics.json", "other.tiny.txt",
                                                     "second.tiny.txt"]
    # several benchmarks in one call, as `wean test --benchmark a b` asks
    monkeypatch.setitem(benchmarks.BENCHMARKS, "tiny2", dataclasses.replace(bench, name="tiny2"))
    score_on_benchmarks(Copier(), ["tiny", "tiny2"], "both", out, tmp_path)
    assert sorted(json.loads((out / "metrics.json").read_text())["both"]) == ["tiny", "tiny2"]


def test_every_subcommand_and_option_says_what_it_is_for(capsys):
    import argparse

    from wean.cli import build_parser

    parser = build_parser()
    commands = next(action for action in parser._actions if isinstance(action, argparse._SubParsersAction))
    described = {choice.dest: choice.help for choice in commands._choices_actions}
    missing = [name for name in commands.choices if not described.get(name)]
    for name, subparser in commands.choices.items():
        missing += [f"{name} {'/'.join(a.option_strings) or a.dest}" for a in subparser._actions
                    if not a.help and a.dest != "help"]
        subparser.format_help()  # raises on a bad % in a help string
    assert missing == []
    assert "%%" not in commands.choices["compare"].format_help()
    with pytest.raises(SystemExit):
        main(["--version"])
    assert capsys.readouterr().out.startswith("wean 0.")


def test_a_clone_named_wean_in_the_working_folder_does_not_shadow_the_package(tmp_path):
    """Python puts the working folder first on sys.path: before the src layout, the clone's own
    folder was imported as an empty namespace package and `wean.load` did not exist."""
    (tmp_path / "wean").symlink_to(Path(__file__).resolve().parents[1], target_is_directory=True)
    result = subprocess.run([sys.executable, "-c", "import wean; print(wean.__file__, wean.load.__name__)"],
                            cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[1] == "load" and result.stdout.split()[0].endswith("__init__.py")


@pytest.mark.parametrize("option, value", [("--max-request-s", "nan"), ("--max-queue-s", "0"), ("--max-texts", "-1")])
def test_serve_refuses_a_limit_that_is_not_positive(capsys, option, value):
    assert main(["serve", option, value]) == 1
    err = capsys.readouterr().err
    assert f"{option} must be positive" in err and err.count("\n") == 1


def test_an_unknown_option_is_reported_with_its_commands_usage(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["simplify", "--bogus"])
    assert exit_.value.code == 2
    error = capsys.readouterr().err
    assert error.startswith("usage: wean simplify") and "wean simplify: error: unrecognized arguments: --bogus" in error


def test_the_nbest_help_says_the_output_becomes_json_lines(capsys):
    with pytest.raises(SystemExit):
        main(["generate", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--nbest N outputs per input, best first" in help_text and "above 1, each input's outputs are one JSON line" in help_text
