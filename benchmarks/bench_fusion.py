"""Benchmark ef.fusion against ranx: fusing two runs of QUERIES x DOCS, beside reading them.

Two TREC runs (random scores, doc ids drawn from a pool of 50,000; ``--shared``: the share of
run a's docs that run b lists too) are written once; then, in
this one process, best of ``--repeat`` (CPU seconds of this process, and wall seconds: on a
shared machine the CPU figure is the steadier one):

- reading both with :func:`ef.trec.read_run` (the baseline fusion must stay well under);
- ``ef.fusion.fuse`` of the two mappings (RRF, and CombSUM after min-max), split into its two
  stages (mappings to arrays, the numpy fusion; the result, a ``RankedRun``, holds the arrays),
  and the fused run's ``to_dict()`` on top (a dict of dicts, as ``read_run`` returns);
- ``fuse`` of the two files (their text read straight into arrays), and what ``ef fuse a.trec
  b.trec -o out.trec`` does (the same, then the fused run written as text);
- ``ranx.fuse`` of the same (``Run`` objects built from the mappings, timed separately, and the
  fusion itself; numba compiled on a small run before timing, so JIT time is left out).

Prints one ratio line per comparison. Usage::

    python benchmarks/bench_fusion.py [--queries 10000] [--docs 1000] [--repeat 3] [--shared 0.4] [--no-ranx]
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


def _write(paths: list[Path], n_queries: int, n_docs: int, shared: float) -> None:
    """Two runs of random scores; per query, run b lists `shared` of run a's docs (the rest of
    each list drawn from a pool of 50,000 ids)."""
    rng = np.random.default_rng(0)
    with paths[0].open("w") as a, paths[1].open("w") as b:
        for q in range(n_queries):
            docs_a = rng.choice(50_000, n_docs, replace=False)
            common = rng.choice(docs_a, int(shared * n_docs), replace=False)
            others = np.setdiff1d(rng.choice(50_000, 2 * n_docs, replace=False), docs_a)
            docs_b = rng.permutation(np.concatenate([common, others[: n_docs - len(common)]]))
            for out, docs in ((a, docs_a), (b, docs_b)):
                scores = np.sort(rng.random(n_docs))[::-1]
                ranked = enumerate(zip(docs.tolist(), scores.tolist(), strict=True))
                out.write("".join(f"q{q} Q0 d{d} {i + 1} {s!r} r\n" for i, (d, s) in ranked))


def _best(call: Callable[[], Any], repeat: int) -> tuple[float, float, Any]:
    """The least CPU seconds and the least wall seconds over `repeat` calls, and the last result."""
    cpu, wall, result = float("inf"), float("inf"), None
    for _ in range(repeat):
        result = None  # the previous result is freed before the next call, not during it
        start_cpu, start = time.process_time(), time.perf_counter()
        result = call()
        cpu = min(cpu, time.process_time() - start_cpu)
        wall = min(wall, time.perf_counter() - start)
    return cpu, wall, result


def _stages(runs: list[Any], method: str, repeat: int) -> tuple[float, float, float]:
    """CPU seconds of fuse's two stages (mappings to arrays, the numpy fusion), and of its result's to_dict()."""
    from ef.fusion._stack import stack_runs
    from ef.fusion.methods import fuse_stack, resolve, to_run

    names = [f"runs[{i}]" for i in range(len(runs))]
    spec, norm, weights, params = resolve(method, None, None, None, len(runs))
    stack_s, _, stack = _best(lambda: stack_runs(runs, names), repeat)
    fuse_s, _, fused = _best(lambda: fuse_stack(stack, spec, norm, weights, params, "zero", names), repeat)
    ranked = to_run(stack, fused)
    out_s, _, _ = _best(ranked.to_dict, repeat)
    return stack_s, fuse_s, out_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--docs", type=int, default=1_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-ranx", action="store_true", help="time ef against reading only (ranx needs minutes)")
    parser.add_argument("--shared", type=float, default=0.0,
                        help="the share of run a's docs that run b lists per query (SciFact's BM25 and MiniLM: 0.4)")
    args = parser.parse_args()

    from ef.fusion import fuse
    from ef.trec import read_run, write_run

    with tempfile.TemporaryDirectory() as folder:
        paths = [Path(folder) / "a.trec", Path(folder) / "b.trec"]
        _write(paths, args.queries, args.docs, args.shared)
        runs = [read_run(p) for p in paths]
        out = Path(folder) / "fused.trec"

        def cli(method: str = "rrf") -> None:  # what `ef fuse a.trec b.trec -o fused.trec` does
            write_run(out, fuse(paths, method=method), run_id="fused")

        # Round by round, reading and each fusion side by side, so that a ratio compares two
        # timings taken under the same load (the machine may be shared); best of the rounds.
        calls: dict[str, Callable[[], Any]] = {
            "read": lambda: [read_run(p) for p in paths],
            "rrf": lambda: fuse(runs, method="rrf"),
            "combsum": lambda: fuse(runs, method="combsum"),
            "cli": cli,
            "cli combsum": lambda: cli("combsum"),
            "dicts": lambda: fuse(runs, method="rrf").to_dict(),
            "files": lambda: fuse(paths, method="rrf"),
            "write": lambda: write_run(out, fuse(runs, method="rrf"), run_id="fused"),
            "write dicts": lambda: write_run(out, fuse(runs, method="rrf").to_dict(), run_id="fused"),
        }
        best: dict[str, tuple[float, float]] = {}
        ratios: dict[str, list[float]] = {name: [] for name in calls}
        for _ in range(args.repeat):
            this = {name: _best(call, 1)[:2] for name, call in calls.items()}
            for name, (cpu, wall) in this.items():
                old = best.get(name, (float("inf"), float("inf")))
                best[name] = (min(old[0], cpu), min(old[1], wall))
                ratios[name].append(cpu / this["read"][0])
    shape = f"two runs of {args.queries:,} x {args.docs:,}, {args.shared:.0%} of a's docs in b"
    read_s, read_wall = best["read"]
    print(f"read_run of both, {shape}: {read_s:.2f} CPU-s ({read_wall:.2f} s wall), best of {args.repeat}")

    def spread(name: str) -> str:
        low, high = min(ratios[name]), max(ratios[name])
        return f"{low:.2f}-{high:.2f}x" if len(ratios[name]) > 1 else f"{low:.2f}x"

    for label, key in (("rrf (k=60)", "rrf"), ("combsum after min-max", "combsum")):
        ef_s, ef_wall = best[key]
        stack_s, numpy_s, out_s = _stages(runs, key, args.repeat)
        print(f"{label}: ef.fusion.fuse {ef_s:.2f} CPU-s ({ef_wall:.2f} s wall) = mappings to arrays {stack_s:.2f}"
              f" + numpy fusion {numpy_s:.2f}; its to_dict() {out_s:.2f} more")
        print(f"ratio {label}: ef fuse / read_run of both = {spread(key)} (CPU, round by round); numpy fusion"
              f" alone {numpy_s / read_s:.2f}x")
    print(f"rrf (k=60) then to_dict() (a dict of dicts, as read_run returns): {best['dicts'][0]:.2f} CPU-s; ratio to"
          f" read_run of both {spread('dicts')}")
    files_s, files_wall = best["files"]
    print(f"fuse of the two files (rrf; their text read straight into arrays): "
          f"{files_s:.2f} CPU-s ({files_wall:.2f} s wall); ratio to read_run of both {spread('files')}")
    cli_s, cli_wall = best["cli"]
    print(f"ef fuse a.trec b.trec -o fused.trec (rrf): {cli_s:.2f} CPU-s ({cli_wall:.2f} s wall); ratio to "
          f"read_run of both {spread('cli')}; from the mappings: write_run(fuse(...)) {best['write'][0]:.2f}, "
          f"write_run(fuse(...).to_dict()) {best['write dicts'][0]:.2f}")
    print(f"ef fuse a.trec b.trec --method combsum -o fused.trec (min-max; distinct fused scores): "
          f"{best['cli combsum'][0]:.2f} CPU-s ({best['cli combsum'][1]:.2f} s wall); ratio to read_run of both "
          f"{spread('cli combsum')}")
    if args.no_ranx:
        return
    import ranx

    small = [dict(list(run.items())[:2]) for run in runs]
    ranx.fuse([ranx.Run(copy.deepcopy(r)) for r in small], norm=None, method="rrf")  # JIT before timing
    ranx.fuse([ranx.Run(copy.deepcopy(r)) for r in small], norm="min-max", method="sum")
    build_s, _, ranx_runs = _best(lambda: [ranx.Run(copy.deepcopy(r)) for r in runs], 1)
    print(f"ranx.Run from the mappings: {build_s:.2f} CPU-s (deep copies included; not counted below)")

    for label, ours, theirs in (
        ("rrf (k=60)", {"method": "rrf"}, {"norm": None, "method": "rrf"}),
        ("combsum after min-max", {"method": "combsum", "norm": "min-max"}, {"norm": "min-max", "method": "sum"}),
    ):
        pairs = []
        for _ in range(args.repeat):  # side by side, round by round
            ef_s, _, fused = _best(lambda ours=ours: fuse(runs, **ours), 1)  # type: ignore[misc]
            ranx_s, _, theirs_run = _best(lambda theirs=theirs: ranx.fuse(ranx_runs, **theirs), 1)  # type: ignore[misc]
            pairs.append((ef_s, ranx_s))
        expected = theirs_run.to_dict()
        same = all(fused[q] == _approx(expected[q]) for q in list(fused)[:50])
        ef_s, ranx_s = min(p[0] for p in pairs), min(p[1] for p in pairs)
        low, high = min(e / r for e, r in pairs), max(e / r for e, r in pairs)
        print(f"{label}: ef.fusion.fuse {ef_s:.2f} CPU-s, ranx.fuse {ranx_s:.2f} CPU-s (numba JIT excluded);"
              f" same scores on 50 queries: {same}")
        print(f"ratio {label}: ef / ranx = {low:.2f}-{high:.2f}x (CPU, round by round)")


def _approx(expected: dict[str, float]) -> Any:
    import pytest

    return pytest.approx(expected, rel=1e-12)


if __name__ == "__main__":
    main()
