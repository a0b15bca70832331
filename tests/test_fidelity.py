import numpy as np
import pytest

from wean.evaluation import EvaluationSettings, evaluate, fidelity
from wean.evaluation.fidelity import (
    faults, from_statistics, invented_names, invented_numbers, names, repeated_ngrams, sentence_statistics,
    unknown_words,
)

SOURCE = "He moved to Paris in 1998, where he wanted to study architecture."


def test_numbers_absent_from_the_source_are_invented():
    assert invented_numbers(SOURCE, "He moved to Paris in 1998.") == set()
    assert invented_numbers(SOURCE, "He moved to Paris in 1999.") == {"1999"}
    assert invented_numbers("It cost 1,000 dollars.", "It cost 1000 dollars.") == set()  # separators
    assert invented_numbers("In the 1990s.", "In 1990.") == set()
    assert invented_numbers("It was 3.5 m tall.", "It was 3 m tall.") == {"3"}
    assert invented_numbers("He had three sons.", "He had 3 sons.") == {"3"}  # spelled-out is no number


def test_a_name_is_a_capitalised_word_that_does_not_start_a_sentence():
    assert names("Tokyo is a city of Illinois in the United States.") == ["Illinois", "United", "States"]
    assert names("It rained. Then it stopped! \"Why?\" Nobody knew.") == []
    assert names("I think I'm right, said Anna.") == ["Anna"]
    assert names("The « Grand » Prix … Later") == ["Grand", "Prix"]
    assert names("(The film) was made by O'Brien.") == ["O'Brien"]
    # PTB-tokenized text: brackets are not names, a quote opens a sentence
    assert names("he said . `` Later , the -LRB- Army -RRB- came") == ["Army"]


def test_names_absent_from_the_source_are_invented():
    source = "Tokyo (東京) is the capital of Japan."
    assert invented_names(source, "Tokyo is a city of Illinois in the United States.") == ["Illinois", "United", "States"]
    assert invented_names(source, "It is the capital of Japan.") == []
    assert invented_names(source, "The capital of JAPAN is Tokyo.") == []  # compared case-insensitively
    assert invented_names("The Franco-Prussian war.", "The war was Prussian.") == []  # hyphens split words
    assert invented_names("The ticket is valid in Zürich.", "The ticket is valid in MÃrich.") == ["MÃrich"]
    assert invented_names("the city of paris .", "it is in paris .") == []  # lowercased text: no names


def test_repeats_count_content_ngrams_the_source_does_not_repeat():
    assert repeated_ngrams(SOURCE, "He moved to Paris, where he wanted to Paris in architecture.") == [("paris",)]
    # "the" and "was" are no content words: their repeats are not counted
    assert repeated_ngrams("The cat sat.", "The cat was here and the dog was there.") == []
    assert repeated_ngrams("In 1962 it was filmed.", "In 1962, the book was made into a film in 1962.") == [("1962",)]
    # an n-gram counts from a content word to a content word: "a datum" is no repeat of its own
    assert repeated_ngrams("a datum is a copy of the datum", "a datum is a copy of a datum") == []
    # a repeated phrase whose words the source holds as often, but apart
    assert repeated_ngrams("Paris Hilton visited Paris and Hilton Head.", "Paris Hilton visited Paris Hilton.") == [
        ("paris", "hilton")]
    # the source's own repeats excuse as many in the output
    assert repeated_ngrams("Paris is Paris.", "Paris is Paris.") == []
    assert repeated_ngrams("Paris is Paris.", "Paris, Paris, Paris.") == [("paris",), ("paris", "paris")]


def test_faults_name_the_words_an_output_fails_on_and_nothing_for_a_faithful_one():
    output = "He moved to Paris in 1999, where Paris is in MÃrich."
    assert faults(SOURCE, output) == {"invented_numbers": ["1999"], "invented_names": ["MÃrich"],
                                      "repeated_ngrams": ["paris"], "non_ascii_invented": ["Ã"]}
    assert faults(SOURCE, "He moved to Paris in 1998 to study architecture.") == {}
    assert faults(SOURCE, SOURCE) == {}  # the source itself is true to the source
    assert faults("It is in Zürich.", "It is in Zurich.") == {"invented_names": ["Zurich"], "non_ascii_lost": ["ü"]}
    assert faults("Loèche harbours Onyx.", "Loorship harbours Onyx.") == {"non_ascii_lost": ["è"]}
    assert faults("He moved to Paris.", " .") == {"empty": ["no word left"]} and faults(".", "") == {}


