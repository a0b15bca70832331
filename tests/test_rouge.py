import pytest
from rouge_score import rouge_scorer

from wean.evaluation.rouge import corpus_rouge


def f1(p, r):
    return 100 * 2 * p * r / (p + r)


def test_chinese_is_scored_by_character():
    # output 9 characters, reference 11; all 9 output characters are in the reference.
    # bigrams: 7 of the output's 8 are among the reference's 10; LCS = 9.
    scores = corpus_rouge(["可穿戴技术设计原则"], [["可穿戴技术十大设计原则"]], tokenization="char")
    assert scores["rouge1"] == pytest.approx(f1(9 / 9, 9 / 11))
    assert scores["rouge2"] == pytest.approx(f1(7 / 8, 7 / 10))
    assert scores["rougeL"] == pytest.approx(f1(9 / 9, 9 / 11))


def test_rouge_score_default_tokenizer_would_score_chinese_zero():
    """Why the char tokenization exists: rouge-score drops every non-ASCII character."""
    default = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)
    assert default.score("可穿戴技术十大设计原则", "可穿戴技术设计原则")["rouge1"].fmeasure == 0.0
    assert corpus_rouge(["可穿戴技术设计原则"], [["可穿戴技术十大设计原则"]], tokenization="char")["rouge1"] > 80


def test_english_uses_porter_stemming_and_the_best_reference():
    # stems: the cat are run | reference 1: a cat ran | reference 2: the cat run fast
    scores = corpus_rouge(["the cats are running"], [["a cat ran"], ["the cat runs fast"]])
    assert scores["rouge1"] == pytest.approx(f1(3 / 4, 3 / 4))  # reference 2 is the better one
    assert scores["rouge2"] == pytest.approx(f1(1 / 3, 1 / 3))  # "the cat"
    assert scores["rougeL"] == pytest.approx(f1(3 / 4, 3 / 4))  # the cat ... run


def test_rouge_l_is_longest_common_subsequence_and_corpus_is_sentence_mean():
    # LCS("a b c d e", "a x c y e") = a c e: P = R = 3/5; second pair identical: 100.
    scores = corpus_rouge(["a b c d e", "police arrest man"], [["a x c y e", "police arrest man"]])
    assert scores["rougeL"] == pytest.approx((f1(3 / 5, 3 / 5) + 100) / 2)
    assert scores["rouge2"] == pytest.approx((0 + 100) / 2)
