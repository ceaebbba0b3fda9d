"""Kill -9 a writer, an index save and a benchmark run at several points; nothing may be lost.

Each case runs the work in a subprocess that SIGKILLs itself at a chosen point (a patched call,
so the point is exact, not a race). Then: the previous file or index is intact (or, past the
rename, the new one is complete); the next write in this process leaves no temporary file; a
resumed benchmark scores every sample exactly once and summarises exactly as an uninterrupted run.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ef.io._atomic import atomic_writer
from ef.source_manager import SearchableCorpus, ingest
from fastrag.benchmark import BenchmarkResult, read_outcomes, run_benchmark

sys.path.insert(0, str(Path(__file__).parent))  # the children import the same module
from _fault_targets import METRICS, SAMPLES, Pages

SRC = str(Path(__file__).resolve().parents[1] / "src")
ENV = {**os.environ, "PYTHONPATH": SRC, "EF_NO_PROGRESS": "1"}

# The prelude every child runs: die(), a SIGKILL of the child itself, and patch(), which makes
# `module.name` call die() on its n-th call (before or after the real call).
PRELUDE = """
import os, signal, sys
def die():
    os.kill(os.getpid(), signal.SIGKILL)
def patch(module, name, nth=1, after=False):
    real, calls = getattr(module, name), [0]
    def wrapper(*args, **kwargs):
        calls[0] += 1
        if calls[0] == nth and not after:
            die()
        result = real(*args, **kwargs)
        if calls[0] == nth and after:
            die()
        return result
    setattr(module, name, wrapper)
"""


def killed(code: str, *args: str) -> None:
    """Run `code` in a child that must end by SIGKILL."""
    child = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code), *args],
                           env=ENV, capture_output=True, timeout=60, check=False)
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith(".ef-"))


# --- the atomic writer ---------------------------------------------------------------------------

BIG = 8 * 1024 * 1024  # written in 1 MiB chunks

WRITER = """
    import ef.io._atomic as atomic
    target, point = sys.argv[1], sys.argv[2]
    if point == "fsync":
        patch(atomic.os, "fsync")
    elif point == "before-rename":
        patch(atomic.os, "replace")
    elif point == "after-rename":
        patch(atomic.os, "replace", after=True)
    with atomic.atomic_writer(target) as stream:
        for i in range(8):
            stream.write(bytes([65 + i]) * (1024 * 1024))
            if point == f"chunk-{i}":
                stream.flush()
                die()
"""


@pytest.mark.parametrize(("point", "renamed"), [
    ("chunk-0", False), ("chunk-5", False), ("fsync", False), ("before-rename", False), ("after-rename", True),
])
def test_a_killed_writer_leaves_the_old_file_or_the_whole_new_one(tmp_path: Path, point: str, renamed: bool) -> None:
    target = tmp_path / "big.bin"
    target.write_bytes(b"the previous file")
    killed(WRITER, str(target), point)
    new = b"".join(bytes([65 + i]) * (1024 * 1024) for i in range(8))
    assert target.read_bytes() == (new if renamed else b"the previous file")
    assert len(leftovers(tmp_path)) == (0 if renamed else 1)
    with atomic_writer(target) as stream:  # the next write to the same place
        stream.write(b"next")
    assert (leftovers(tmp_path), target.read_bytes()) == ([], b"next")


# --- an index save -------------------------------------------------------------------------------

SAVER = """
    import ef.io._atomic as atomic
    import ef.source_manager._collection as collection
    from ef.source_manager import ingest
    target, point = sys.argv[1], sys.argv[2]
    if point == "writing":
        patch(collection.np, "save")  # sources.jsonl written, segments.npy not yet
    elif point == "before-swap":
        patch(atomic, "_exchange")
    elif point == "after-swap":
        patch(atomic, "_exchange", after=True)
    ingest({"new": "the new corpus"}, show_progress=False).save(target, overwrite=True)
"""


@pytest.mark.parametrize(("point", "swapped"), [("writing", False), ("before-swap", False), ("after-swap", True)])
def test_a_killed_index_save_leaves_an_index_at_the_target(tmp_path: Path, point: str, swapped: bool) -> None:
    target = tmp_path / "index"
    ingest({"old": "the old corpus"}, show_progress=False).save(target)
    killed(SAVER, str(target), point)
    assert SearchableCorpus.load(target, show_progress=False).source_ids == (("new",) if swapped else ("old",))
    assert len(leftovers(tmp_path)) == 1  # the killed save's folder (new files, or the old index)
    ingest({"next": "the next corpus"}, show_progress=False).save(target, overwrite=True)
    assert leftovers(tmp_path) == []
    assert SearchableCorpus.load(target, show_progress=False).source_ids == ("next",)


# --- a benchmark run -----------------------------------------------------------------------------

BENCHMARK = """
    import asyncio
    import fastrag.benchmark.harness as harness
    sys.path.insert(0, sys.argv[3])
    from _fault_targets import METRICS, SAMPLES, Pages
    path, point = sys.argv[1], sys.argv[2]
    kind, nth = point.split("-")
    real, calls = harness.dump_line, [0]
    def dump_line(record):
        line = real(record)
        calls[0] += 1
        if calls[0] == int(nth):  # the n-th outcome (the header is written elsewhere)
            if kind == "torn":  # half the line reaches the file, then the process dies
                with open(path, "a", encoding="utf-8") as handle:
                    handle.write(line[: len(line) // 2])
            die()
        return line
    harness.dump_line = dump_line
    asyncio.run(harness.run_benchmark(Pages(), SAMPLES, METRICS, concurrency=4, results_path=path,
                                      run_name="pages", show_progress=False))
"""


def benchmark(path: Path | None, retriever: Pages) -> BenchmarkResult:
    return asyncio.run(run_benchmark(retriever, SAMPLES, METRICS, concurrency=4, results_path=path,
                                     run_name="pages", show_progress=False))


@pytest.mark.parametrize("point", ["kill-1", "kill-12", "torn-7", "torn-29"])
def test_a_killed_benchmark_resumes_scoring_each_sample_once(tmp_path: Path, point: str) -> None:
    path = tmp_path / "results.jsonl"
    killed(BENCHMARK, str(path), point, str(Path(__file__).parent))
    recorded = [o.sample_id for _, o in read_outcomes(path)] if not point.startswith("torn") else None
    complete = int(point.split("-")[1]) - 1  # outcomes fully written before the kill
    text = path.read_text(encoding="utf-8")
    assert text.count("\n") == 1 + complete  # the header, then the complete outcome lines
    assert text.endswith("\n") is not point.startswith("torn")
    done_before = {json.loads(line)["sample_id"] for line in text.splitlines()[1:1 + complete]}

    retriever = Pages()
    resumed = benchmark(path, retriever)
    assert sorted(retriever.calls) == sorted(s.query for s in SAMPLES if s.id not in done_before)
    ids = [o.sample_id for _, o in read_outcomes(path)]
    assert sorted(ids) == sorted(s.id for s in SAMPLES)  # each exactly once, no torn line left
    if recorded is not None:
        assert ids[: len(recorded)] == recorded  # what was there stays, in place
    assert leftovers(tmp_path) == []
    uninterrupted = benchmark(None, Pages())
    assert {name: s.to_dict() for name, s in resumed.summary.items()} == {
        name: s.to_dict() for name, s in uninterrupted.summary.items()
    }
    assert resumed.scores == uninterrupted.scores
