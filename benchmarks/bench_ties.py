"""Ties: ef against pytrec_eval, ir-measures and ranx on four score distributions, in one process.

2,000 queries x 1,000 docs, 6 judged per query (grades 0-2), measures ndcg@10, recall@100, map and
recip_rank. The distributions are the ones real runs have: integer grades 0-10 (LLM judges,
rerankers), one decimal, every score tied, and distinct floats. Every score is exact in float32,
so pytrec_eval (which compares float32) ranks exactly as ef (doubles) does, and the means must
agree within 1e-12. ranx's JIT warm-up is timed apart. Prints one ratio line per distribution,
in memory, then one per distribution from a TREC file (each query's lines by score, descending,
as trec_eval writes them), whole process: ``ef trec-eval`` against pytrec_eval's parse plus
evaluate, with each one's peak memory.

    python benchmarks/bench_ties.py             # 2,000 x 1,000
    python benchmarks/bench_ties.py --queries 500
    python benchmarks/bench_ties.py --no-file      # in memory only
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

EF = ["ndcg@10", "recall@100", "map", "mrr"]
TREC = ["ndcg_cut_10", "recall_100", "map", "recip_rank"]


Run = dict[str, dict[str, float]]


def make(kind: str, n_queries: int, n_docs: int, seed: int) -> tuple[Run, dict[str, dict[str, int]]]:
    rng = np.random.default_rng(seed)
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for q in range(n_queries):
        names = [f"doc{d:07d}" for d in rng.choice(10 * n_docs, size=n_docs, replace=False).tolist()]
        if kind == "integers 0-10":
            scores = rng.integers(0, 11, n_docs).astype(float)
        elif kind == "one decimal":
            scores = np.round(rng.random(n_docs) * 10, 1).astype(np.float32).astype(float)
        elif kind == "all tied":
            scores = np.ones(n_docs)
        else:
            scores = rng.random(n_docs).astype(np.float32).astype(float)
        run[f"q{q:05d}"] = dict(zip(names, scores.tolist(), strict=True))
        picked = rng.choice(n_docs, size=6, replace=False).tolist()
        qrels[f"q{q:05d}"] = {names[i]: int(rng.integers(0, 3)) for i in picked}
    return run, qrels


def timed(job: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = job()
        best = min(best, time.perf_counter() - start)
    return best, result


def compare(kind: str, run: Run, qrels: dict[str, dict[str, int]], repeat: int) -> None:
    """One distribution: every tool on the same dicts, one ratio line."""
    import pytrec_eval

    from ef.evaluation import evaluate_run

    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100", "map", "recip_rank"})
    # In turn, so a slow moment of a shared machine costs both tools alike; the best of each.
    t_ef = t_py = float("inf")
    for _ in range(repeat):
        t, report = timed(lambda: evaluate_run(run, qrels, EF, missing="skip"), 1)
        t_ef = min(t_ef, t)
        t, per_query = timed(lambda: evaluator.evaluate(run), 1)
        t_py = min(t_py, t)
    means = {m: float(np.mean([v[m] for v in per_query.values()])) for m in TREC}
    diff = max(abs(report.metrics[e] - means[t]) for e, t in zip(EF, TREC, strict=True))
    line = f"{kind:>15}: ef {t_ef:.3f} s   pytrec_eval {t_py:.3f} s -> ef {t_py / t_ef:.1f}x faster"
    try:
        import ir_measures
        from ir_measures import AP, RR, R, nDCG

        t_irm, _ = timed(lambda: ir_measures.calc_aggregate([nDCG @ 10, R @ 100, AP, RR], qrels, run), 1)
        line += f"   ir-measures {t_irm:.3f} s ({t_irm / t_ef:.1f}x)"
    except ImportError:
        line += "   ir-measures not installed"
    try:
        from ranx import Qrels
        from ranx import Run as RanxRun
        from ranx import evaluate as ranx_evaluate

        head = list(run)[:2]
        few_qrels, few_run = Qrels({q: qrels[q] for q in head}), RanxRun({q: run[q] for q in head})
        t_jit, _ = timed(lambda: ranx_evaluate(few_qrels, few_run, EF), 1)
        t_ranx, _ = timed(lambda: ranx_evaluate(Qrels(qrels), RanxRun(run), EF), 1)
        line += f"   ranx {t_ranx:.3f} s ({t_ranx / t_ef:.1f}x; JIT warm-up {t_jit:.1f} s apart)"
    except ImportError:
        line += "   ranx not installed"
    print(f"{line}   max |mean diff| {diff:.1e}")


def whole_process(kind: str, run: Run, qrels: dict[str, dict[str, int]], repeat: int) -> None:
    """One distribution from a file: both tools as fresh processes, best of `repeat`, one ratio line."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from bench_run_eval import paired, write_files

    with tempfile.TemporaryDirectory() as folder:
        # repr: 17 digits, as Python tools write scores
        run_path, qrels_path = write_files(folder, run, qrels, spell=repr, run_id="bench")
        os.sync()
        (t_ef, ef_info), (t_py, py_info) = paired(qrels_path, run_path, repeat)
    print(
        f"{kind:>15} from a file, whole process: ef trec-eval {t_ef:.2f} s, peak {ef_info['peak_mb']:.0f} MB   "
        f"pytrec_eval parse+evaluate {t_py:.2f} s, peak {py_info['peak_mb']:.0f} MB   -> ef {t_py / t_ef:.1f}x faster, "
        f"{ef_info['peak_mb'] / py_info['peak_mb']:.2f}x the memory"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=2_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-file", action="store_true", help="skip the whole-process runs from files")
    args = parser.parse_args()
    kinds = ("integers 0-10", "one decimal", "all tied", "distinct floats")
    for kind in kinds:
        compare(kind, *make(kind, args.queries, args.docs, 0), args.repeat)
    if not args.no_file:
        for kind in kinds:
            whole_process(kind, *make(kind, args.queries, args.docs, 0), args.repeat)


if __name__ == "__main__":
    main()
