"""Benchmark ef.fusion against ranx: fusing two runs of QUERIES x DOCS, beside reading them.

Two TREC runs (random scores, doc ids drawn from a pool of 50,000) are written once; then, in
this one process, best of ``--repeat``:

- reading both with :func:`ef.trec.read_run` (the baseline fusion must stay well under);
- ``ef.fusion.fuse`` of the two mappings (RRF, and CombSUM after min-max);
- ``ranx.fuse`` of the same (``Run`` objects built from the mappings, timed separately, and the
  fusion itself; numba compiled before timing).

Prints one ratio line per comparison. Usage::

    python benchmarks/bench_fusion.py [--queries 10000] [--docs 1000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import copy
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def _write(path: Path, n_queries: int, n_docs: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    with path.open("w") as out:
        for q in range(n_queries):
            docs = rng.choice(50_000, n_docs, replace=False)
            scores = np.sort(rng.random(n_docs))[::-1]
            ranked = enumerate(zip(docs, scores.tolist(), strict=True))
            out.write("".join(f"q{q} Q0 d{d} {i + 1} {s!r} r\n" for i, (d, s) in ranked))


def _best(call: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = call()
        best = min(best, time.perf_counter() - start)
    return best, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-ranx", action="store_true", help="time ef against reading only (ranx needs minutes)")
    args = parser.parse_args()

    from ef.fusion import fuse
    from ef.trec import read_run

    with tempfile.TemporaryDirectory() as folder:
        paths = [Path(folder) / "a.trec", Path(folder) / "b.trec"]
        for seed, path in enumerate(paths):
            _write(path, args.queries, args.docs, seed)
        read_s, runs = _best(lambda: [read_run(p) for p in paths], args.repeat)
    shape = f"two runs of {args.queries:,} x {args.docs:,}"
    print(f"read_run, {shape}: {read_s:.2f} s")

    if args.no_ranx:
        for label, ours in (("rrf (k=60)", {"method": "rrf"}), ("combsum after min-max", {"method": "combsum"})):
            ef_s, _ = _best(lambda ours=ours: fuse(runs, **ours), args.repeat)  # type: ignore[misc]
            print(f"{label}: ef.fusion.fuse {ef_s:.2f} s")
            print(f"ratio {label}: ef fuse / read_run of both = {ef_s / read_s:.2f}x")
        return
    import ranx

    small = [dict(list(run.items())[:2]) for run in runs]
    ranx.fuse([ranx.Run(copy.deepcopy(r)) for r in small], norm=None, method="rrf")  # compile before timing
    ranx.fuse([ranx.Run(copy.deepcopy(r)) for r in small], norm="min-max", method="sum")
    build_s, ranx_runs = _best(lambda: [ranx.Run(copy.deepcopy(r)) for r in runs], 1)
    print(f"ranx.Run from the mappings: {build_s:.2f} s (deep copies included; not counted below)")

    for label, ours, theirs in (
        ("rrf (k=60)", {"method": "rrf"}, {"norm": None, "method": "rrf"}),
        ("combsum after min-max", {"method": "combsum", "norm": "min-max"}, {"norm": "min-max", "method": "sum"}),
    ):
        ef_s, fused = _best(lambda ours=ours: fuse(runs, **ours), args.repeat)  # type: ignore[misc]
        ranx_s, theirs_run = _best(lambda theirs=theirs: ranx.fuse(ranx_runs, **theirs), args.repeat)  # type: ignore[misc]
        expected = theirs_run.to_dict()
        same = all(fused[q] == _approx(expected[q]) for q in list(fused)[:50])
        print(f"{label}: ef.fusion.fuse {ef_s:.2f} s, ranx.fuse {ranx_s:.2f} s; same scores on 50 queries: {same}")
        print(f"ratio {label}: ef / ranx = {ef_s / ranx_s:.2f}x; ef fuse / read_run of both = {ef_s / read_s:.2f}x")


def _approx(expected: dict[str, float]) -> Any:
    import pytest

    return pytest.approx(expected, rel=1e-12)


if __name__ == "__main__":
    main()
