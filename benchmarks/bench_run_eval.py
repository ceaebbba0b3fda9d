"""Bulk run evaluation: ef against pytrec_eval, ranx and ir-measures, in memory and from a TREC file.

A seeded synthetic evaluation: N queries x D scored docs (default 10,000 x 1,000), about 5
relevant docs per query with grades 1-3 plus 5 judged non-relevant, scores with 4 decimals in
[0, 100) (distinct decimals stay distinct in float32, so pytrec_eval ranks exactly as ef does).
Measures: ndcg@10, recall@100, map, recip_rank. Prints ratio lines; never a test.

    python benchmarks/bench_run_eval.py            # the full benchmark (needs ~4 GB of RAM)
    python benchmarks/bench_run_eval.py --small    # a quick smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

EF = ["ndcg@10", "recall@100", "map", "mrr"]
TREC = ["ndcg_cut_10", "recall_100", "map", "recip_rank"]
PYTREC = {"ndcg_cut.10", "recall.100", "map", "recip_rank"}


def make(n_queries: int, n_docs: int, seed: int) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]]]:
    rng = np.random.default_rng(seed)
    pool = max(10 * n_docs, 1000)
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for q in range(n_queries):
        query_id = f"q{q:05d}"
        docs = rng.choice(pool, size=n_docs, replace=False)
        scores = np.round(rng.random(n_docs) * 100, 4)
        names = [f"doc{d:07d}" for d in docs.tolist()]
        run[query_id] = dict(zip(names, scores.tolist(), strict=True))
        n_rel = int(rng.integers(3, 8))
        picked = rng.choice(n_docs, size=n_rel + 5, replace=False).tolist()
        judged = {names[i]: int(g) for i, g in zip(picked[:n_rel], rng.integers(1, 4, n_rel).tolist(), strict=True)}
        judged.update({names[i]: 0 for i in picked[n_rel:]})
        judged[f"doc{pool + q:07d}"] = 1  # a relevant doc the run missed
        qrels[query_id] = judged
    return run, qrels


def write_files(
    folder: str,
    run: dict[str, dict[str, float]],
    qrels: dict[str, dict[str, int]],
    spell: Callable[[float], str] = "{:.4f}".format,
    run_id: str = "ef-bench",
) -> tuple[str, str]:
    """The run (each query's lines by score, descending, scores spelled by `spell`) and the qrels as TREC files."""
    run_path, qrels_path = os.path.join(folder, "run.txt"), os.path.join(folder, "qrels.txt")
    with open(run_path, "w") as out:
        for query_id, docs in run.items():
            ranked = sorted(docs.items(), key=lambda item: -item[1])
            out.write("".join(f"{query_id} Q0 {d} {r} {spell(s)} {run_id}\n" for r, (d, s) in enumerate(ranked, 1)))
    with open(qrels_path, "w") as out:
        for query_id, judged in qrels.items():
            out.write("".join(f"{query_id} 0 {d} {g}\n" for d, g in judged.items()))
    return run_path, qrels_path


def timed(job: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    result = job()
    return time.perf_counter() - start, result


def child(code: str, *args: str) -> tuple[float, dict[str, Any]]:
    """Run ``code`` in a fresh Python; it prints one JSON line last. Returns (wall seconds, that JSON)."""
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    return wall, json.loads(done.stdout.strip().splitlines()[-1])


# VmHWM is this process's own peak RSS (ru_maxrss would carry over the parent's peak across exec).
# ef reads a file over 16 MiB in two processes: the forked child's peak RSS is added, counting
# the pages it shares with the parent twice (an upper bound).
PEAK = (
    "import json, resource\n"
    "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1]\n"
    "child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "print(json.dumps({'peak_mb': (int(hwm) + child) / 1024}))"
)

EF_CLI = (
    "import sys\n"
    "from ef.cli import main\n"
    "measures = ['-m', 'ndcg_cut.10', '-m', 'recall.100', '-m', 'map', '-m', 'recip_rank']\n"
    "sys.argv[1:] = ['trec-eval', *measures, *sys.argv[1:]]\n"
    "rc = main()  # argv from sys.argv, as the ef command calls it (see ef.cli.main)\n"
    "assert rc == 0\n" + PEAK
)
PYTREC_FILE = (
    "import sys, pytrec_eval\n"
    "with open(sys.argv[1]) as f: qrels = pytrec_eval.parse_qrel(f)\n"
    "with open(sys.argv[2]) as f: run = pytrec_eval.parse_run(f)\n"
    "res = pytrec_eval.RelevanceEvaluator(qrels, {'ndcg_cut.10', 'recall.100', 'map', 'recip_rank'}).evaluate(run)\n"
    "for m in ('ndcg_cut_10', 'recall_100', 'map', 'recip_rank'):\n"
    "    print(m, sum(v[m] for v in res.values()) / len(res))\n" + PEAK
)
IMPORT = (
    "import time; start = time.perf_counter()\n"
    "from ef.evaluation import evaluate_run\n"
    "r = evaluate_run({'a': {'d1': 2.0, 'd2': 1.0}, 'b': {'d3': 1.0}, 'c': {'d1': 0.5}},\n"
    "                 {'a': {'d2': 1}, 'b': {'d3': 2}, 'c': {'d9': 1}}, ['ndcg@10', 'recall@100', 'map', 'mrr'])\n"
    "import json; print(json.dumps({'seconds': time.perf_counter() - start}))"
)


Timed = tuple[float, dict[str, Any]]


def paired(qrels_path: str, run_path: str, repeat: int) -> tuple[Timed, Timed]:
    """``ef trec-eval`` and pytrec_eval's parse+evaluate on the same files, in turn `repeat` times (so
    neither tool pays alone for a cold cache or a noisy moment); the best (wall seconds, JSON) of each."""
    ef_runs, py_runs = [], []
    for _ in range(repeat):
        ef_runs.append(child(EF_CLI, qrels_path, run_path))
        py_runs.append(child(PYTREC_FILE, qrels_path, run_path))
    return min(ef_runs, key=lambda r: r[0]), min(py_runs, key=lambda r: r[0])


def all_trec_ratio(run: dict[str, dict[str, float]], qrels: dict[str, dict[str, int]], repeat: int) -> None:
    """Print how much longer every trec_eval measure (``-m all_trec``) takes than the four defaults."""
    from ef.evaluation import evaluate_run
    from ef.measures import expand_measure_spec

    # relstring is a string per query, which evaluate_run refuses; every other all_trec measure counts.
    everything = [str(m) for m in expand_measure_spec("all_trec") if m.family != "relstring"]
    t_four = min(timed(lambda: evaluate_run(run, qrels, EF, missing="skip"))[0] for _ in range(repeat))
    t_all = min(timed(lambda: evaluate_run(run, qrels, everything, missing="skip"))[0] for _ in range(repeat))
    print(
        f"ef all_trec ({len(everything)} measures) in memory: {t_all:.3f} s   the four defaults: {t_four:.3f} s   "
        f"-> all_trec takes {t_all / t_four:.2f}x the defaults' time (best of {repeat})"
    )


def _variant(source: str, target: str, kind: str) -> str:
    """`source` rewritten as `kind`: CRLF line ends, tab separators, or one irregular line in the middle."""
    with open(source, "rb") as f:
        data = f.read()
    if kind == "crlf":
        data = data.replace(b"\n", b"\r\n")
    elif kind == "tabs":
        data = data.replace(b" ", b"\t")
    elif kind == "odd-line":  # doubled separators and a comment on one line of millions
        middle = data.index(b"\n", len(data) // 2) + 1
        end = data.index(b"\n", middle)
        data = data[:middle] + b"# a comment\n" + data[middle:end].replace(b" ", b"   ") + data[end:]
    with open(target, "wb") as f:
        f.write(data)
    return target


def file_variants(folder: str, run_path: str, qrels_path: str, repeat: int) -> None:
    """``ef trec-eval`` on the same run as CRLF, tab-separated and with one odd line, against the plain file."""
    paths = {"plain": run_path}
    for kind in ("crlf", "tabs", "odd-line"):
        paths[kind] = _variant(run_path, os.path.join(folder, f"run.{kind}"), kind)
    os.sync()
    best = {
        kind: min((child(EF_CLI, qrels_path, path) for _ in range(repeat)), key=lambda r: r[0])
        for kind, path in paths.items()
    }
    t_plain, plain = best["plain"]
    for kind in ("crlf", "tabs", "odd-line"):
        t, info = best[kind]
        print(
            f"ef trec-eval on the {kind} variant: {t:.2f} s, peak {info['peak_mb']:.0f} MB   plain: {t_plain:.2f} s, "
            f"{plain['peak_mb']:.0f} MB   -> {t / t_plain:.2f}x the time, "
            f"{info['peak_mb'] / plain['peak_mb']:.2f}x the memory"
        )
        os.remove(paths[kind])


def small_file(repeat: int) -> None:
    """A 4 MB run file, whole process: start-up and reading count here, not the kernels."""
    run, qrels = make(100, 1_000, 1)
    with tempfile.TemporaryDirectory() as folder:
        run_path, qrels_path = write_files(folder, run, qrels)
        size = os.path.getsize(run_path) / 1e6
        ef_best = min((child(EF_CLI, qrels_path, run_path) for _ in range(repeat)), key=lambda r: r[0])
        py_best = min((child(PYTREC_FILE, qrels_path, run_path) for _ in range(repeat)), key=lambda r: r[0])
    print(
        f"from a {size:.1f} MB run file, whole process (best of {repeat}): ef trec-eval {ef_best[0]:.2f} s   "
        f"pytrec_eval parse+evaluate {py_best[0]:.2f} s   -> ef {py_best[0] / ef_best[0]:.1f}x faster"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true", help="1,000 queries x 100 docs: a smoke run")
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-file", action="store_true", help="skip the TREC-file comparison")
    parser.add_argument("--no-ranx", action="store_true", help="skip ranx (its JIT takes a minute)")
    parser.add_argument("--repeat", type=int, default=2, help="whole-process runs per tool; the best counts")
    args = parser.parse_args()
    n_queries, n_docs = (1_000, 100) if args.small else (args.queries, args.docs)

    import pytrec_eval

    from ef.evaluation import evaluate_run

    t_make, (run, qrels) = timed(lambda: make(n_queries, n_docs, args.seed))
    print(f"synthetic run: {n_queries:,} queries x {n_docs:,} docs (made in {t_make:.1f} s)")

    t_ef, report = timed(lambda: evaluate_run(run, qrels, EF, missing="skip"))
    t_py, per_query = timed(lambda: pytrec_eval.RelevanceEvaluator(qrels, PYTREC).evaluate(run))
    py_means = {m: float(np.mean([v[m] for v in per_query.values()])) for m in TREC}
    diff = max(abs(report.metrics[e] - py_means[t]) for e, t in zip(EF, TREC, strict=True))
    print(f"ef in memory: {t_ef:.3f} s   pytrec_eval: {t_py:.3f} s   -> ef {t_py / t_ef:.1f}x faster than pytrec_eval")
    print(f"max |mean difference| vs pytrec_eval over {', '.join(EF)}: {diff:.1e}")
    all_trec_ratio(run, qrels, args.repeat)

    try:
        if args.no_ranx:
            raise ImportError
        from ranx import Qrels, Run
        from ranx import evaluate as ranx_evaluate

        # Warm the JIT up on two real queries, so the compiled signatures are the ones timed next.
        head = list(run)[:2]
        t_jit, _ = timed(lambda: ranx_evaluate(Qrels({q: qrels[q] for q in head}), Run({q: run[q] for q in head}), EF))
        t_ranx, _ = timed(lambda: ranx_evaluate(Qrels(qrels), Run(run), EF))
        print(
            f"ranx on dicts: {t_ranx:.3f} s (+ {t_jit:.2f} s JIT warm-up)   -> ef {t_ranx / t_ef:.1f}x faster "
            f"({(t_ranx + t_jit) / t_ef:.1f}x counting the warm-up)"
        )
    except ImportError:
        print("ranx: skipped or not installed")
    try:
        import ir_measures
        from ir_measures import AP, RR, R, nDCG

        t_irm, _ = timed(lambda: ir_measures.calc_aggregate([nDCG @ 10, R @ 100, AP, RR], qrels, run))
        print(f"ir-measures: {t_irm:.3f} s   -> ef {t_irm / t_ef:.1f}x faster")
    except ImportError:
        print("ir-measures: not installed")
    del per_query

    if not args.no_file:
        with tempfile.TemporaryDirectory() as folder:
            run_path, qrels_path = write_files(folder, run, qrels)
            size = os.path.getsize(run_path) / 1e6
            del run
            os.sync()  # the files just written must not be flushed to disk during a timed run
            (t_cli, ef_info), (t_pyf, py_info) = paired(qrels_path, run_path, args.repeat)
            print(
                f"from the {size:.0f} MB run file, whole process (best of {args.repeat}): "
                f"ef trec-eval {t_cli:.2f} s, peak "
                f"{ef_info['peak_mb']:.0f} MB   pytrec_eval parse+evaluate {t_pyf:.2f} s, peak "
                f"{py_info['peak_mb']:.0f} MB   -> ef {t_pyf / t_cli:.1f}x faster, "
                f"{ef_info['peak_mb'] / py_info['peak_mb']:.2f}x the memory"
            )
            file_variants(folder, run_path, qrels_path, args.repeat)
        small_file(max(args.repeat, 3))
    t_import, info = child(IMPORT)
    print(
        f"fresh process, import ef + 3-query evaluate_run: {info['seconds']:.3f} s "
        f"({t_import:.3f} s with interpreter start-up)"
    )


if __name__ == "__main__":
    main()
