"""Ratings per system: means on each scale, the share of outputs that change the meaning, are
broken or are good, with bootstrap intervals over items, paired comparisons between systems,
and the raters' agreement.

A candidate's score on a scale is the mean of its raters' scores. Per system and item the
candidate it wrote counts (several systems that wrote the same text share one). Over items:

meaning changed
    adequacy at most 2;
broken
    fluency at most 2;
good
    adequacy, fluency and simplicity all at least 4.

Intervals are the central 95 % of 1,000 resamples of the items (seeded); a paired comparison of
two systems resamples the items both were rated on, with the p-value of the paired bootstrap
test (as :mod:`wean.evaluation.significance`). Agreement is Krippendorff's alpha, ordinal, from
the ``krippendorff`` package: candidates are the units, raters the coders.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import combinations

import krippendorff
import numpy as np

from wean.errors import WeanError
from wean.evaluation.significance import bootstrap_p_value
from wean.rating.sheet import SCALES, Rating

MEASURES = (*SCALES, "meaning_changed", "broken", "good")


@dataclass(frozen=True)
class Estimate:
    value: float
    low: float
    high: float

    def as_dict(self) -> dict:
        return {"value": self.value, "low": self.low, "high": self.high}


def candidate_means(ratings: list[Rating]) -> dict[str, np.ndarray]:
    """Each rated candidate's mean score on each scale, in the order of SCALES."""
    per_candidate: dict[str, list[list[int]]] = {}
    for rating in ratings:
        per_candidate.setdefault(rating.candidate, []).append([rating.scores[s] for s in SCALES])
    return {candidate: np.mean(scores, axis=0) for candidate, scores in per_candidate.items()}


def measures(means: np.ndarray) -> np.ndarray:
    """Rows of (adequacy, fluency, simplicity) means -> rows of MEASURES (shares as 0/100)."""
    adequacy, fluency, simplicity = means[:, 0], means[:, 1], means[:, 2]
    good = (adequacy >= 4) & (fluency >= 4) & (simplicity >= 4)
    return np.column_stack([adequacy, fluency, simplicity, 100.0 * (adequacy <= 2), 100.0 * (fluency <= 2), 100.0 * good])


def system_rows(key: dict, means: dict[str, np.ndarray]) -> dict[str, dict[int, np.ndarray]]:
    """Per system, per item: the MEASURES of the candidate it wrote, if that candidate was rated."""
    rows: dict[str, dict[int, np.ndarray]] = {name: {} for name in key["systems"]}
    for item in key["items"]:
        for candidate, writers in item["candidates"].items():
            if candidate in means:
                for name in writers:
                    rows[name][item["item"]] = measures(means[candidate][None, :])[0]
    return rows


def _interval(values: np.ndarray, rng: np.random.Generator, samples: int) -> tuple[float, float]:
    picks = rng.integers(0, len(values), size=(samples, len(values)))
    low, high = np.percentile(values[picks].mean(axis=1), [2.5, 97.5], axis=0)
    return low, high


def agreement(ratings: list[Rating]) -> dict[str, float | None]:
    """Krippendorff's alpha (ordinal) per scale over the candidates that two raters or more rated;
    None where there are none (raters who split a sheet), or where every rating is one value."""
    raters = sorted({r.rater for r in ratings})
    rated_by = Counter(r.candidate for r in ratings)
    candidates = sorted(c for c, count in rated_by.items() if count >= 2)
    ratings = [r for r in ratings if rated_by[r.candidate] >= 2]
    if not candidates:
        return {scale: None for scale in SCALES}
    column = {c: j for j, c in enumerate(candidates)}
    row = {r: i for i, r in enumerate(raters)}
    result = {}
    for k, scale in enumerate(SCALES):
        data = np.full((len(raters), len(candidates)), np.nan)
        for rating in ratings:
            data[row[rating.rater], column[rating.candidate]] = rating.scores[scale]
        values = data[~np.isnan(data)]
        if len(np.unique(values)) < 2:  # one value throughout: alpha is undefined
            result[scale] = None
            continue
        result[scale] = float(krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal"))
    return result


def score_ratings(key: dict, ratings: list[Rating], samples: int = 1000, seed: int = 1) -> dict:
    """Per system its MEASURES with intervals, every pair of systems compared, and the agreement."""
    if not ratings:
        raise WeanError("no ratings to score")
    rows = system_rows(key, candidate_means(ratings))
    systems = {}
    for name, per_item in rows.items():
        if not per_item:
            continue
        values = np.array(list(per_item.values()))
        rng = np.random.default_rng(seed)
        low, high = _interval(values, rng, samples)
        systems[name] = {"items": len(per_item), **{
            measure: Estimate(float(values[:, k].mean()), float(low[k]), float(high[k])).as_dict()
            for k, measure in enumerate(MEASURES)}}
    comparisons = []
    for a, b in combinations(systems, 2):
        shared = sorted(set(rows[a]) & set(rows[b]))
        if not shared:
            continue
        difference = np.array([rows[a][i] - rows[b][i] for i in shared])
        rng = np.random.default_rng(seed)
        picks = rng.integers(0, len(shared), size=(samples, len(shared)))
        resampled = difference[picks].mean(axis=1)
        observed = difference.mean(axis=0)
        p_values = bootstrap_p_value(resampled, observed)
        low, high = np.percentile(resampled, [2.5, 97.5], axis=0)
        comparisons.append({"a": a, "b": b, "items": len(shared), **{
            measure: {"difference": float(observed[k]), "low": float(low[k]), "high": float(high[k]),
                      "p": float(p_values[k])} for k, measure in enumerate(MEASURES)}})
    raters = sorted({r.rater for r in ratings})
    return {"raters": raters, "ratings": len(ratings), "samples": samples, "systems": systems,
            "comparisons": comparisons, "agreement": {"krippendorff_alpha_ordinal": agreement(ratings)}}


def table(scores: dict) -> str:
    """The systems as the WEAN paper's Table 3, with the shares, best adequacy first."""
    lines = [f"{scores['ratings']} ratings by {', '.join(scores['raters'])}; 95 % intervals over items"]
    width = max([len(name) for name in scores["systems"]] + [6])
    lines.append(f"{'system':<{width}}  {'items':>5}  {'adequacy':>17}  {'fluency':>17}  {'simplicity':>17}  "
                 f"{'meaning chg':>11}  {'broken':>7}  {'good':>7}")
    ordered = sorted(scores["systems"].items(), key=lambda entry: -entry[1]["adequacy"]["value"])
    for name, s in ordered:
        scales = "  ".join(f"{s[m]['value']:4.2f} [{s[m]['low']:4.2f}, {s[m]['high']:4.2f}]" for m in SCALES)
        shares = f"{s['meaning_changed']['value']:10.0f}%  {s['broken']['value']:6.0f}%  {s['good']['value']:6.0f}%"
        lines.append(f"{name:<{width}}  {s['items']:5d}  {scales}  {shares}")
    if scores["comparisons"]:
        lines.append("paired (A - B over the items both were rated on; p of the paired bootstrap):")
        for c in scores["comparisons"]:
            lines.append(f"  {c['a']} - {c['b']} ({c['items']} items): " + ", ".join(
                f"{m} {c[m]['difference']:+.2f} (p {c[m]['p']:.3f})" for m in (*SCALES, "good")))
    alpha = scores["agreement"]["krippendorff_alpha_ordinal"]
    lines.append("agreement (Krippendorff's alpha, ordinal): " + ", ".join(
        f"{scale} {'-' if value is None else f'{value:.2f}'}" for scale, value in alpha.items()))
    return "\n".join(lines)
