"""The paired bootstrap test: its counts reproduce the corpus metrics, and it separates a real
difference from noise."""

import json
import random

import pytest

from wean.cli import main
from wean.errors import WeanError
from wean.evaluation import corpus_sari
from wean.evaluation import fidelity
from wean.evaluation.bleu import BleuSettings, corpus_bleu
from wean.evaluation.significance import paired_bootstrap

WORDS = "the a cat dog sat ran on under mat rug quickly slowly big small house tree left right".split()


def corpus(size: int, seed: int = 0):
    """Sources, two references per source (each a light edit of it) and a copy of reference 0."""
    rng = random.Random(seed)
    sources, first, second = [], [], []
    for _ in range(size):
        words = [rng.choice(WORDS) for _ in range(rng.randint(6, 12))]
        sources.append(" ".join(words))
        first.append(" ".join(w for w in words if rng.random() > 0.3) or words[0])
        second.append(" ".join(rng.choice(WORDS) if rng.random() < 0.2 else w for w in words))
    return sources, [first, second]


@pytest.mark.parametrize("variant", ["default", "del-precision", "legacy"])
def test_summed_sari_counts_give_corpus_sari(variant):
    sources, references = corpus(40)
    outputs = [" ".join(s.split()[1:]) for s in sources]
    (result,) = paired_bootstrap(outputs, sources, sources, references, ["sari"], variant, samples=1)
    assert result.score_a == pytest.approx(corpus_sari(sources, outputs, references, variant).sari, abs=1e-9)
    assert result.score_b == pytest.approx(corpus_sari(sources, sources, references, variant).sari, abs=1e-9)


@pytest.mark.parametrize("metric,style", [("bleu", "sacrebleu"), ("multi-bleu", "multi-bleu")])
def test_summed_bleu_counts_give_corpus_bleu(metric, style):
    sources, references = corpus(40)
    outputs = [" ".join(s.split()[:-1]) for s in sources]
    (result,) = paired_bootstrap(outputs, sources, None, references, [metric], samples=1)
    assert result.score_a == pytest.approx(corpus_bleu(outputs, references, BleuSettings(style)), abs=1e-9)


def test_a_system_against_itself_is_never_significant():
    sources, references = corpus(50)
    for result in paired_bootstrap(sources, list(sources), sources, references, ["sari", "bleu"], samples=200):
        assert result.difference == 0 and result.low == 0 and result.high == 0
        assert result.p_value == 1.0


def test_a_real_difference_is_significant_and_one_sentence_is_not():
    sources, references = corpus(200)
    better = list(references[0])  # one reference copied: far better than the source on both metrics
    sari, bleu = paired_bootstrap(better, sources, sources, references, ["sari", "bleu"], samples=300)
    for result in (sari, bleu):
        assert result.difference > 0 and result.low > 0 and result.p_value < 0.01
    almost = list(sources)
    almost[7] = references[0][7]  # one sentence of 200 changed
    sari, bleu = paired_bootstrap(almost, sources, sources, references, ["sari", "bleu"], samples=300)
    for result in (sari, bleu):
        assert result.low <= 0 <= result.high and result.p_value > 0.05


def test_the_seed_fixes_the_resamples():
    sources, references = corpus(60)
    outputs = [" ".join(s.split()[::2]) for s in sources]

    def run(seed):
        return paired_bootstrap(outputs, sources, sources, references, ["sari"], samples=100, seed=seed)[0]

    assert run(3) == run(3)
    assert (run(3).low, run(3).high) != (run(4).low, run(4).high)


def test_unsupported_requests_are_clear_errors():
    sources, references = corpus(5)
    with pytest.raises(WeanError, match="xu2016"):
        paired_bootstrap(sources, sources, sources, references, ["sari"], "xu2016")
    with pytest.raises(WeanError, match="fkgl"):
        paired_bootstrap(sources, sources, sources, references, ["fkgl"])
    with pytest.raises(WeanError, match="outputs B: has 4 lines"):
        paired_bootstrap(sources, sources[:4], sources, references, ["bleu"])


