"""Runs larger than memory: ef trec-eval streams a run file grouped by query, window by window.

Writes a seeded run file of N queries x 1,000 docs (default 40,000 queries: 40M lines, about
2 GB; scores with 1 decimal, so ties are everywhere) and its qrels, then times whole processes:
``ef trec-eval`` on the file (streamed: two threads, a half each) and on the first quarter of it
read from stdin (a pipe: streamed by one thread, kept in a temporary file past its first window).
Prints peak memory (VmHWM) and lines per second of each. Never a test.

    python benchmarks/bench_stream.py                  # 40M lines (~2 GB of disk for a minute)
    python benchmarks/bench_stream.py --queries 4000   # a quick run
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

EF_CLI = (
    "import sys\n"
    "from ef.cli import main\n"
    "measures = ['-m', 'ndcg_cut.10', '-m', 'recall.100', '-m', 'map', '-m', 'recip_rank']\n"
    "sys.argv[1:] = ['trec-eval', *measures, *sys.argv[1:]]\n"
    "rc = main()  # argv from sys.argv, as the ef command calls it (see ef.cli.main)\n"
    "assert rc == 0\n"
    "hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1]\n"
    # the forked reader of the file's second half: its peak added (shared pages counted twice)
    "import json, resource; child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "print(json.dumps({'peak_mb': (int(hwm) + child) / 1024}))"
)


def write(folder: str, n_queries: int, n_docs: int, seed: int) -> tuple[str, str, str, int]:
    """The run file, its first quarter, the qrels; and the quarter's line count."""
    rng = np.random.default_rng(seed)
    names = np.array([f"doc{d:07d}" for d in range(10 * n_docs)])
    run_path, part_path = os.path.join(folder, "run.txt"), os.path.join(folder, "part.txt")
    qrels_path = os.path.join(folder, "qrels.txt")
    quarter = n_queries // 4
    with open(run_path, "w") as run, open(part_path, "w") as part, open(qrels_path, "w") as qrels:
        for q in range(n_queries):
            docs = names[rng.choice(10 * n_docs, size=n_docs, replace=False)].tolist()
            scores = (np.sort(rng.integers(0, 1000, n_docs))[::-1] / 10).tolist()
            ranked = enumerate(zip(docs, scores, strict=True), 1)
            block = "".join(f"q{q:06d} Q0 {d} {r} {s} bench\n" for r, (d, s) in ranked)
            run.write(block)
            if q < quarter:
                part.write(block)
            judged = rng.choice(n_docs, size=10, replace=False).tolist()
            grades = rng.integers(0, 3, 10).tolist()
            qrels.write("".join(f"q{q:06d} 0 {docs[i]} {g}\n" for i, g in zip(judged, grades, strict=True)))
    return run_path, part_path, qrels_path, quarter * n_docs


def child(*args: str, stdin: str | None = None) -> tuple[float, float]:
    start = time.perf_counter()
    with open(stdin, "rb") if stdin else open(os.devnull, "rb") as source:
        done = subprocess.run([sys.executable, "-c", EF_CLI, *args], stdin=source, capture_output=True, text=True,
                              check=True)
    return time.perf_counter() - start, json.loads(done.stdout.strip().splitlines()[-1])["peak_mb"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=40_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--folder", default=None, help="where the files go (default: a temporary folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.folder) as folder:
        start = time.perf_counter()
        run_path, part_path, qrels_path, part_lines = write(folder, args.queries, args.docs, 0)
        lines = args.queries * args.docs
        size = os.path.getsize(run_path) / 1e9
        print(f"run file: {lines:,} lines, {size:.2f} GB (written in {time.perf_counter() - start:.0f} s)")
        os.sync()
        t_stream, peak_stream = child(qrels_path, run_path)
        t_pipe, peak_pipe = child(qrels_path, "-", stdin=part_path)
        print(
            f"ef trec-eval streamed: {t_stream:.1f} s for {lines / 1e6:.0f}M lines, peak {peak_stream:.0f} MB, "
            f"{lines / t_stream / 1e6:.2f}M lines/s   stdin ({part_lines / 1e6:.0f}M lines): "
            f"{t_pipe:.1f} s, peak {peak_pipe:.0f} MB, {part_lines / t_pipe / 1e6:.2f}M lines/s   "
            f"-> the file at {(lines / t_stream) / (part_lines / t_pipe):.2f}x the pipe's per-line speed, "
            f"{peak_stream / 1024:.2f} GB peak for a {size:.1f} GB file"
        )


if __name__ == "__main__":
    main()
