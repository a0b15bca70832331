import math

import pytest

from wean.errors import WeanError
from wean.evaluation import EvaluationSettings, evaluate
from wean.evaluation.bleu import BleuSettings, corpus_bleu


def test_multi_bleu_has_no_smoothing_and_takes_text_as_tokenized():
    outputs, references = ["the cat sat on a mat"], [["the cat sat on the mat"]]
    # 4-grams: "the cat sat on" matches, "cat sat on a" and "sat on a mat" do not: p4 = 1/3.
    # p1 = 5/6, p2 = 3/5, p3 = 2/4, lengths equal: BLEU = (5/6 * 3/5 * 2/4 * 1/3) ** (1/4)
    expected = 100 * (5 / 6 * 3 / 5 * 2 / 4 * 1 / 3) ** 0.25
    assert corpus_bleu(outputs, references, BleuSettings("multi-bleu")) == pytest.approx(expected)
    no_four_gram = (["a cat sat down"], [["the cat sat on the mat"]])
    assert corpus_bleu(*no_four_gram, BleuSettings("multi-bleu")) == 0.0
    assert corpus_bleu(*no_four_gram, BleuSettings("sacrebleu")) > 0.0
    # multi-bleu never re-tokenizes: "mat." is one token that matches nothing
    assert corpus_bleu(["the cat sat on the mat."], [["the cat sat on the mat ."]], BleuSettings("multi-bleu")) < 100
    assert corpus_bleu(["the cat sat on the mat."], [["the cat sat on the mat ."]], BleuSettings()) == pytest.approx(100)


def test_casing_switch_changes_bleu():
    outputs, references = ["The Cat sat on the mat ."], [["the cat sat on the mat ."]]
    assert corpus_bleu(outputs, references, BleuSettings(lowercase=True)) == pytest.approx(100)
    assert corpus_bleu(outputs, references, BleuSettings(lowercase=False)) < 100


def test_brevity_penalty_uses_the_closest_reference():
    outputs = ["a b c d"]
    one = corpus_bleu(outputs, [["a b c d e f g h"]], BleuSettings("multi-bleu"))
    two = corpus_bleu(outputs, [["a b c d e f g h"], ["a b c d"]], BleuSettings("multi-bleu"))
    assert one == pytest.approx(100 * math.exp(1 - 8 / 4))
    assert two == pytest.approx(100)


def test_reference_of_wrong_length_is_a_clear_error():
    with pytest.raises(WeanError, match="references 1: has 1 lines but references 0 has 2"):
        evaluate(["a", "b"], None, [["a", "b"], ["a"]], EvaluationSettings(metrics=("bleu",)))
    with pytest.raises(WeanError, match="outputs: has 1 lines but references 0 has 2"):
        evaluate(["a"], None, [["a", "b"]], EvaluationSettings(metrics=("bleu",)))
