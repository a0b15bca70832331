import pytest

from wean.evaluation.stats import copy_statistics, length_shortfall, odd_generation, repeated_tokens


def test_repeats_of_the_papers_example():
    # Kiyono et al. 2018, Figure 3: the reference itself says "duran" twice
    output = "duran duran duran duran".split()
    reference = "duran duran group fashionable again".split()
    assert repeated_tokens(output, reference) == 2
    assert repeated_tokens("college college colleges learn".split(), "community college considers".split()) == 1


def test_repeats_count_only_tokens_the_output_repeats():
    assert repeated_tokens("a b a".split(), "c".split()) == 2
    assert repeated_tokens("a b c".split(), "a a a".split()) == 0  # repeats in the reference only
    assert repeated_tokens("a a b b".split(), "b b".split()) == 2  # "the" in the reference excuses only "the"


def test_length_shortfall():
    assert length_shortfall("graf retires".split(), "graf says goodbye to tennis due to injuries".split()) == 6
    assert length_shortfall("a b c".split(), "a".split()) == 0


def test_the_most_lenient_reference_counts():
    odd = odd_generation([("a", "a", "b")], [[("c",), ("a", "a", "d")]])
    assert odd.repeats == [0]
    assert odd.shortfall == [0]
    summary = odd_generation([("x", "x"), ("y",)], [[("y", "z", "w")], [("y",)]]).summary()
    assert summary["repeated_tokens"] == 2
    assert summary["outputs_with_repeats"] == 1
    assert summary["length_shortfall"] == 1
    assert summary["outputs_shorter_than_reference"] == 1


def test_copy_statistics():
    sources = [("a", "bb", "c"), ("x", "y")]
    outputs = [("a", "bb"), ("x", "y")]
    stats = copy_statistics(sources, outputs)
    assert stats["compression_ratio"] == pytest.approx((4 / 6 + 1) / 2)
    assert stats["identical_to_source"] == pytest.approx(50.0)
    assert stats["output_tokens"] == pytest.approx(2.0)
