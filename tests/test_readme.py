"""The README's tour stays true: every command in its code blocks parses with wean's own command
line (no unknown command or option), the ones that need no data run, and its Python runs."""

import shlex
from pathlib import Path

import pytest

from wean.cli import build_parser

README = Path(__file__).resolve().parents[1] / "README.md"


def code_blocks(language: str) -> list[str]:
    text = README.read_text(encoding="utf-8")
    blocks, marker = [], f"```{language}\n"
    start = text.find(marker)
    while start != -1:
        end = text.index("```", start + len(marker))
        blocks.append(text[start + len(marker) : end])
        start = text.find(marker, end + 3)
    return blocks


def wean_commands() -> list[list[str]]:
    commands = []
    for block in code_blocks("bash"):
        for line in block.replace("\\\n", " ").splitlines():  # a command continued over lines is one
            words = shlex.split(line, comments=True)
            if words and words[0].endswith("/wean"):
                commands.append(words[1:])
    return commands


def test_the_readme_is_short_and_links_what_exists():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 200
    import re

    for target in re.findall(r"\]\(([^)#]+)\)", text):
        if not target.startswith("http"):
            assert (README.parent / target).exists(), target


@pytest.mark.parametrize("command", wean_commands(), ids=lambda words: " ".join(words)[:60])
def test_every_command_of_the_tour_parses(command):
    parser = build_parser()
    args, unknown = parser.parse_known_args(command)
    assert not unknown, unknown


@pytest.mark.parametrize("command", [c for c in wean_commands() if "--set" in c], ids=lambda words: " ".join(words)[:60])
def test_every_setting_the_tour_sets_is_a_config_key(command):
    from wean.config import apply_overrides, config_from_dict
    from wean.config.schema import Config

    settings = [command[i + 1] for i, word in enumerate(command[:-1]) if word == "--set"]
    config_from_dict(apply_overrides(Config().to_dict(), settings))  # an unknown key is refused


def test_the_tour_runs_where_it_needs_no_data(capsys):
    """In this process (the console command itself has its own test): the shipped model loads once."""
    from wean.cli import main

    simplify = next(command for command in wean_commands() if command[0] == "simplify" and "--input" not in command)
    assert main(simplify) == 0
    assert capsys.readouterr().out.strip()
    for block in code_blocks("python"):
        exec(compile(block, str(README), "exec"), {})
        assert capsys.readouterr().out.strip()
