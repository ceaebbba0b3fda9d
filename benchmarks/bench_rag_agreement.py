"""How well ef's deterministic answer metrics agree with people: RAGChecker's meta-evaluation method.

Data: ``../shared/data/rag_meta/`` (the even half of RAGChecker's human-labelled set: 140 pairs of
long-form answers to one question, each pair labelled by two annotators with a preference in
[-2, 2] for correctness, completeness and overall; see its PROVENANCE.md). Nothing of it is
copied into the repository.

Method (RAGChecker's ``meta_eval.py``): per instance the metric's difference
``metric(model2) - metric(model1)``, linearly rescaled to [-2, 2], repeated for both annotators;
Pearson and Spearman correlation (x 100) with the 280 human labels. Beside each metric: the two
annotators against each other and RAGChecker's own LLM labels. The intervals are 95% percentile
bootstrap intervals over instances (both annotators' rows of a drawn instance go together).

Then the timing lines: ef's ROUGE-L and chrF against ``rouge_score`` and ``sacrebleu`` on the same
280 (response, reference) pairs, in one process, best of 3.

    .venv/bin/python benchmarks/bench_rag_agreement.py [--data DIR] [--no-minilm] [--resamples N]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
from scipy import stats

from ef.measures.answers import answer_contains, exact_match, token_f1
from ef.measures.claims import LexicalSupport, analyse_claims
from ef.measures.overlap import chrf, rouge_l

LABELS = ("correctness_label", "completeness_label", "overall_label")
DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "rag_meta"
THRESHOLDS = (0.3, 0.4, 0.5, 0.6, 0.7, 0.8)


def _load(data: Path) -> tuple[list[dict], dict[int, dict]]:
    rows = json.loads((data / "human_labeled_pairs.json").read_text(encoding="utf-8"))
    llm = {item["instance_id"]: item for item in json.loads((data / "ragchecker_llm_labels.json").read_text())}
    # Two annotators per instance, their rows next to each other (meta_eval.py relies on it).
    if len(rows) % 2 or any(rows[i]["instance_id"] != rows[i + 1]["instance_id"] for i in range(0, len(rows), 2)):
        raise ValueError("human_labeled_pairs.json: each instance must have two rows next to each other")
    return rows, llm


def _rescaled(delta: np.ndarray) -> np.ndarray:
    """meta_eval.py's normalization: NaN -> median, then linearly onto [-2, 2]."""
    delta = delta.astype(float).copy()
    delta[np.isnan(delta)] = np.nanmedian(delta)
    low, high = delta.min(), delta.max()
    return delta if high == low else ((delta - low) / (high - low) - 0.5) * 4


