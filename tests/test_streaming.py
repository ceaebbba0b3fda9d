"""A run file is scored streaming, window by window of whole query groups (issue 12).

The window is shrunk to a few hundred bytes here so that every file spans many windows; each
case must equal the same run scored as a dict, exactly, and the file's errors keep their line.
"""

from __future__ import annotations

import random
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ef.evaluation._run
import ef.io.trec
from ef.evaluation import evaluate_run
from ef.io.trec import iter_run_columns, read_run, write_qrels, write_run

MEASURES = ["ndcg@10", "map", "mrr", "P_5", "recall_100", "bpref", "num_ret", "num_rel_ret"]


@pytest.fixture
def tiny_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ef.io.trec, "_WINDOW", 256)
    # Small files are read on one thread; these take the threaded paths a large file takes.
    monkeypatch.setattr(ef.evaluation._run, "_BYTES_FOR_A_THREAD", 0)
    monkeypatch.setattr(ef.evaluation._run, "_ROWS_FOR_A_THREAD", 0)


def _case(seed: int, n_queries: int) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, int]]]:
    rng = random.Random(seed)
    run: dict[str, dict[str, float]] = {}
    qrels: dict[str, dict[str, int]] = {}
    for q in range(n_queries):
        docs = [f"d{rng.randrange(10**rng.randint(1, 6))}" for _ in range(rng.randint(1, 40))]
        scores = rng.choice([lambda: float(rng.randint(0, 3)), lambda: round(rng.random(), 1), rng.random])
        run[f"q{q}"] = {d: scores() for d in docs}
        qrels[f"q{q}"] = {d: rng.randint(-1, 2) for d in rng.sample(docs, min(len(docs), 4))}
    qrels["unrun"] = {"dx": 1}
    return run, qrels


@pytest.mark.usefixtures("tiny_window")
@given(seed=st.integers(0, 10**6), missing=st.sampled_from(["zero", "skip"]), max_docs=st.sampled_from([None, 5]))
@settings(max_examples=40, deadline=None)
def test_a_grouped_file_streamed_equals_the_dict(tmp_path_factory: pytest.TempPathFactory, seed: int, missing: str,
                                                 max_docs: int | None) -> None:
    run, qrels = _case(seed, 30)
    path = tmp_path_factory.mktemp("s") / "run.txt"
    write_run(path, run)
    assert len(list(iter_run_columns(path))) > 3  # many windows
    from_file = evaluate_run(path, qrels, MEASURES, missing=missing, max_docs=max_docs)  # type: ignore[arg-type]
    from_dict = evaluate_run(run, qrels, MEASURES, missing=missing, max_docs=max_docs)  # type: ignore[arg-type]
    assert from_file == from_dict


@pytest.mark.usefixtures("tiny_window")
def test_a_file_not_grouped_by_query_is_read_whole_and_scored_the_same(tmp_path: Path) -> None:
    run, qrels = _case(7, 30)
    lines = [f"{q} Q0 {d} 1 {s!r} r\n" for q, docs in run.items() for d, s in docs.items()]
    random.Random(3).shuffle(lines)
    path = tmp_path / "shuffled.txt"
    path.write_text("".join(lines))
    assert evaluate_run(path, qrels, MEASURES) == evaluate_run(run, qrels, MEASURES)


@pytest.mark.usefixtures("tiny_window")
def test_a_query_longer_than_a_window_stays_whole(tmp_path: Path) -> None:
    run = {"q1": {f"doc{i}": float(i % 7) for i in range(500)}, "q2": {"a": 1.0}}
    path = tmp_path / "run.txt"
    write_run(path, run)
    windows = [{q: len(c.rows(q)) if isinstance(c.rows(q), np.ndarray) else c.rows(q).stop - c.rows(q).start
                for q in c.segments} for c in iter_run_columns(path)]
    assert [q for w in windows for q in w] == [b"q1", b"q2"]  # each query in one window only
    assert {q: n for w in windows for q, n in w.items()} == {b"q1": 500, b"q2": 1}  # and whole
    qrels = {"q1": {"doc3": 1, "doc10": 2, "doc499": 1}, "q2": {"a": 1}}
    assert evaluate_run(path, qrels, MEASURES) == evaluate_run(run, qrels, MEASURES)


@pytest.mark.usefixtures("tiny_window")
def test_errors_name_the_line_of_the_whole_file(tmp_path: Path) -> None:
    run, _ = _case(1, 20)
    path = tmp_path / "run.txt"
    write_run(path, run)
    lines = path.read_text().splitlines(keepends=True)
    lines.insert(150, "q5 Q0 dz 1 1.5x r\n")
    path.write_text("".join(lines))
    with pytest.raises(ValueError, match=rf"^{path}:151: score '1.5x' is not a number"):
        evaluate_run(path, {"q5": {"dz": 1}})


@pytest.mark.usefixtures("tiny_window")
def test_a_duplicate_doc_is_found_in_a_later_window(tmp_path: Path) -> None:
    run, _ = _case(2, 20)
    path = tmp_path / "run.txt"
    write_run(path, run)
    with path.open("a") as handle:
        handle.write("zz Q0 d1 1 0.5 r\nzz Q0 d1 2 0.4 r\n")
    n = len(path.read_text().splitlines())
    message = rf"^{path}:{n}: doc id 'd1' appears twice in query 'zz' \(first at line {n - 1}\)"
    with pytest.raises(ValueError, match=message):
        evaluate_run(path, {"zz": {"d1": 1}})


