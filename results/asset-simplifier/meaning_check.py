"""Which reading of the channel model tells an output that changes the meaning from one that keeps
it, on the blind ratings of tuning and selection lines (never the rating lines, which decide what
ships). The guard now reads the mean log P(source | output) per source token: one wrong word in a
long sentence moves that mean little. The other readings: the least likely token, the mean of the
three least likely, and the mean against the source's own (log P(source | source) per token).
An output is "meaning changed" where its raters' mean adequacy is 2.5 or less (the sheets' 1-2:
part of the meaning lost or changed, or worse). Each reading's ROC AUC (the chance that a kept
meaning scores above a changed one) on the sheets given by --develop, then on --confirm's outputs
not among them.

    python results/asset-simplifier/meaning_check.py --develop rating-settings rating-candidate rating-order \\
        --confirm rating-weighted --out results/asset-simplifier/meaning-check.json
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path
from typing import Callable

from score_lines import HERE, role_lines

from wean.inference.forced_scores import forced_token_log_probs
from wean.inference.loading import LoadedModel

CHANNEL = Path("src/wean/pretrained/simplifier/reranker/channel")
LOW = 2.5  # mean rating at or below which raters found the meaning changed (adequacy), or the output broken (fluency)


def rated_outputs(sheet: Path, allowed: set[int], scale: str = "adequacy") -> dict[tuple[int, str], dict]:
    """(tune line, output) -> source and every rating on ``scale``, for the model outputs of
    ``sheet`` (not the source, nor a person's rewrite); a sheet with a line outside ``allowed`` is
    refused."""
    key = json.loads((sheet / "key.json").read_text())
    ratings: dict[str, list[int]] = {}
    texts: dict[str, tuple[str, str]] = {}
    for rater in sorted(sheet.glob("rater-*.csv")):
        with rater.open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                ratings.setdefault(row["candidate"], []).append(int(row[scale]))
                texts[row["candidate"]] = (row["source"], row["output"])
    outputs: dict[tuple[int, str], dict] = {}
    for item in key["items"]:
        if item["line"] - 1 not in allowed:
            raise SystemExit(f"meaning_check.py: {sheet.name}: line {item['line']} is not a tuning or selection line")
        for candidate, systems in item["candidates"].items():
            source, output = texts[candidate]
            if {"source", "human"} & set(systems) or output.strip() == source.strip():
                continue
            entry = outputs.setdefault((item["line"], output), {"source": source, scale: []})
            entry[scale] += ratings[candidate]
    return outputs


def sheet_outputs(sheets: list[str], allowed: set[int], scales: tuple[str, ...]) -> dict[tuple[int, str], dict]:
    """(tune line, output) -> source and every rating on each of ``scales``, over ``sheets``."""
    outputs: dict[tuple[int, str], dict] = {}
    for sheet in sheets:
        for scale in scales:
            for pair, entry in rated_outputs(HERE / sheet, allowed, scale).items():
                outputs.setdefault(pair, {"source": entry["source"], **{s: [] for s in scales}})[scale] += entry[scale]
    return outputs


def sheets_report(develop: list[str], confirm: list[str], scales: tuple[str, ...],
                  score: Callable[[dict[tuple[int, str], dict]], dict]) -> dict:
    """``score`` of the rated outputs of the ``develop`` sheets, then of the ``confirm`` sheets'
    outputs not among them (tuning and selection lines only)."""
    allowed = set(role_lines("tuning")) | set(role_lines("selection"))
    developed = sheet_outputs(develop, allowed, scales)
    confirmed = {pair: entry for pair, entry in sheet_outputs(confirm, allowed, scales).items() if pair not in developed}
    report = {"develop": {"sheets": develop, **score(developed)}}
    if confirmed:
        report["confirm"] = {"sheets": confirm, **score(confirmed)}
    return report


def write_report(path: Path, report: dict) -> None:
    path.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps(report, indent=1))


def auc(kept: list[float], changed: list[float]) -> float:
    """P(a kept meaning's score > a changed one's), ties counted half (Mann-Whitney)."""
    wins = sum((k > c) + 0.5 * (k == c) for k in kept for c in changed)
    return wins / (len(kept) * len(changed))


def readings(token_log_probs: list[float], own: float) -> dict[str, float]:
    lowest = sorted(token_log_probs)
    mean = sum(token_log_probs) / len(token_log_probs)
    return {"mean": mean, "least": lowest[0], "three_least": sum(lowest[:3]) / len(lowest[:3]),
            "mean_against_source": mean - own}


def scored(outputs: dict[tuple[int, str], dict], channel: LoadedModel) -> dict[str, dict]:
    pairs = list(outputs.items())
    sources = [entry["source"] for _, entry in pairs]
    texts = [output for (_, output), _ in pairs]
    given_output = forced_token_log_probs(channel, texts, sources, plain_text=True)
    given_source = forced_token_log_probs(channel, sources, sources, plain_text=True)
    rows = []
    for (_, entry), tokens, own in zip(pairs, given_output, given_source):
        changed = sum(entry["adequacy"]) / len(entry["adequacy"]) <= LOW
        rows.append((changed, readings(tokens, sum(own) / len(own))))
    result = {"outputs": len(rows), "meaning_changed": sum(changed for changed, _ in rows), "auc": {}}
    for name in rows[0][1]:
        kept = [values[name] for changed, values in rows if not changed]
        lost = [values[name] for changed, values in rows if changed]
        result["auc"][name] = round(auc(kept, lost), 3)
    return result


def sheets_parser(description: str) -> argparse.ArgumentParser:
    """The options of a check scored on rated sheets: --develop, --confirm, --out."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--develop", nargs="+", required=True, help="sheet folders of this experiment")
    parser.add_argument("--confirm", nargs="+", default=[], help="sheet folders read after the choice")
    parser.add_argument("--out", type=Path, required=True)
    return parser


def main() -> None:
    parser = sheets_parser(__doc__.split("\n\n")[0])
    parser.add_argument("--channel", type=Path, default=CHANNEL)
    args = parser.parse_args()
    channel = LoadedModel.from_directory(args.channel)
    write_report(args.out, {"channel": str(args.channel), "changed_if_mean_adequacy_at_most": LOW,
                            **sheets_report(args.develop, args.confirm, ("adequacy",), lambda o: scored(o, channel))})


if __name__ == "__main__":
    main()
