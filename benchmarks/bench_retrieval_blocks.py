"""Peak memory of evaluate_retrieval in memory against block by block (the path of an index on Ray).

Not a test; run it by hand and copy its lines into docs/scale.md:

    python benchmarks/bench_retrieval_blocks.py                  # 20,000 and 40,000 queries
    python benchmarks/bench_retrieval_blocks.py --queries 100000 --block 5000

A stand-in retriever returns `--depth` ``SearchHit``\\ s per query (distinct documents, decreasing
scores), with and without a ``query_block``; each run is a fresh process, so its peak resident set
(``ru_maxrss``) is that evaluation's. The two reports' metrics must be equal, and are printed.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from collections.abc import Sequence

N_DOCS = 50_000


class Retriever:
    """`depth` hits per query ``q<i>``, the same for a given i whatever the block."""

    def __init__(self, query_block: int | None) -> None:
        if query_block is not None:
            self.query_block = query_block

    def search_many(self, texts: Sequence[str], *, limit: int = 10) -> list[list[object]]:
        from ef.segments import Segment
        from ef.source_manager import SearchHit

        out: list[list[object]] = []
        for text in texts:
            i = int(text[1:])
            hits: list[object] = []
            for r in range(limit):
                doc = f"d{(i * 13 + r * 101) % N_DOCS}"
                hits.append(SearchHit(Segment(source_id=doc, index=0, text="x", start=0, end=1), 1.0 - r / 1000, r + 1))
            out.append(hits)
        return out


def measure(n: int, block: int | None, depth: int) -> dict[str, object]:
    """One evaluation in this process: its seconds, peak RSS and metrics."""
    from ef.evaluation import evaluate_retrieval

    qrels = {f"q{i}": {f"d{(i * 7 + j) % N_DOCS}": 1.0 for j in range(3)} for i in range(n)}
    queries = {q: q for q in qrels}
    start = time.perf_counter()
    report = evaluate_retrieval(Retriever(block), qrels, queries, k_values=(1, 10, depth))
    return {
        "seconds": time.perf_counter() - start,
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "metrics": dict(report.metrics),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, nargs="+", default=[20_000, 40_000])
    parser.add_argument("--block", type=int, default=2_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--child", nargs=2, metavar=("N", "BLOCK"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        n, block = int(args.child[0]), None if args.child[1] == "none" else int(args.child[1])
        print(json.dumps(measure(n, block, args.depth)))
        return
    for n in args.queries:
        results = {}
        for block in ("none", str(args.block)):
            output = subprocess.run(
                [sys.executable, __file__, "--depth", str(args.depth), "--child", str(n), block],
                check=True, capture_output=True, text=True,
            ).stdout
            results[block] = json.loads(output)
        memory, streamed = results["none"], results[str(args.block)]
        print(
            f"{n:,} queries x {args.depth} hits: in memory {memory['peak_mib']:,.0f} MiB, {memory['seconds']:.1f} s; "
            f"blocks of {args.block:,} {streamed['peak_mib']:,.0f} MiB, {streamed['seconds']:.1f} s; "
            f"metrics equal: {memory['metrics'] == streamed['metrics']}"
        )


if __name__ == "__main__":
    main()