def test_unknown_words_are_faults_only_when_asked_for_and_only_where_the_source_lacks_them():
    source = "Deep convection strengthened near the Pas-de-Calais coast."
    broken = "Deep convection strengthenisted near the Pas-de airCalais coast."
    assert faults(source, broken) == {}  # not checked unless asked
    assert faults(source, broken, words=True) == {"unknown_words": ["strengthenisted", "airCalais"]}
    assert faults(source, "Deep convection grew near the Pas-de-Calais coast.", words=True) == {}
    # a word of the source that wordfreq lacks may be written again, in any case, possessive too
    assert unknown_words("", "Wädenswil lies on the lake.") == ["Wädenswil"]
    assert unknown_words("Wädenswil lies on the lake.", "WÄDENSWIL’s harbour lies on the lake.") == []
    assert unknown_words("The tolerance was low.", "The tolerance's limit was low.") == []


def test_corpus_statistics_are_shares_of_sentences_and_of_characters():
    sources = ["It is in Zürich.", "He was born in 1960.", "A plain sentence.", "São Paulo é grande."]
    outputs = ["It is in MÃrich.", "He was born in 1961 in Berlin.", "A  plain sentence.", "São Paulo is big."]
    rows = sentence_statistics(sources, outputs)
    assert rows.shape == (4, len(fidelity.COLUMNS))
    scores = from_statistics(rows.sum(0))
    assert scores == {
        "invented_numbers": 25.0, "invented_names": 50.0, "repeated_ngrams": 0.0, "copied": 25.0,
        # ü lost (0 of 1), ã kept and é lost (1 of 2): 1 of 3 characters
        "non_ascii_kept": pytest.approx(100 / 3), "non_ascii_invented": 25.0,  # Ã
    }
    # any subset of rows gives that subset's statistics: what a paired bootstrap resamples
    assert from_statistics(rows[[1, 1, 2]].sum(0))["invented_numbers"] == pytest.approx(200 / 3)
    assert from_statistics(sentence_statistics(["plain"], ["plain"]).sum(0))["non_ascii_kept"] == 100.0


def test_composed_and_decomposed_characters_are_the_same_character():
    assert from_statistics(sentence_statistics(["Zu\u0308rich"], ["Z\u00fcrich"]).sum(0))["non_ascii_kept"] == 100.0


def test_evaluate_reports_the_references_own_rates_beside_the_system():
    sources = ["He was born in 1960 in Paris.", "The film came out in 1962."]
    outputs = ["He was born in 1961 in Berlin.", "The film came out in 1962."]
    references = [["He was born in Paris in 1960.", "The film was made in 1962 in France."],
                  ["He was born in 1960.", "The film came out in 1962."]]
    evaluation = evaluate(outputs, sources, references, EvaluationSettings(("fidelity", "bleu")))
    assert evaluation.scores["invented_names"] == 50.0 and evaluation.scores["copied"] == 50.0
    # stream 1 invents "France" in one of two sentences, stream 2 nothing; the yardstick is their mean
    assert evaluation.reference_scores["invented_names"] == 25.0
    assert evaluation.reference_scores["copied"] == 25.0
    assert "bleu" not in evaluation.reference_scores  # only reference-free metrics have a yardstick
    assert evaluation.to_dict()["reference_scores"]["invented_names"] == 25.0
    header, *rows = evaluation.table().splitlines()
    assert header.split()[:3] == ["metric", "score", "refs"]
    assert [row.split()[:3] for row in rows if row.startswith("invented_names")] == [["invented_names", "50.00", "25.00"]]


def test_rows_are_integers_so_a_bootstrap_sum_is_exact():
    assert sentence_statistics(["a"], ["b"]).dtype == np.int64
