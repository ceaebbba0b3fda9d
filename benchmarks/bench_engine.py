"""The run engine against its peers and its floor: ef, pytrec_eval, trec_eval 10.0, a minimal C scorer.

In memory: 2,000 queries x 1,000 docs, 6 judged per query, four score distributions (integer
grades 0-10, one decimal, all tied, distinct floats), doc ids of one width (``doc0001234``) and of
varying width (``d7``, ``doc-1234567``, as SciFact's are); ef's ``evaluate_run`` against
pytrec_eval's ``evaluate`` (the dict already built), best of `--repeat`, in this process.
From a file, whole process: ``ef trec-eval`` against pytrec_eval's parse plus evaluate, the
trec_eval 10.0 binary (built from ../shared/tools when it is there) and ``floor_scorer.c``
(compiled here), best wall time of `--repeat` and the CPU seconds of that run. Every score is
exact in float32, so pytrec_eval ranks as ef does; ef's means must equal pytrec_eval's within
1e-12. Prints ratio lines; never a test.

    python benchmarks/bench_engine.py                 # 2,000 x 1,000, in memory and from files
    python benchmarks/bench_engine.py --large         # + the 10,000 x 1,000 file (about 420 MB)
    python benchmarks/bench_engine.py --queries 300   # a quick run
"""

from __future__ import annotations

import argparse
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
SHARED_TOOLS = HERE.parent.parent / "shared" / "tools"
EF = ["ndcg@10", "recall@100", "map", "mrr"]
PYTREC = {"ndcg_cut.10", "recall.100", "map", "recip_rank"}
KINDS = ["integers 0-10", "one decimal", "all tied", "distinct floats"]
Run = dict[str, dict[str, float]]


def make(kind: str, n_queries: int, n_docs: int, widths: str, seed: int = 0) -> tuple[Run, dict[str, dict[str, int]]]:
    rng = np.random.default_rng(seed)
    run: Run = {}
    qrels: dict[str, dict[str, int]] = {}
    for q in range(n_queries):
        numbers = rng.choice(10 * n_docs, size=n_docs, replace=False).tolist()
        if widths == "fixed":
            names = [f"doc{d:07d}" for d in numbers]
        else:
            names = [("d" if d % 3 else "doc-") + str(d * 7 + 1) for d in numbers]
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


def best(job: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = job()
        times.append(time.perf_counter() - start)
    return min(times), result


def in_memory(kind: str, widths: str, n_queries: int, n_docs: int, repeat: int) -> None:
    import pytrec_eval

    from ef.evaluation import evaluate_run

    run, qrels = make(kind, n_queries, n_docs, widths)
    t_ef, report = best(lambda: evaluate_run(run, qrels, EF, missing="skip"), repeat)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, PYTREC)
    t_py, theirs = best(lambda: evaluator.evaluate(run), repeat)
    names = {"ndcg@10": "ndcg_cut_10", "recall@100": "recall_100", "map": "map", "mrr": "recip_rank"}
    diff = max(
        abs(report.metrics[m] - sum(v[t] for v in theirs.values()) / len(theirs)) for m, t in names.items()
    )
    assert diff < 1e-12, diff
    print(
        f"in memory, {kind:>15}, {widths:>7} ids: ef {t_ef:.3f} s   pytrec_eval {t_py:.3f} s"
        f"   -> ef {t_py / t_ef:.1f}x faster   max |mean diff| {diff:.1e}"
    )


def write_files(folder: str, run: Run, qrels: dict[str, dict[str, int]]) -> tuple[str, str]:
    """The run as trec_eval writes one (each query's lines by score, descending; repr scores) and the qrels."""
    run_path, qrels_path = os.path.join(folder, "run.txt"), os.path.join(folder, "qrels.txt")
    with open(run_path, "w") as out:
        for query_id, docs in run.items():
            ranked = sorted(docs.items(), key=lambda item: -item[1])
            out.write("".join(f"{query_id} Q0 {d} {r} {s!r} bench\n" for r, (d, s) in enumerate(ranked, 1)))
    with open(qrels_path, "w") as out:
        for query_id, judged in qrels.items():
            out.write("".join(f"{query_id} 0 {d} {g}\n" for d, g in judged.items()))
    return run_path, qrels_path


EF_CLI = (
    "import sys\nfrom ef.cli import main\n"
    "measures = ['-m', 'ndcg_cut.10', '-m', 'recall.100', '-m', 'map', '-m', 'recip_rank']\n"
    "sys.argv[1:] = ['trec-eval', *measures, *sys.argv[1:]]\n"
    "sys.exit(main())  # argv from sys.argv, as the ef command calls it (see ef.cli.main)"
)
PYTREC_FILE = (
    "import sys, pytrec_eval\n"
    "def read(path, cast):\n"
    "    out = {}\n"
    "    for line in open(path):\n"
    "        f = line.split()\n"
    "        out.setdefault(f[0], {})[f[2]] = cast(f[4] if cast is float else f[3])\n"
    "    return out\n"
    "qrels, run = read(sys.argv[1], int), read(sys.argv[2], float)\n"
    "e = pytrec_eval.RelevanceEvaluator(qrels, {'ndcg_cut.10', 'recall.100', 'map', 'recip_rank'})\n"
    "r = e.evaluate(run)\n"
)


