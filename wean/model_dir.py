"""What a model directory holds besides weights: the resolved configuration, the tokenizer and
the vocabularies. Everything :func:`wean.load` needs to turn text into outputs."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from wean.checkpoint import atomic_write_text
from wean.config import Config, config_from_dict
from wean.data.control import Control
from wean.data.tokenizers import Tokenizer, load_tokenizer
from wean.data.vocabulary import Vocabulary
from wean.errors import WeanError


@dataclass
class Assets:
    config: Config
    tokenizer: Tokenizer
    source_vocabulary: Vocabulary
    target_vocabulary: Vocabulary

    @property
    def control(self) -> Control:
        """The model's control attributes and their default values (empty without control tokens)."""
        return Control.from_config(self.config)


def save_assets(directory: Path, assets: Assets) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    atomic_write_text(directory / "config.yaml", yaml.safe_dump(assets.config.to_dict(), sort_keys=False))
    assets.tokenizer.save(directory)
    if assets.config.data.tokenizer.shared_vocab:
        assets.source_vocabulary.save(directory / "vocab.json")
    else:
        assets.source_vocabulary.save(directory / "vocab.src.json")
        assets.target_vocabulary.save(directory / "vocab.tgt.json")


def load_assets(directory: Path) -> Assets:
    if not directory.is_dir():
        raise WeanError(f"{directory}: model directory not found")
    config_path = directory / "config.yaml"
    try:
        config = config_from_dict(yaml.safe_load(config_path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        raise WeanError(f"{config_path}: not found; is {directory} a wean model directory?") from None
    except yaml.YAMLError as error:
        raise WeanError(f"{config_path}: corrupt ({error})") from None
    except WeanError as error:
        raise WeanError(f"{config_path}: {error}") from None
    tokenizer = load_tokenizer(directory)
    if config.data.tokenizer.shared_vocab:
        source = target = Vocabulary.load(directory / "vocab.json")
    else:
        source, target = Vocabulary.load(directory / "vocab.src.json"), Vocabulary.load(directory / "vocab.tgt.json")
    return Assets(config, tokenizer, source, target)
