import pytest

from wean.evaluation.fkgl import corpus_fkgl, count_syllables


@pytest.mark.parametrize(
    "word, syllables",
    [
        ("cat", 1),
        ("banana", 3),
        ("the", 1),  # exception list
        ("Mr", 2),  # exception list, after lowercasing
        ("table", 2),  # "tabl": 1 vowel group, +1 for vowel + final "bl"
        ("social", 2),  # groups "o", "ia"; +1 for "ia", -1 for "cial"
        ("free", 0),  # every trailing "e" is dropped: the heuristic's known quirk
        (".", 0),
        ("rhythm", 1),  # "y" is a vowel
    ],
)
def test_syllable_heuristic(word, syllables):
    assert count_syllables(word) == syllables


def test_fkgl_formula_on_a_hand_counted_text():
    text = "Banana banana banana banana ."
    # words 5 (the period counts as a word, as in EASSE), syllables 12, sentences 1
    assert corpus_fkgl([text]) == pytest.approx(0.39 * 5 + 11.8 * 12 / 5 - 15.59)


def test_fkgl_is_clipped_at_zero_and_counts_sentences_with_punkt():
    assert corpus_fkgl(["The cat sat ."]) == 0.0
    # two sentences on one line count as two
    one = corpus_fkgl(["Banana banana banana banana banana banana ."])
    two = corpus_fkgl(["Banana banana banana . Banana banana banana ."])
    assert two < one
