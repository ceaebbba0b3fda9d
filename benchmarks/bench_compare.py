"""Comparing systems: ef.compare against ranx.compare on the same runs, in one process.

A seeded synthetic evaluation: a baseline and 10 systems, 10,000 queries x 20 scored docs, 5
relevant docs per query among 40 candidates; each system ranks the relevant ones a little
higher or lower than the baseline. Measures ndcg@10, precision@10, mrr, map. Prints ratio lines;
never a test.

ranx.compare has no baseline mode: it tests every ordered pair (110 pairs x 4 measures here), and
its randomization test re-permutes each query in a numba loop, linear in the permutations (see
the per-test probe below), so its 10,000-permutation time is measured at --ranx-permutations and
scaled. Its numba JIT warm-up is timed apart, on a tiny input.

    python benchmarks/bench_compare.py                  # the full benchmark
    python benchmarks/bench_compare.py --queries 1000   # a quick run
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

import numpy as np

from ef.compare import compare
from ef.evaluation import evaluate_run

MEASURES = ["ndcg@10", "precision@10", "mrr", "map"]
RANX = ["ndcg@10", "precision@10", "mrr", "map"]
SYSTEMS = 10


def make(n_queries: int, seed: int) -> tuple[dict[str, dict[str, dict[str, float]]], dict[str, dict[str, int]]]:
    rng = np.random.default_rng(seed)
    qrels = {f"q{q:05d}": {f"d{j}": 1 for j in range(5)} for q in range(n_queries)}
    runs: dict[str, dict[str, dict[str, float]]] = {}
    for s, boost in enumerate([0.0, *np.linspace(-0.1, 0.2, SYSTEMS).tolist()]):
        name = "base" if s == 0 else f"sys{s:02d}"
        run: dict[str, dict[str, float]] = {}
        for q in qrels:
            docs = rng.choice(40, 20, replace=False)
            scores = rng.random(20) + (docs < 5) * (0.3 + boost)
            run[q] = {f"d{d}": float(x) for d, x in zip(docs.tolist(), scores.tolist(), strict=True)}
        runs[name] = run
    return runs, qrels


def timed(job: Any, repeat: int = 1) -> tuple[float, Any]:
    """The best wall time of `repeat` calls (the machine is shared) and the last result."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        out = job()
        best = min(best, time.perf_counter() - start)
    return best, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--ranx-permutations", type=int, default=100)
    parser.add_argument("--no-ranx", action="store_true")
    parser.add_argument("--repeat", type=int, default=3, help="ef timings: best of this many")
    args = parser.parse_args()

    scipy_import, _ = timed(lambda: __import__("scipy.stats"))  # ef imports it on the first t / Wilcoxon test
    runs, qrels = make(args.queries, seed=0)
    n_cmp = SYSTEMS * len(MEASURES)
    print(f"{SYSTEMS} systems vs 1 baseline x {args.queries} queries x {len(MEASURES)} measures = {n_cmp} comparisons")

    ef_rand, report = timed(lambda: compare(runs, qrels, MEASURES, baseline="base", test="randomization",
                                            resamples=args.resamples), args.repeat)
    reports = {name: evaluate_run(run, qrels, MEASURES) for name, run in runs.items()}
    stats_only, _ = timed(lambda: compare(reports, None, MEASURES, baseline="base", test="randomization",
                                          resamples=args.resamples), args.repeat)
    ef_t, t_report = timed(lambda: compare(runs, qrels, MEASURES, baseline="base", test="t"), args.repeat)
    ef_all, all_report = timed(lambda: compare(runs, qrels, MEASURES, test="randomization",
                                               resamples=args.resamples), args.repeat)
    verdict = "ok" if ef_rand < 5.0 else "OVER"
    load = os.getloadavg()[0]
    print(f"ef timings: best of {args.repeat}; ranx: once; load average {load:.1f} on {os.cpu_count()} cores")
    print(f"ef compare, randomization, {args.resamples} resamples, from run dicts: {ef_rand:.2f} s "
          f"(statistics alone, from reports: {stats_only:.2f} s) (limit 5 s) {verdict}")
    print(f"ef compare, t-test, from run dicts: {ef_t:.2f} s (import scipy.stats, once: {scipy_import:.2f} s)")
    print(f"ef compare, randomization, all {all_report.family_size // len(MEASURES)} pairs "
          f"({all_report.family_size} comparisons): {ef_all:.2f} s")
    significant = sum(c.significant for c in report.comparisons)
    print(f"  {significant} of {report.family_size} comparisons significant after Holm")
    if args.no_ranx:
        return

    import ranx

    tiny_q = ranx.Qrels({"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}})
    tiny = [ranx.Run({q: {"d1": 1.0, "d2": 0.5, "d3": 0.2} for q in ("q1", "q2", "q3")}, name=n) for n in "ab"]
    warm, _ = timed(lambda: [ranx.compare(tiny_q, tiny, RANX, stat_test=t, n_permutations=10) for t in
                             ("fisher", "student")])
    convert, (ranx_qrels, ranx_runs) = timed(
        lambda: (ranx.Qrels(qrels), [ranx.Run(run, name=name) for name, run in runs.items()])
    )
    ranx_t, ranx_t_report = timed(lambda: ranx.compare(ranx_qrels, ranx_runs, RANX, stat_test="student"))
    ranx_f, _ = timed(lambda: ranx.compare(ranx_qrels, ranx_runs, RANX, stat_test="fisher",
                                           n_permutations=args.ranx_permutations))
    pairs = len(runs) * (len(runs) - 1)
    tests = pairs * len(RANX)
    scaled = ranx_f * args.resamples / args.ranx_permutations
    print(f"ranx JIT warm-up: {warm:.2f} s; dicts -> ranx Qrels/Run: {convert:.2f} s (both outside the ratios)")
    print(f"ranx compare, fisher, {args.ranx_permutations} permutations: {ranx_f:.2f} s for its {tests} tests "
          f"({pairs} ordered pairs); at {args.resamples}: ~{scaled:.0f} s")
    print(f"RATIO randomization, the same runs: ranx ~{scaled:.0f} s / ef {ef_rand:.2f} s = ~{scaled / ef_rand:.0f}x "
          f"(ef tests {n_cmp}, ranx {tests}); per test: ranx ~{scaled / tests:.3f} s / ef {ef_rand / n_cmp:.4f} s = "
          f"~{scaled / tests / (ef_rand / n_cmp):.0f}x")
    print(f"RATIO randomization, all pairs: ranx ~{scaled:.0f} s ({tests} tests) / ef {ef_all:.2f} s "
          f"({all_report.family_size} tests, each pair once) = ~{scaled / ef_all:.0f}x")
    print(f"RATIO t-test, the same runs: ranx {ranx_t:.2f} s ({tests} tests) / ef {ef_t:.2f} s ({n_cmp} tests, with "
          f"{args.resamples}-resample bootstrap intervals ranx does not compute) = {ranx_t / ef_t:.1f}x; counting "
          f"ranx's dict conversion: {(ranx_t + convert) / ef_t:.1f}x")
    worst = 0.0
    for c in t_report.comparisons:
        theirs = ranx_t_report.comparisons[frozenset(["base", c.system])][c.measure]["p_value"]
        worst = max(worst, abs(theirs - c.p_value))
    print(f"max |p(ef t) - p(ranx t)| over the {n_cmp} comparisons: {worst:.1e}")
    print(f"load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
