
import pytest

from wean.evaluation.sari import corpus_sari, sentence_sari


# The example of Xu et al.'s SARI.py and EASSE's tests: one source, three references, three outputs.
SOURCE = "About 95 species are currently accepted ."
REFERENCES = [
    "About 95 species are currently known .",
    "About 95 species are now accepted .",
    "95 species are now accepted .",
]
OUTPUTS = [
    "About 95 you now get in .",
    "About 95 species are now agreed .",
    "About 95 species are currently agreed .",
]


@pytest.mark.parametrize(
    "variant, expected",
    [
        # SARIsent as printed by cocoxu/simplification SARI.py (the values EASSE's skipped test expects)
        ("xu2016", [26.8278, 58.9000, 50.7161]),
        # EASSE corpus_sari on one sentence, deletion F1 and deletion precision (metric-parity README)
        ("default", [31.3502, 63.2374, 46.7293]),
        ("del-precision", [26.9536, 61.7097, 50.8868]),
    ],
)
def test_sentence_sari_reference_example(variant, expected):
    got = [sentence_sari(SOURCE, output, REFERENCES, variant=variant).sari for output in OUTPUTS]
    assert got == pytest.approx(expected, abs=5e-5)


def test_xu2016_corpus_is_mean_of_sentences():
    corpus = corpus_sari([SOURCE] * 3, OUTPUTS, [[r] * 3 for r in REFERENCES], variant="xu2016")
    sentences = [sentence_sari(SOURCE, output, REFERENCES, variant="xu2016") for output in OUTPUTS]
    assert corpus.sari == pytest.approx(sum(s.sari for s in sentences) / 3)
    assert corpus.add == pytest.approx(sum(s.add for s in sentences) / 3)


def test_default_sari_pools_counts_over_the_corpus():
    """Corpus SARI is not the mean of sentence SARI: counts are summed first."""
    corpus = corpus_sari([SOURCE] * 3, OUTPUTS, [[r] * 3 for r in REFERENCES])
    mean = sum(sentence_sari(SOURCE, o, REFERENCES).sari for o in OUTPUTS) / 3
    assert abs(corpus.sari - mean) > 0.1


def test_hand_computed_single_reference_case():
    # source "a b", output "a c", reference "a c": unigrams add 1/1, keep {a} 1/1, delete {b} 1/1;
    # bigrams: add "a c" correct, keep none (0/0 -> 0), delete "a b" correct.
    scores = sentence_sari("a b", "a c", ["a c"], tokenizer="none")
    # per order: add F1 = 1 for n=1,2 and 0 for n=3,4 (no n-grams); keep 1, 0, 0, 0; delete 1, 1, 0, 0
    assert scores.add == pytest.approx(50.0)
    assert scores.keep == pytest.approx(25.0)
    assert scores.delete == pytest.approx(50.0)


def test_legacy_ignores_lowercase_and_does_not_tokenize_the_source():
    source, output, refs = "x ( y ) z", "x (y) z", ["x (y) z"]
    legacy = sentence_sari(source, output, refs, variant="legacy", lowercase=True)
    # 13a splits "(y)" in the output and reference, but the legacy source is only split on spaces,
    # so identical texts still look like a rewrite; the default variant sees no change at all.
    assert legacy.sari < 100
    assert sentence_sari(source, output, refs).keep == pytest.approx(100.0)
    assert sentence_sari("A b", "a b", ["a b"], variant="legacy").delete > 0


def test_unknown_variant_is_rejected():
    with pytest.raises(ValueError, match="unknown SARI variant"):
        sentence_sari("a", "a", ["a"], variant="paper")