def process(argv: list[str]) -> tuple[float, float, float]:
    """Run `argv` to the end: (wall seconds, CPU seconds, peak MB). The peak is GNU time's (%M) where it
    is installed: a child forked from this process would count the run dicts it holds."""
    with tempfile.NamedTemporaryFile("r") as report:
        timer = ["/usr/bin/time", "-f", "%U %S %M", "-o", report.name] if os.path.exists("/usr/bin/time") else []
        start = time.perf_counter()
        subprocess.run([*timer, *argv], stdout=subprocess.DEVNULL, check=True)
        wall = time.perf_counter() - start
        if not timer:
            return wall, math.nan, math.nan
        user, system, peak_kb = report.read().split()[-3:]
    return wall, float(user) + float(system), int(peak_kb) / 1024


def tools(folder: str) -> dict[str, list[str]]:
    """The command of each tool taking QRELS RUN: ef, pytrec_eval, trec_eval (when buildable), the floor."""
    out = {
        "ef trec-eval": [sys.executable, "-c", EF_CLI],
        "pytrec_eval parse+evaluate": [sys.executable, "-c", PYTREC_FILE],
    }
    builder = SHARED_TOOLS / "build-trec-eval"
    binary = os.path.join(folder, "trec_eval")
    if builder.exists() and subprocess.run([str(builder), binary], capture_output=True, check=False).returncode == 0:
        out["trec_eval 10.0"] = [binary, "-m", "ndcg_cut.10", "-m", "recall.100", "-m", "map", "-m", "recip_rank"]
    floor = os.path.join(folder, "floor")
    compiler = shutil.which("cc") or shutil.which("gcc")
    built = compiler and subprocess.run([compiler, "-O2", "-o", floor, str(HERE / "floor_scorer.c")], check=False)
    if built and built.returncode == 0:
        out["C floor"] = [floor]
    return out


def from_file(
    label: str, run: Run, qrels: dict[str, dict[str, int]], commands: dict[str, list[str]], repeat: int
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        run_path, qrels_path = write_files(folder, run, qrels)
        size = os.path.getsize(run_path) / 2**20
        results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
        for _ in range(repeat):  # in turn, so that no tool alone meets a noisy moment
            for name, argv in commands.items():
                results[name].append(process([*argv, qrels_path, run_path]))
    chosen = {name: min(runs) for name, runs in results.items()}
    ef_wall, ef_cpu, ef_peak = chosen["ef trec-eval"]
    line = f"from a file, {label} ({size:.0f} MB): ef {ef_wall:.2f} s wall, {ef_cpu:.2f} CPU-s, peak {ef_peak:.0f} MB"
    for name, (wall, cpu, peak) in chosen.items():
        if name != "ef trec-eval":
            line += f"   | {name} {wall:.2f} s ({wall / ef_wall:.1f}x ef's wall), {cpu:.2f} CPU-s, {peak:.0f} MB"
    print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=2_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-file", action="store_true", help="in memory only")
    parser.add_argument("--large", action="store_true", help="also the 10,000 x 1,000 file")
    args = parser.parse_args()
    print(f"{sys.platform}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}", flush=True)
    for widths in ("fixed", "varying"):
        for kind in KINDS:
            in_memory(kind, widths, args.queries, args.docs, args.repeat)
    if args.no_file:
        return
    # ef's modules compiled, as pip install leaves them: with PYTHONDONTWRITEBYTECODE=1 set, every
    # process would otherwise compile each module edited since its last .pyc (~9 ms for _hits.py).
    import compileall

    import ef

    compileall.compile_dir(os.path.dirname(ef.__file__), quiet=2)
    with tempfile.TemporaryDirectory() as folder:
        commands = tools(folder)
        for kind in KINDS:
            run, qrels = make(kind, args.queries, args.docs, "varying")
            from_file(f"{kind}, {args.queries:,} x {args.docs:,}", run, qrels, commands, args.repeat)
        if args.large:
            run, qrels = make("distinct floats", 10_000, 1_000, "fixed")
            from_file("distinct floats, 10,000 x 1,000", run, qrels, commands, max(2, args.repeat // 2))
    print("ratios are of wall-clock seconds, best of each tool; CPU-s and peaks are those runs'")


if __name__ == "__main__":
    main()
