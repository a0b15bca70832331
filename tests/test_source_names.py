"""names_and_numbers: from_source: no number, and no capitalised word, that the source lacks."""

import pytest
import torch

from wean.config import ModelConfig
from wean.data.corpus import pad
from wean.data.vocabulary import Vocabulary
from wean.inference.ensemble import Ensemble
from wean.inference.generator import load
from wean.inference.source_names import SourceNamesOnly, TokenClasses
from wean.models.model import build_model
from wean.search import decode
from wean.search_options import SearchOptions

TOKENS = ["▁the", "▁The", "▁Paris", "▁1962", "▁1963", "▁went", ".", "ich", "▁Z", "7", "ür", "▁He", "<0xC3>"]
VOCABULARY = Vocabulary(TOKENS)
ID = {token: VOCABULARY.stoi[token] for token in TOKENS}
STRATEGIES = [SearchOptions(strategy="greedy", max_length=6, min_length=5),
              SearchOptions(strategy="beam", beam=4, nbest=4, max_length=6, min_length=5),
              SearchOptions(strategy="sampling", nbest=8, seed=3, max_length=6, min_length=5),
              SearchOptions(strategy="diverse_beam", beam=4, nbest=4, max_length=6, min_length=5)]


def test_tokens_are_classed_from_their_text():
    classes = TokenClasses.of(VOCABULARY)

    def named(mask):
        return {VOCABULARY.itos[i] for i in mask.nonzero().flatten().tolist()}

    assert named(classes.numbers) == {"▁1962", "▁1963", "7"}
    assert named(classes.names) == {"▁The", "▁Paris", "▁Z", "▁He"}  # "ich" does not start a word
    assert named(classes.function_words) == {"▁The", "▁He"}
    assert named(classes.continuation) == {"ich", "ür", "7", "<0xC3>"}
    assert named(classes.byte_pieces) == {"<0xC3>"} and named(classes.punctuation) == {"."}
    assert named(classes.sentence_ends) == {"."}
    assert VOCABULARY.itos[int(classes.lowercase[ID["▁The"]])] == "▁the" and classes.lowercase[ID["▁Paris"]] == -1
    words = TokenClasses.of(Vocabulary(["He", "he", "Bern", "3rd", "<0xC3>", "<chars_ratio_0.95>"]))
    assert words.names.tolist()[4:] == [True, False, True, False, False, False]  # every token starts a word
    assert words.numbers.tolist()[4:] == [False] * 3 + [True, False, False]  # byte pieces and control tokens are no words
    assert words.function_words.tolist()[4:8] == [True, False, False, False]


def biased_model(*favourites: str, seed: int = 0):
    """A random model that writes ``favourites`` far more than any other token."""
    torch.manual_seed(seed)
    config = ModelConfig(embedding_size=8)
    config.encoder.hidden_size = config.decoder.hidden_size = 8
    model = build_model(config, len(VOCABULARY), len(VOCABULARY)).eval()
    with torch.no_grad():
        for token in favourites:
            model.output_layer.projection.bias[ID[token]] = 8.0
    return model


def written(model, sources, options):
    source = pad([[ID[t] for t in sentence] for sentence in sources])
    lengths = torch.tensor([len(s) for s in sources])
    return [[[VOCABULARY.itos[i] for i in h.tokens] for h in nbest] for nbest in decode(model, source, lengths, options)]


@pytest.mark.parametrize("options", STRATEGIES, ids=lambda o: o.strategy)
def test_a_number_the_source_lacks_is_never_written(options):
    model = biased_model("▁1963", "7")
    sources = [["▁the", "▁1962", "▁went", "."], ["▁1963", "▁went", "."]]
    free = written(model, sources, options)
    assert any("▁1963" in output for output in free[0])  # unconstrained, it invents 1963
    constrained = written(SourceNamesOnly(model, TokenClasses.of(VOCABULARY)), sources, options)
    assert all("▁1963" not in output and "7" not in output for output in constrained[0])
    assert any("▁1963" in output for output in constrained[1])  # the second source holds it
    ensemble = written(SourceNamesOnly(Ensemble([model, model]), TokenClasses.of(VOCABULARY)), sources, options)
    assert all("▁1963" not in output for output in ensemble[0])


