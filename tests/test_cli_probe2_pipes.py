"""A reader that leaves early ends ``ef`` with 141 (as ``yes | head -1``), and a reader that stays
gets every byte, with ``PYTHONUNBUFFERED`` set or not (found by probing the CLI in a container
where it was set: ``sys.stdout.buffer`` is then a raw file, whose ``write`` took the first 64 KiB
of a fused run and dropped the rest without an error; ``ef fuse -o - | head`` exited 0)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

N = 3000  # queries; two documents each: a fused run of about 200 KB, more than a pipe holds


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    folder = tmp_path_factory.mktemp("runs")
    paths = []
    for name, flip in (("a", False), ("b", True)):
        path = folder / f"{name}.trec"
        path.write_text("".join(
            f"q{i} Q0 {'y' if flip else 'x'}{i} 1 2 {name}\nq{i} Q0 {'x' if flip else 'y'}{i} 2 1 {name}\n"
            for i in range(N)
        ))
        paths.append(str(path))
    return paths


def _ef(argv: list[str], unbuffered: bool) -> subprocess.Popen[bytes]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONUNBUFFERED"}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"
    return subprocess.Popen([sys.executable, "-m", "ef", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=env)


@pytest.mark.parametrize("unbuffered", [True, False])
def test_a_reader_that_leaves_ends_ef_with_141(runs: list[str], unbuffered: bool) -> None:
    process = _ef(["fuse", *runs, "-o", "-"], unbuffered)
    assert process.stdout is not None
    assert process.stderr is not None
    assert process.stdout.read(10) == b"q0 Q0 y0 1"  # a tie: doc ids descending, as trec_eval
    process.stdout.close()
    assert (process.wait(timeout=60), process.stderr.read()) == (141, b"")
    process.stderr.close()


@pytest.mark.parametrize("unbuffered", [True, False])
def test_a_reader_that_stays_gets_every_line(runs: list[str], unbuffered: bool, tmp_path: Path) -> None:
    process = _ef(["fuse", *runs, "-o", "-"], unbuffered)
    out, err = process.communicate(timeout=60)
    assert (process.returncode, err) == (0, b"")
    assert len(out.splitlines()) == 2 * N
    saved = tmp_path / "fused.trec"
    assert _ef(["fuse", *runs, "-o", str(saved)], unbuffered).wait(timeout=60) == 0
    assert saved.read_bytes() == out


@pytest.mark.parametrize("unbuffered", [True, False])
def test_trec_eval_per_query_lines_reach_a_reader_or_end_with_141(
    runs: list[str], unbuffered: bool, tmp_path: Path
) -> None:
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("".join(f"q{i} 0 x{i} 1\n" for i in range(N)))
    argv = ["trec-eval", "-q", "-m", "P.1", str(qrels), runs[0]]
    whole = _ef(argv, unbuffered)
    out, err = whole.communicate(timeout=60)
    assert (whole.returncode, err, len(out.splitlines())) == (0, b"", N + 1)  # one line a query, then 'all'
    assert out.splitlines()[-1] == b"P_1                   \tall\t1.0000"
    early = _ef(argv, unbuffered)
    assert early.stdout is not None
    assert early.stderr is not None
    assert early.stdout.read(3) == b"P_1"
    early.stdout.close()
    assert (early.wait(timeout=60), early.stderr.read()) == (141, b"")
    early.stderr.close()
