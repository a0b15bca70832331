"""Whether a language model of the simple side tells broken outputs from fluent ones, on the blind
ratings of tuning and selection lines (never the rating lines). Two readings: log P(output) per
token, and the same less the source's own (log P(source) per token: a sentence of rare names is
unlikely however well formed). An output is "broken" where its raters' mean fluency is 2.5 or
less, "meaning changed" where their mean adequacy is; each reading's ROC AUC (the chance that a
fluent output, or one that keeps the meaning, scores above the others) on the sheets given by
--develop, then on --confirm's outputs not among them.

    python results/asset-simplifier/fluency_check.py --lm results/asset-simplifier/exports/lm \\
        --develop rating-settings rating-candidate rating-order --confirm rating-weighted \\
        --out results/asset-simplifier/fluency-check.json
"""

from __future__ import annotations

from pathlib import Path

from meaning_check import LOW, auc, sheets_parser, sheets_report, write_report

from wean.data.corpus import LM_SOURCE
from wean.inference.forced_scores import forced_token_log_probs
from wean.inference.loading import LoadedModel

SCALES = ("fluency", "adequacy")


def per_token(lm: LoadedModel, texts: list[str]) -> list[float]:
    scores = forced_token_log_probs(lm, [LM_SOURCE] * len(texts), texts, plain_text=True)
    return [sum(tokens) / len(tokens) for tokens in scores]


def scored(outputs: dict[tuple[int, str], dict], lm: LoadedModel) -> dict:
    entries = list(outputs.values())
    given = per_token(lm, [output for _, output in outputs])
    own = per_token(lm, [entry["source"] for entry in entries])
    readings = {"mean": given, "mean_against_source": [g - o for g, o in zip(given, own)]}
    result: dict = {"outputs": len(entries)}
    for scale, label in (("fluency", "broken"), ("adequacy", "meaning_changed")):
        low = [sum(entry[scale]) / len(entry[scale]) <= LOW for entry in entries]
        result[label] = {"outputs": sum(low), "auc": {
            name: round(auc([v for v, bad in zip(values, low) if not bad], [v for v, bad in zip(values, low) if bad]), 3)
            for name, values in readings.items()}}
    return result


def main() -> None:
    parser = sheets_parser(__doc__.split("\n\n")[0])
    parser.add_argument("--lm", type=Path, required=True, help="a language model (data.direction: lm)")
    args = parser.parse_args()
    lm = LoadedModel.from_directory(args.lm)
    write_report(args.out, {"lm": str(args.lm), "low_if_mean_rating_at_most": LOW,
                            **sheets_report(args.develop, args.confirm, SCALES, lambda o: scored(o, lm))})


if __name__ == "__main__":
    main()
