"""The character-level pipeline (the LCSTS setting) learns: unsegmented Chinese in, unsegmented
Chinese out, scored by character ROUGE, with WEAN's output layer as in the paper's LCSTS rows."""

from synthetic import HANZI, reverse_pairs, tiny_config, write_corpus
from wean.config import section_config
from wean.evaluation.rouge import corpus_rouge
from wean.inference.generator import load
from wean.training import Trainer


def test_a_char_level_wean_model_learns_to_reverse_unsegmented_hanzi(tmp_path):
    data = write_corpus(tmp_path / "data", symbols=HANZI, separator="")
    config = tiny_config(data, tmp_path / "model")
    config.data.tokenizer.type = "char"
    config.model.output_layer = section_config("model.output_layer", {"type": "wean"})
    config.model.embedding_size = 64  # WEAN scores 64-d queries against these embeddings
    Trainer(config).train()

    sources, targets = reverse_pairs(200, seed=7, symbols=HANZI, separator="")  # unseen
    outputs = [g.text for g in load(tmp_path / "model").generate(sources, beam=5)]
    assert not any(" " in output for output in outputs)  # detokenized back to unsegmented text
    assert sum(o == t for o, t in zip(outputs, targets)) / len(targets) >= 0.95
    assert corpus_rouge(outputs, [targets], tokenization="char")["rouge2"] >= 95