@pytest.mark.usefixtures("tiny_window")
def test_the_run_id_is_the_last_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ef.cli import main

    path = tmp_path / "run.txt"
    path.write_text("".join(f"q{q} Q0 d{i} {i} {1 / (i + 1)} first\n" for q in range(20) for i in range(5))
                    + "q99 Q0 d1 1 1.0 last\n")
    qrels = tmp_path / "qrels.txt"
    write_qrels(qrels, {"q1": {"d1": 1}})
    assert main(["trec-eval", "-m", "official", str(qrels), str(path)]) == 0
    assert "runid                 \tall\tlast\n" in capsys.readouterr().out


def test_streaming_memory_does_not_grow_with_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Python-side peak memory (tracemalloc sees numpy's buffers) hardly grows for a file four times
    as long. Two windows are in flight (one read ahead), so a run's peak depends on how the threads
    meet: each file's peak is the least of two runs, and the bound leaves room for that jitter
    (1.25x seen). Reading the file whole gives 3.9x; keeping 16 bytes a line, 2.1x."""
    monkeypatch.setattr(ef.io.trec, "_WINDOW", 1 << 18)
    monkeypatch.setattr(ef.evaluation._run, "_BYTES_FOR_A_THREAD", 0)  # both files read ahead alike
    rng = np.random.default_rng(0)
    peaks, sizes = [], []
    for n_queries in (200, 800):
        path = tmp_path / f"run{n_queries}.txt"
        with path.open("w") as handle:
            for q in range(n_queries):
                scores = rng.integers(0, 5, 500).tolist()
                handle.write("".join(f"q{q:04d} Q0 doc{d} {d} {s} r\n" for d, s in enumerate(scores)))
        qrels = {f"q{q:04d}": {f"doc{d}": 1 for d in range(0, 500, 50)} for q in range(n_queries)}
        runs = []
        for _ in range(2):
            tracemalloc.start()
            report = evaluate_run(path, qrels, ["map"])
            runs.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
        peaks.append(min(runs))
        sizes.append(path.stat().st_size)
        assert report.n_queries == n_queries
        assert report == evaluate_run(read_run(path), qrels, ["map"])
    assert sizes[1] > 9_000_000
    assert peaks[1] < 2 * peaks[0], peaks
    assert peaks[1] < sizes[1], (peaks, sizes)


def test_a_file_whose_size_is_under_reported_is_read_in_few_windows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # procfs and some FUSE mounts report 0 bytes: the first window is then the smallest one and
    # the next ones are whole (not one byte at a time, re-reading what was carried).
    import os as os_module

    path = tmp_path / "run.txt"
    lines = "".join(f"q1 Q0 d{i} {i + 1} {1 / (i + 1)!r} r\n" for i in range(6000))  # ~190 KB, one query
    path.write_text(lines)
    real_fstat = os_module.fstat

    def fstat(fd: int) -> os_module.stat_result:
        status = list(real_fstat(fd))
        status[6] = 0  # st_size
        return os_module.stat_result(status)

    fills: list[int] = []
    real_fill = ef.io.trec._fill

    def fill(stream: object, view: memoryview, name: str) -> int:
        fills.append(len(view))
        return real_fill(stream, view, name)  # type: ignore[arg-type]

    monkeypatch.setattr(ef.io.trec.os, "fstat", fstat)
    monkeypatch.setattr(ef.io.trec, "_fill", fill)
    windows = list(iter_run_columns(path))
    assert [len(w) for w in windows] == [6000]
    assert fills == [1 << 16, ef.io.trec._WINDOW]
    assert read_run(path) == {"q1": {f"d{i}": 1 / (i + 1) for i in range(6000)}}  # read whole, too


@pytest.mark.parametrize("head", ["", "# a comment first\n"])
def test_a_query_longer_than_many_windows_is_tokenised_in_linear_work(
    head: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A window whose first and last lines are one query's waits for more, untokenised. When the
    # first line does not tell (a comment), the window is tokenised, carried whole and read again
    # with as much more as is carried, so the bytes tokenised stay within a few times the file.
    monkeypatch.setattr(ef.io.trec, "_WINDOW", 1 << 12)
    path = tmp_path / "run.txt"
    path.write_text(head + "".join(f"q1 Q0 d{i} {i + 1} {1 / (i + 1)!r} r\n" for i in range(20_000)))  # ~600 KB
    tokenised: list[int] = []
    real_columns = ef.io.trec._columns

    def columns(name: str, data: bytearray, *, hashed: bool = True) -> ef.io.trec.RunColumns:
        tokenised.append(len(data))
        return real_columns(name, data, hashed=hashed)

    monkeypatch.setattr(ef.io.trec, "_columns", columns)
    windows = list(iter_run_columns(path))
    assert [len(w) for w in windows] == [20_000]
    if head:
        assert len(tokenised) <= 10  # doubling from 4 KiB (it was 206 passes, one per window)
        assert sum(tokenised) <= 3 * path.stat().st_size
    else:
        assert len(tokenised) == 1
