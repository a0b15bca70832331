"""Every row of the tables' run.sh scripts is a valid config that builds the model it says. Experiments'
scripts, not wean: run with `python -m pytest results/lib/tests` from the repository root."""

import re
from pathlib import Path

import pytest
import torch

from wean.config import load_config
from wean.models.model import build_model

ROOT = Path(__file__).resolve().parents[3]
ROW_KEYS = re.compile(r"--set ([^\s\"]+)")


def rows_of(script: Path) -> dict[str, list[str]]:
    """The --set keys of each row a results script trains: its ROWS entries, with the shell
    variables they name (CONV) expanded and the keys every row shares (SCALE) added."""
    text = script.read_text().replace("$BUDGET", "2000")
    variables = {name: ROW_KEYS.findall(value) for name, value in re.findall(r'^([A-Z]+)="([^"]*)"', text, re.M)}
    shared = variables.get("SCALE", [])
    rows = {}
    for name, value in re.findall(r'\[([a-z-]+)\]="([^"]*)"', text):
        named = re.findall(r"\$([A-Z]+)", value)
        rows[name] = shared + [key for variable in named for key in variables[variable]] + ROW_KEYS.findall(value)
    return rows


@pytest.mark.parametrize("task", ["gigaword", "simplification"])
def test_every_row_of_the_word_attention_and_conv_tables_is_a_valid_config(task):
    rows = rows_of(ROOT / "results/word-attention/run.sh")
    assert set(rows) == {"rnnsearch", "word-attention", "contextual-gates", "conv-encoder", "conv-no-positions",
                         "lstm-conditional"}
    kinds = set()
    for name, keys in rows.items():
        config = load_config(ROOT / f"configs/rnnsearch-{task}.yaml", keys)
        model = build_model(config.model, 40, 40)
        logits = model(torch.randint(4, 40, (2, 7)), torch.tensor([7, 5]), torch.randint(4, 40, (2, 4))).log_probs
        assert logits.shape == (2, 4, 40)
        encoder, decoder = config.model.encoder, config.model.decoder
        kinds.add((encoder.type, getattr(encoder, "position_embeddings", None), decoder.type,
                   getattr(decoder, "word_attention", None)))
    assert len(kinds) == 6  # the keys really change the model


def test_every_row_of_the_spm_table_is_a_valid_config():
    rows = rows_of(ROOT / "results/spm/run.sh")
    kinds = set()
    for name, keys in rows.items():
        config = load_config(ROOT / "configs/encdec-gigaword.yaml", keys)
        assert config.model.encoder.layers == 1 and config.training.max_updates == 2000  # the shared scale-down
        build_model(config.model, 40, 40)
        kinds.add((config.model.encoder.selective_gate, config.model.spm.enabled, config.model.spm.c > 1e6))
    assert set(rows) == {"encdec", "sgate", "spm", "sgate-spm", "pad-only"} and len(kinds) == 5
