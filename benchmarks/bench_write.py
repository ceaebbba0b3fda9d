"""Benchmark writing a TREC run: ef's ``write_run`` against ranx's ``Run.save`` and a plain Python writer.

One run of QUERIES x DOCS with distinct random scores (what a dense retriever, a reranker or a
score-based fusion gives) and one with scores that repeat query after query (a rank-based
fusion's), each written to a TREC file in this one process, best of ``--repeat`` CPU seconds;
``read_run`` of the written file is timed beside it, since a writer slower than the reader is
what a pipeline waits on. Every writer's file is checked to read back as the same run.

Usage::

    python benchmarks/bench_write.py [--queries 2000] [--docs 1000] [--repeat 3] [--no-ranx]
"""

from __future__ import annotations

import argparse
import functools
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np


def _best(call: Callable[[], object], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        call()
        best = min(best, time.process_time() - start)
    return best


def _plain(path: Path, run: dict[str, dict[str, float]]) -> None:
    """The writer a user writes: sort each query, one f-string per line (repr of each score)."""
    with path.open("w") as out:
        for query_id, docs in run.items():
            ranked = sorted(docs.items(), key=lambda item: (item[1], item[0]), reverse=True)
            out.writelines(f"{query_id} Q0 {d} {r} {s!r} plain\n" for r, (d, s) in enumerate(ranked, 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=2_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-ranx", action="store_true", help="leave ranx out (minutes at 10,000 queries)")
    args = parser.parse_args()

    from ef.trec import read_run, write_run

    rng = np.random.default_rng(0)
    runs = {
        "distinct scores": {f"q{q}": {f"d{d}": float(s) for d, s in enumerate(rng.random(args.docs))}
                            for q in range(args.queries)},
        "repeating scores": {f"q{q}": {f"d{d}": 1 / (61 + d) for d in range(args.docs)} for q in range(args.queries)},
    }
    try:
        from ranx import Run
    except ImportError:
        Run = None  # noqa: N806
    if args.no_ranx:
        Run = None  # noqa: N806
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder)
        for label, run in runs.items():
            ef_s = _best(functools.partial(write_run, out / "ef.trec", run), args.repeat)
            read_s = _best(functools.partial(read_run, out / "ef.trec"), args.repeat)
            plain_s = _best(functools.partial(_plain, out / "plain.trec", run), args.repeat)
            for name in ("ef.trec", "plain.trec"):
                if read_run(out / name) != run:
                    raise SystemExit(f"{name} does not read back as the run written")
            line = (f"{label}, {args.queries:,} x {args.docs:,}: ef write_run {ef_s:.2f} CPU-s, read_run of it "
                    f"{read_s:.2f} (write/read {ef_s / read_s:.2f}x); plain Python writer {plain_s:.2f} "
                    f"-> ef {plain_s / ef_s:.1f}x faster")
            if Run is not None:
                ranx_run = Run(run)
                ranx_s = _best(functools.partial(ranx_run.save, str(out / "ranx.trec"), kind="trec"), args.repeat)
                line += f"; ranx Run.save {ranx_s:.2f} -> ef {ranx_s / ef_s:.1f}x faster"
            print(line, flush=True)


if __name__ == "__main__":
    main()