def _corr(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan, math.nan
    return float(stats.pearsonr(x, y)[0]) * 100, float(stats.spearmanr(x, y)[0]) * 100


def _bootstrap(
    x: np.ndarray, y: np.ndarray, n_instances: int, resamples: int, seed: int = 0
) -> tuple[tuple[float, float], tuple[float, float]]:
    """95% intervals of Pearson and Spearman, resampling instances (rows 2i and 2i + 1 together)."""
    rng = np.random.default_rng(seed)
    per_row = len(x) // n_instances
    pearsons, spearmans = [], []
    for _ in range(resamples):
        drawn = rng.integers(0, n_instances, n_instances)
        rows = (drawn[:, None] * per_row + np.arange(per_row)).ravel()
        p, s = _corr(x[rows], y[rows])
        if not math.isnan(p):
            pearsons.append(p)
            spearmans.append(s)
    if not pearsons:
        return (math.nan, math.nan), (math.nan, math.nan)
    return (
        (float(np.percentile(pearsons, 2.5)), float(np.percentile(pearsons, 97.5))),
        (float(np.percentile(spearmans, 2.5)), float(np.percentile(spearmans, 97.5))),
    )


def _metrics(minilm: bool, rows: list[dict]) -> dict[str, Callable[[str, str], float]]:
    out: dict[str, Callable[[str, str], float]] = {
        "token_f1": token_f1,
        "rouge_l": rouge_l,
        "chrf": chrf,
        "exact_match": exact_match,
        "answer_contains": answer_contains,
    }
    for name in ("claim_recall", "claim_precision", "claim_f1"):
        out[name] = _claim_metric(name, LexicalSupport())
    out["answer_words"] = lambda response, _reference: float(len(response.split()))
    if minilm:
        try:
            from ef.measures.semantic import SemanticScorer

            scorer = SemanticScorer()
        except (ImportError, ValueError) as error:
            print(f"# MiniLM left out: {error}")
        else:
            # One batched pass over every text, as evaluate_rag does.
            responses = [row[m]["response"] for row in rows for m in ("model1", "model2")]
            scorer.embed([row["gt_answer"] for row in rows] + responses)
            out["answer_similarity (MiniLM)"] = scorer.similarity
    return out


def _claim_metric(name: str, judge: LexicalSupport) -> Callable[[str, str], float]:
    def score(response: str, reference: str) -> float:
        value = analyse_claims(response, reference, judge=judge).metric(name)
        return math.nan if value is None else value

    return score


def _deltas(rows: list[dict], metric: Callable[[str, str], float]) -> np.ndarray:
    """One rescaled difference per instance, repeated for its two annotators (280 values)."""
    instances = rows[::2]
    delta = np.array([
        metric(row["model2"]["response"], row["gt_answer"]) - metric(row["model1"]["response"], row["gt_answer"])
        for row in instances
    ])
    return np.repeat(_rescaled(delta), 2)


def _format(value: float) -> str:
    return "   -" if math.isnan(value) else f"{value:5.1f}"


def _interval(bounds: tuple[float, float]) -> str:
    return "" if math.isnan(bounds[0]) else f"[{bounds[0]:.1f}, {bounds[1]:.1f}]"


def agreement_table(
    rows: list[dict], llm: dict[int, dict], metrics: dict[str, Callable[[str, str], float]], resamples: int
) -> list[str]:
    n = len(rows) // 2
    human = {label: np.array([row[label] for row in rows], dtype=float) for label in LABELS}
    lines = [
        "| metric | " + " | ".join(f"{label.removesuffix('_label')} Pearson | Spearman" for label in LABELS) + " |",
        "|---|" + "---:|---:|" * len(LABELS),
    ]

    def add(name: str, columns: Sequence[tuple[float, float, tuple[float, float], tuple[float, float]]]) -> None:
        cells = [f"{_format(p)} {_interval(pi)} | {_format(s)} {_interval(si)}" for p, s, pi, si in columns]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")

    columns = []
    for label in LABELS:
        first, second = human[label][0::2], human[label][1::2]
        p, s = _corr(first, second)
        pi, si = _bootstrap(first, second, n, resamples)  # one row per instance on each side
        columns.append((p, s, pi, si))
    add("annotator vs annotator", columns)

    columns = []
    for label in LABELS:
        pairs = [llm[row["instance_id"]] for row in rows[::2]]
        delta = np.array([item["model2"]["ragchecker"][label] - item["model1"]["ragchecker"][label] for item in pairs])
        x = np.repeat(_rescaled(delta), 2)
        p, s = _corr(x, human[label])
        pi, si = _bootstrap(x, human[label], n, resamples)
        columns.append((p, s, pi, si))
    add("RAGChecker (LLM claims)", columns)

    for name, metric in metrics.items():
        x = _deltas(rows, metric)
        columns = []
        for label in LABELS:
            p, s = _corr(x, human[label])
            pi, si = _bootstrap(x, human[label], n, resamples)
            columns.append((p, s, pi, si))
        add(f"`{name}`", columns)
    return lines


def side_picking(rows: list[dict], llm: dict[int, dict], metrics: dict[str, Callable[[str, str], float]]) -> list[str]:
    """Of the pairs where both annotators prefer the same response overall, how often the metric does too.

    A tie (the same score for both responses) counts as half a pick.
    """
    decided = [
        (first, 1.0 if first["overall_label"] > 0 else -1.0)
        for first, second in zip(rows[0::2], rows[1::2], strict=True)
        if first["overall_label"] * second["overall_label"] > 0
    ]

    def share(deltas: list[float]) -> float:
        hits = [1.0 if d * side > 0 else 0.5 if d == 0 else 0.0 for d, (_, side) in zip(deltas, decided, strict=True)]
        return 100 * math.fsum(hits) / len(hits)

    lines = [f"| metric | picks the annotators' side, of {len(decided)} pairs they agree on (%) |", "|---|---:|"]
    labels = [llm[row["instance_id"]] for row, _ in decided]
    ragchecker = [item["model2"]["ragchecker"]["overall_label"] - item["model1"]["ragchecker"]["overall_label"]
                  for item in labels]
    lines.append(f"| RAGChecker (LLM claims) | {share(ragchecker):.1f} |")
    for name, metric in metrics.items():
        deltas = [
            metric(row["model2"]["response"], row["gt_answer"]) - metric(row["model1"]["response"], row["gt_answer"])
            for row, _ in decided
        ]
        deltas = [0.0 if math.isnan(d) else d for d in deltas]
        lines.append(f"| `{name}` | {share(deltas):.1f} |")
    return lines


def threshold_grid(rows: list[dict]) -> list[str]:
    """Pearson x 100 of the claim metrics at each support threshold (how SUPPORT_THRESHOLD was chosen)."""
    human = {label: np.array([row[label] for row in rows], dtype=float) for label in LABELS}
    lines = ["| threshold | " + " | ".join(f"{m} ({label.removesuffix('_label')})"
                                         for m, label in (("claim_recall", "completeness_label"),
                                                          ("claim_precision", "correctness_label"),
                                                          ("claim_f1", "overall_label"))) + " |",
             "|---:|---:|---:|---:|"]
    for threshold in THRESHOLDS:
        judge = LexicalSupport(threshold)
        cells = []
        for metric, label in (("claim_recall", "completeness_label"), ("claim_precision", "correctness_label"),
                              ("claim_f1", "overall_label")):
            cells.append(_format(_corr(_deltas(rows, _claim_metric(metric, judge)), human[label])[0]))
        lines.append(f"| {threshold:.1f} | " + " | ".join(cells) + " |")
    return lines


def _best_of(fn: Callable[[], object], repeats: int = 3) -> float:
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def timing_lines(rows: list[dict]) -> list[str]:
    from rouge_score import rouge_scorer
    from sacrebleu.metrics import CHRF

    pairs = [(row[m]["response"], row["gt_answer"]) for row in rows[::2] for m in ("model1", "model2")]
    scorer = rouge_scorer.RougeScorer(["rougeL"])
    metric = CHRF()
    lines = []
    for name, ours, theirs, peer in (
        ("rouge_l", lambda: [rouge_l(a, b) for a, b in pairs],
         lambda: [scorer.score(b, a)["rougeL"].fmeasure for a, b in pairs], "rouge_score"),
        ("chrf", lambda: [chrf(a, b) for a, b in pairs],
         lambda: [metric.sentence_score(a, [b]).score for a, b in pairs], "sacrebleu"),
    ):
        t_ours, t_theirs = _best_of(ours), _best_of(theirs)
        lines.append(f"{name}: ef {t_ours * 1e3:.1f} ms, {peer} {t_theirs * 1e3:.1f} ms for {len(pairs)} pairs "
                     f"(ratio {peer}/ef {t_theirs / t_ours:.2f}x)")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--no-minilm", action="store_true", help="leave out the MiniLM cosine")
    parser.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples (default 1000)")
    parser.add_argument("--grid", action="store_true", help="also print the support-threshold grid")
    args = parser.parse_args()
    rows, llm = _load(args.data)
    print(f"# {len(rows) // 2} instances, {len(rows)} human rows; x 100, 95% bootstrap intervals "
          f"({args.resamples} resamples over instances, seed 0)")
    metrics = _metrics(not args.no_minilm, rows[::2])
    for line in agreement_table(rows, llm, metrics, args.resamples):
        print(line)
    print()
    for line in side_picking(rows, llm, metrics):
        print(line)
    if args.grid:
        print()
        for line in threshold_grid(rows):
            print(line)
    print()
    for line in timing_lines(rows):
        print(line)


if __name__ == "__main__":
    main()
