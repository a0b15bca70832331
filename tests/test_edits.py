from hypothesis import given
from hypothesis import strategies as st

from wean.evaluation.edits import only_deletes, word_tokens


def test_an_output_that_leaves_words_out_only_deletes():
    source = "The cat, who was very old, sat on the mat in the sun."
    assert only_deletes(source, "The cat sat on the mat.")
    assert only_deletes(source, "The cat was very old. It sat on the mat.") is False  # "it" is new
    assert only_deletes("He left, and she stayed.", "He left. She stayed.")  # a split drops "and"


def test_a_changed_added_or_moved_word_is_more_than_a_deletion():
    source = "The cat sat on the mat."
    assert not only_deletes(source, "The dog sat on the mat.")
    assert not only_deletes(source, "The cat sat on the red mat.")
    assert not only_deletes(source, "On the mat the cat sat.")


def test_the_source_itself_an_empty_output_and_case_or_punctuation_alone_are_no_deletion():
    source = "The cat sat on the mat."
    assert not only_deletes(source, source)
    assert not only_deletes(source, "the cat sat on the mat")
    assert not only_deletes(source, "")
    assert not only_deletes(source, "...")


@given(st.lists(st.sampled_from(["a", "b", "c", "dog", "Ran", "1999"]), min_size=2, max_size=12), st.data())
def test_any_shorter_subsequence_of_the_words_only_deletes(words, data):
    kept = sorted(data.draw(st.sets(st.integers(0, len(words) - 1), min_size=1, max_size=len(words) - 1)))
    output = " ".join(words[i] for i in kept) + "."
    assert only_deletes(" ".join(words) + ".", output)
    assert word_tokens(output) == [words[i].lower() for i in kept]