def compare_files(tmp_path, size: int):
    """Files of a corpus for `wean compare`: system A is reference 0, system B the source; the
    command line that compares them."""
    sources, (first, second) = corpus(size)
    paths = {}
    for name, lines in {"src": sources, "ref0": first, "ref1": second, "a": first, "b": sources}.items():
        paths[name] = tmp_path / name
        paths[name].write_text("\n".join(lines) + "\n", encoding="utf-8")
    argv = ["compare", "--hyp", str(paths["a"]), str(paths["b"]), "--src", str(paths["src"]),
            "--refs", str(paths["ref0"]), str(paths["ref1"])]
    return sources, paths, argv


def test_compare_command(tmp_path, capsys):
    sources, paths, argv = compare_files(tmp_path, 80)
    argv += ["--samples", "100"]
    assert main(argv) == 0
    table = capsys.readouterr().out
    rows = {line.split()[0]: line.split() for line in table.splitlines()[4:]}
    # with a source, the fidelity statistics are compared too
    assert set(rows) == {"sari", "bleu", *fidelity.DIRECTIONS} and float(rows["bleu"][3]) > 0

    assert main(argv + ["--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert [c["metric"] for c in record["comparisons"]] == ["sari", "bleu", *fidelity.DIRECTIONS]
    assert record["comparisons"][1]["difference"] == pytest.approx(float(rows["bleu"][3]), abs=0.01)

    paths["b"].write_text("\n".join(sources[:-1]) + "\n", encoding="utf-8")
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{paths['b']}: has 79 lines" in err


def test_rouge_rows_give_corpus_rouge_and_expand_to_three_types():
    from wean.evaluation.rouge import corpus_rouge

    sources, references = corpus(30)
    outputs = [" ".join(s.split()[:5]) for s in sources]
    results = paired_bootstrap(outputs, sources, None, references, ["rouge"], samples=50)
    expected = corpus_rouge(outputs, references)
    assert [r.metric for r in results] == ["rouge1", "rouge2", "rougeL"]
    for result in results:
        assert result.score_a == pytest.approx(expected[result.metric], abs=1e-9)


def test_output_statistics_rows_give_wean_evaluate_stats():
    from wean.evaluation import EvaluationSettings, evaluate

    sources, references = corpus(60)
    # some outputs repeat a word, some are cut short, some are the source unchanged
    outputs = [s if i % 3 == 0 else " ".join(s.split()[:4] + s.split()[:2]) for i, s in enumerate(sources)]
    results = paired_bootstrap(outputs, sources, sources, references,
                               ["repeated_tokens", "length_shortfall", "identical_to_source"], samples=20)
    for hypotheses, score in ((outputs, "score_a"), (sources, "score_b")):
        expected = evaluate(hypotheses, sources, references, EvaluationSettings(metrics=("stats",))).scores
        got = {r.metric: getattr(r, score) for r in results}
        assert got == pytest.approx({m: expected[m] for m in got}, abs=1e-9)
    assert results[0].score_a > 0 and results[2].score_b == 100.0


def test_output_statistics_separate_a_real_difference():
    sources, references = corpus(200)
    stuttering = [s + " " + s.split()[0] + " " + s.split()[0] for s in sources]  # two extra repeats each
    repeats, = paired_bootstrap(stuttering, sources, sources, references, ["repeated_tokens"], samples=300)
    assert repeats.difference >= 200 and repeats.low > 0 and repeats.p_value < 0.01
    same, = paired_bootstrap(sources, list(sources), sources, references, ["length_shortfall"], samples=100)
    assert same.difference == 0 and same.p_value == 1.0
    with pytest.raises(WeanError, match="identical_to_source' needs a source"):
        paired_bootstrap(sources, sources, None, references, ["identical_to_source"])


def test_compare_command_tests_output_statistics(tmp_path, capsys):
    _, _, argv = compare_files(tmp_path, 40)
    assert main(argv + ["--samples", "50", "--metrics", "identical_to_source,length_shortfall"]) == 0
    rows = {line.split()[0]: line.split() for line in capsys.readouterr().out.splitlines()[4:]}
    assert set(rows) == {"identical_to_source", "length_shortfall"}
    assert float(rows["identical_to_source"][2]) == 100.0  # B is the source itself

    assert main(argv + ["--samples", "50", "--metrics", "+identical_to_source,bleu", "--json"]) == 0
    record = json.loads(capsys.readouterr().out)  # + adds to the default (sari, bleu, fidelity) in its order
    assert [c["metric"] for c in record["comparisons"]] == ["sari", "bleu", *fidelity.DIRECTIONS, "identical_to_source"]
