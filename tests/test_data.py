import pytest
import torch

from wean.config import TokenizerConfig
from wean.data.corpus import Example, encode_pairs, make_batches, read_parallel
from wean.data.tokenizers import CharTokenizer, WordTokenizer, build_tokenizer, load_tokenizer
from wean.data.vocabulary import EOS_ID, UNK_ID, Vocabulary
from wean.errors import WeanError

ENGLISH = ["The cat sat on the mat .", "A  dog ran   away quickly .", "Über naïve café owners smile ."]


def test_word_and_char_tokenizers_round_trip():
    word = WordTokenizer()
    assert [word.decode(word.encode(t)) for t in ENGLISH] == [" ".join(t.split()) for t in ENGLISH]
    assert WordTokenizer(lowercase=True).encode("The Cat") == ["the", "cat"]
    char = CharTokenizer()
    text = "可穿戴技术 iPhone 6 设计原则"
    assert char.encode("可穿 戴") == ["可", "穿", "▁", "戴"]
    assert char.decode(char.encode(text)) == text


@pytest.mark.parametrize("kind", ["bpe", "unigram"])
def test_sentencepiece_tokenizers_round_trip_and_are_saved(kind, tmp_path):
    corpus = [f"{t} {i}" for i in range(60) for t in ENGLISH]
    tokenizer = build_tokenizer(TokenizerConfig(type=kind, vocab_size=60), corpus)
    for text in ENGLISH + ["unseen wörds like Zürich 2026 ."]:
        assert tokenizer.decode(tokenizer.encode(text)) == " ".join(text.split())
    tokenizer.save(tmp_path)
    loaded = load_tokenizer(tmp_path)
    assert loaded.encode(ENGLISH[0]) == tokenizer.encode(ENGLISH[0])


def test_vocabulary_keeps_the_most_frequent_types_after_the_specials(tmp_path):
    vocabulary = Vocabulary.build([["b", "a", "b"], ["c", "b", "a"], ["d"]], max_size=2)
    assert vocabulary.itos == ["<pad>", "<unk>", "<bos>", "<eos>", "b", "a"]
    assert vocabulary.encode(["a", "d"], add_eos=True) == [5, UNK_ID, EOS_ID]
    assert vocabulary.decode([4, 5, EOS_ID, 4]) == ["b", "a"]
    vocabulary.save(tmp_path / "v.json")
    assert Vocabulary.load(tmp_path / "v.json").itos == vocabulary.itos
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(WeanError, match="bad.json: corrupt JSON"):
        Vocabulary.load(tmp_path / "bad.json")


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    return path


def test_reading_a_split_validates_its_files(tmp_path):
    write(tmp_path, "a.src", "x y\nz\n")
    with pytest.raises(WeanError, match="a.dst: file not found"):
        read_parallel(tmp_path / "a")
    write(tmp_path, "a.dst", "x\n")
    with pytest.raises(WeanError, match="a.dst: has 1 lines but .*a.src has 2"):
        read_parallel(tmp_path / "a")
    write(tmp_path, "a.dst", b"x\n\xff\n")
    with pytest.raises(WeanError, match="a.dst:2: not valid UTF-8"):
        read_parallel(tmp_path / "a")
    write(tmp_path, "a.dst", "x\nz\n")
    write(tmp_path, "a.ref.0", "x\nz\n")
    write(tmp_path, "a.ref.1", "x\nw\n")
    text = read_parallel(tmp_path / "a")
    assert len(text.references) == 3 and text.references[2] == ["x", "w"]


def test_training_pairs_that_are_empty_or_too_long_are_dropped_and_counted(tmp_path, capsys):
    write(tmp_path, "t.src", "a b\n\na b c d e\nc\n")
    write(tmp_path, "t.dst", "a\nb\nc\n\n")
    text = read_parallel(tmp_path / "t")
    vocabulary = Vocabulary.build([["a", "b", "c"]], 10)
    examples = encode_pairs(text, WordTokenizer(), vocabulary, vocabulary, max_tokens=4)
    assert [e.index for e in examples] == [0]
    err = capsys.readouterr().err
    assert "dropped 2 pair(s) with an empty side, first at line 2" in err
    assert "dropped 1 pair(s) longer than 4 tokens (data.max_tokens), first at line 3" in err


