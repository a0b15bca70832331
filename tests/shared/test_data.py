"""Round trips through the PTB tokenization of the real corpora."""

def test_ptb_tokenization_reproduces_tokenized_corpus_lines(data_dir):
    from wean.data.ptb import ptb_detokenize, ptb_tokenize
    from wean.textio import read_lines

    lines = read_lines(data_dir / "kauchak_v2/train.src")[:300]
    same = sum(ptb_tokenize(ptb_detokenize(line)) == line for line in lines)
    assert same >= 285  # what the plain-text round trip cannot recover is rare (odd quotes, mojibake)


def test_ptb_detokenization_recovers_easse_turkcorpus_sources(data_dir):
    from wean.data.ptb import ptb_detokenize
    from wean.textio import read_lines

    tokenized = read_lines(data_dir / "turkcorpus/lower_tok/test.src")
    detokenized = read_lines(data_dir / "turkcorpus/case_detok/test.src")
    same = sum(ptb_detokenize(a) == b.lower() for a, b in zip(tokenized, detokenized))
    assert same >= 350  # of 359; the rest are names such as "d 'alcantara" and EASSE's own "ca n't"