@pytest.mark.parametrize("options", STRATEGIES, ids=lambda o: o.strategy)
def test_a_capitalised_word_only_opens_a_sentence_and_a_name_never(options):
    constrained = SourceNamesOnly(biased_model("▁The", "▁Paris"), TokenClasses.of(VOCABULARY))
    for output in written(constrained, [["▁the", "▁went", "."]], options)[0]:
        assert "▁Paris" not in output
        for position, token in enumerate(output):
            if token == "▁The":  # only first, or after a full stop
                assert position == 0 or output[position - 1] == "."
    with_paris = written(constrained, [["▁Paris", "▁went", "."]], options)[0]
    assert any("▁Paris" in output for output in with_paris)


def test_a_name_goes_on_only_as_the_source_spells_it():
    def pairs(outputs):
        return {(a, b) for output in outputs for a, b in zip(output, output[1:])}

    source = [["▁Z", "ür", "ich", "▁went", "."]]
    for options in (SearchOptions(strategy="sampling", nbest=32, seed=1, max_length=6, min_length=5),
                    SearchOptions(strategy="beam", beam=8, nbest=8, max_length=6, min_length=5)):
        free = pairs(written(biased_model("▁Z", "ich"), source, options)[0])
        constrained = pairs(written(SourceNamesOnly(biased_model("▁Z", "ich"), TokenClasses.of(VOCABULARY)),
                                    source, options)[0])
        assert ("▁Z", "ich") in free  # unconstrained it writes "Zich", no word of the source
        assert ("▁Z", "ich") not in constrained and ("▁Z", "7") not in constrained


@pytest.mark.parametrize("options", STRATEGIES, ids=lambda o: o.strategy)
def test_a_name_ends_only_where_a_source_word_ends_and_no_byte_is_invented(options):
    constrained = SourceNamesOnly(biased_model("▁Z", "▁went", "<0xC3>"), TokenClasses.of(VOCABULARY))
    for output in written(constrained, [["▁Z", "ür", "ich", "▁went", "."]], options)[0]:
        assert "<0xC3>" not in output
        for position, token in enumerate(output[:-2]):
            if token == "▁Z":  # "Z" alone is no word of the source: "Zürich" is
                assert output[position + 1 : position + 3] == ["ür", "ich"], output


def test_a_capitalised_opening_word_ends_there():
    constrained = SourceNamesOnly(biased_model("▁He", "ich"), TokenClasses.of(VOCABULARY))
    options = SearchOptions(strategy="beam", beam=4, nbest=4, max_length=6, min_length=5)
    for output in written(constrained, [["▁the", "▁went", "."]], options)[0]:
        for position, token in enumerate(output[:-1]):
            if token == "▁He":
                assert output[position + 1] != "ich"  # "Heich": an opening function word may not grow a name


def test_the_option_reaches_generate(model_dir):
    generator = load(model_dir)
    sources = ["a b c d e", "f g h"]
    assert ([g.text for g in generator.generate(sources, names_and_numbers="from_source")]
            == [g.text for g in generator.generate(sources)])  # no number nor name in this vocabulary
    with pytest.raises(Exception, match="names_and_numbers"):
        generator.generate(sources, names_and_numbers="never")


def test_a_function_word_opening_a_sentence_may_end_though_a_source_name_starts_with_it():
    """Sentencepiece spells "Heich" (like "Inverness": ▁In ver ness) as ▁He + ich; an output may
    still open with the word "He", while "He" inside a sentence is the source's name."""
    constrained = SourceNamesOnly(biased_model("▁He", "▁went"), TokenClasses.of(VOCABULARY))
    options = SearchOptions(strategy="beam", beam=8, nbest=8, max_length=6, min_length=5)
    outputs = written(constrained, [["▁He", "ich", "▁went", "."]], options)[0]
    assert any(output[:2] == ["▁He", "▁went"] for output in outputs)
    for output in outputs:
        for position, token in enumerate(output[1:-1], start=1):
            if token == "▁He" and output[position - 1] != ".":
                assert output[position + 1] == "ich", output
    ascii_bytes = TokenClasses.of(Vocabulary(["<0x28>", "<0xC3>", "▁"]))
    assert ascii_bytes.punctuation.tolist()[4:] == [True, False, True]  # "(" as a byte piece, the bare word mark
    assert ascii_bytes.byte_pieces.tolist()[4:] == [False, True, False]  # only non-ASCII bytes are checked