def test_batches_respect_limits_cover_every_example_and_are_reproducible():
    examples = [Example(i, [4] * (1 + i % 17), [4] * (1 + i % 11) + [EOS_ID]) for i in range(500)]
    batches = make_batches(examples, batch_size=16, batch_tokens=120, generator=torch.Generator().manual_seed(1))
    assert sorted(e.index for b in batches for e in b) == list(range(500))
    for batch in batches:
        longest = max(max(len(e.source), len(e.target)) for e in batch)
        assert len(batch) <= 16 and (longest * len(batch) <= 120 or len(batch) == 1)
    again = make_batches(examples, batch_size=16, batch_tokens=120, generator=torch.Generator().manual_seed(1))
    other = make_batches(examples, batch_size=16, batch_tokens=120, generator=torch.Generator().manual_seed(2))
    assert [[e.index for e in b] for b in again] == [[e.index for e in b] for b in batches]
    assert [[e.index for e in b] for b in other] != [[e.index for e in b] for b in batches]
    # length bucketing keeps padding low: far less than in shuffled batches of the same size
    padded = sum(max(len(e.source) for e in b) * len(b) for b in batches)
    assert padded < 1.3 * sum(len(e.source) for e in examples)


def test_ptb_detokenization():
    from wean.data.ptb import ptb_detokenize

    assert ptb_detokenize("He said `` I do n't know '' -LRB- twice -RRB- .") == 'He said "I don\'t know" (twice).'
    assert ptb_detokenize("it 's the band 's best , they 've said .") == "it's the band's best, they've said."


def test_ptb_tokenization_matches_the_corpora_and_round_trips():
    from wean.data.ptb import ptb_detokenize, ptb_tokenize

    text = 'He said "I don\'t know" (twice), and left. It was 1945. The U.S. army came.'
    tokens = ptb_tokenize(text)
    assert tokens == ("He said `` I do n't know '' -LRB- twice -RRB- , and left . It was 1945 . "
                      "The U.S. army came .")
    assert ptb_detokenize(tokens) == text


def test_a_literal_space_mark_in_the_input_survives_every_tokenizer():
    """sentencepiece and the char tokenizer write a space as U+2581: an input U+2581 came back as
    a space."""
    corpus = [f"{t} {i}" for i in range(60) for t in ENGLISH]
    sentencepiece = build_tokenizer(TokenizerConfig(type="bpe", vocab_size=400, byte_fallback=True), corpus)
    for tokenizer in (WordTokenizer(), CharTokenizer(), sentencepiece):
        for text in ("a ▁ b", "x▁y z", "▁"):
            assert tokenizer.decode(tokenizer.encode(text)) == text, type(tokenizer).__name__


def test_surrogates_alone_become_the_replacement_character():
    for tokenizer in (WordTokenizer(), CharTokenizer()):
        assert tokenizer.decode(tokenizer.encode("a \udca8 b")) == "a \ufffd b"


def test_held_out_pairs_are_seeded_disjoint_and_keep_their_line_numbers(tmp_path, capsys):
    from wean.data.corpus import hold_out

    (tmp_path / "t.src").write_text("".join(f"s{i}\n" for i in range(10)) + "\n")  # line 11 is empty
    (tmp_path / "t.dst").write_text("".join(f"d{i}\n" for i in range(10)) + "x\n")
    text = read_parallel(tmp_path / "t")
    rest, held = hold_out(text, 3, seed=1)
    assert hold_out(text, 3, seed=1)[1].sources == held.sources != hold_out(text, 3, seed=2)[1].sources
    assert sorted(rest.sources + held.sources) == sorted(text.sources) and len(held.sources) == 3
    assert all(int(s[1:]) + 1 == n for s, n in zip(held.sources, held.line_numbers) if s)
    if "" in rest.sources:  # the empty pair is reported at its own line, not its place in the part
        encode_pairs(rest, WordTokenizer(), Vocabulary(["s1"]), Vocabulary(["d1"]))
        assert "first at line 11" in capsys.readouterr().err
    with pytest.raises(WeanError, match="cannot hold out 11"):
        hold_out(text, 11, seed=1)


def test_batches_group_by_the_length_key_given():
    examples = [Example(i, [4] * (1 + i % 17), [4] * (1 + (i * 7) % 11) + [EOS_ID]) for i in range(500)]

    def padding(batches, side):
        return sum(max(len(getattr(e, side)) for e in b) * len(b) for b in batches)

    by_source = make_batches(examples, batch_size=16, generator=torch.Generator().manual_seed(1))
    by_target = make_batches(examples, batch_size=16, generator=torch.Generator().manual_seed(1),
                             length_key=lambda e: (len(e.target), len(e.source)))
    assert sorted(e.index for b in by_target for e in b) == list(range(500))
    assert padding(by_target, "target") < padding(by_source, "target")
    assert padding(by_target, "source") > padding(by_source, "source")
