"""Pretrained word vectors (model.embeddings.pretrained): the rows loaded are the file's vectors,
both file formats are read, frozen embeddings do not train, and a bad file is one line."""

import dataclasses
import gzip

import pytest
import torch
from torch import nn

from synthetic import tiny_config, write_corpus
from wean.errors import WeanError
from wean.models.pretrained_embeddings import load_pretrained
from wean.training import Trainer

VECTORS = {"a": [0.5] * 32, "b": [-0.25] * 32, "c": [float(i) / 32 for i in range(32)]}


def _write(path, header: bool = False, vectors=VECTORS) -> None:
    lines = ([f"{len(vectors) + 1} 32"] if header else [])
    lines += [f"{word} " + " ".join(f"{x:g}" for x in vector) for word, vector in vectors.items()]
    lines.append("zebra " + " ".join(["1"] * 32))  # a word no vocabulary has
    text = "\n".join(lines) + "\n"
    if path.suffix == ".gz":
        with gzip.open(path, "wt", encoding="utf-8") as out:
            out.write(text)
    else:
        path.write_text(text, encoding="utf-8")


def _config(tmp_path, vectors, **embeddings):
    data = write_corpus(tmp_path / "data", train=200, valid=20)
    config = tiny_config(data, tmp_path / "model")
    model = dataclasses.replace(config.model, embeddings=dataclasses.replace(
        config.model.embeddings, pretrained=str(vectors), **embeddings))
    return dataclasses.replace(config, model=model)


@pytest.mark.parametrize("name, header", [("glove.txt", False), ("word2vec.txt.gz", True)])
def test_the_vocabulary_s_words_start_from_the_file_s_vectors(tmp_path, name, header):
    _write(tmp_path / name, header)
    trainer = Trainer(_config(tmp_path, tmp_path / name))
    vocabulary = trainer.assets.source_vocabulary
    weight = trainer.model.encoder.embedding.weight
    for word, vector in VECTORS.items():
        assert torch.equal(weight[vocabulary.stoi[word]], torch.tensor(vector))
    assert not torch.equal(weight[vocabulary.stoi["d"]], torch.tensor(VECTORS["a"]))  # missing: random
    assert trainer.notes[0].startswith(f"pretrained embeddings from {tmp_path / name}: source 3 of 10 words "
                                              "found, 7 missing")


def test_frozen_embeddings_do_not_train(tmp_path):
    _write(tmp_path / "vectors.txt")
    config = _config(tmp_path, tmp_path / "vectors.txt", freeze=True)
    config = dataclasses.replace(config, training=dataclasses.replace(config.training, max_updates=3))
    trainer = Trainer(config)
    embedding = trainer.model.encoder.embedding.weight.detach().clone()
    projection = trainer.model.output_layer.projection.weight.detach().clone()
    trainer.train()
    assert torch.equal(trainer.model.encoder.embedding.weight, embedding)
    assert not torch.equal(trainer.model.output_layer.projection.weight, projection)


@pytest.mark.parametrize("content, message", [
    ("a 1 2 3\n", ":1: 3 numbers after the word; model.embedding_size is 32"),
    ("2 16\na " + "1 " * 16 + "\n", ":1: vectors of 16 numbers; model.embedding_size is 32"),
    ("a " + "x " * 32 + "\n", ":1: not a number after the word 'a'"),
])
def test_a_file_of_other_vectors_is_refused_in_one_line(tmp_path, content, message):
    (tmp_path / "bad.txt").write_text(content, encoding="utf-8")
    with pytest.raises(WeanError, match=f"bad.txt{message}$"):
        Trainer(_config(tmp_path, tmp_path / "bad.txt"))
    with pytest.raises(WeanError, match="^model.embeddings.pretrained: .*absent.txt: file not found$"):
        Trainer(_config(tmp_path / "other", tmp_path / "absent.txt"))


def test_sentencepiece_pieces_that_start_a_word_take_their_word_s_vector(tmp_path):
    _write(tmp_path / "vectors.txt")
    tokens = ["<pad>", "<unk>", "<bos>", "<eos>", "\u2581a", "b", "\u2581c", "<levenshtein_0.60>", "\u2581", "\u2581d"]
    embedding = nn.Embedding(len(tokens), 32)
    before = embedding.weight.detach().clone()
    found = load_pretrained(embedding, tokens, tmp_path / "vectors.txt", specials=4, pieces=True)
    assert torch.equal(embedding.weight[4], torch.tensor(VECTORS["a"]))
    assert torch.equal(embedding.weight[6], torch.tensor(VECTORS["c"]))
    assert torch.equal(embedding.weight[5], before[5])  # "b" inside a word is not the word "b"
    assert (found.matched, found.missing, found.examples_missing) == (2, 1, ["\u2581d"])
