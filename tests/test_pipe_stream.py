"""Issue 36: a pipe (``-``, ``/dev/fd/N``, ``<(zcat run.gz)``) is scored window by window as a file
is, kept in an anonymous temporary file past the first window to be read again; a run whose queries
are scattered (file or pipe) is dealt by query id into parts ranked one at a time, never held whole
unless it is small; every number and every error as the same bytes, grouped or held whole, give."""

from __future__ import annotations

import contextlib
import errno
import gzip
import os
import random
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.evaluation import _hits, _kernel, _reference, evaluate_run
from ef.evaluation.scoring import load_run_and_qrels, score_run
from ef.trec import read_run

pytestmark = pytest.mark.skipif(not os.path.isdir("/dev/fd"), reason="pipes are named /dev/fd/N here")

MEASURES = ["ndcg@10", "map", "mrr", "P_5", "recall_100", "bpref", "num_ret", "num_rel_ret"]


def _lines(n_queries: int, n_docs: int, seed: int = 1) -> tuple[list[str], dict[str, dict[str, int]]]:
    """A grouped run's lines (ties and an unjudged query among them) and its qrels."""
    rng = random.Random(seed)
    lines = [
        f"q{q} Q0 d{rng.randrange(10**6)}x{i} {i + 1} {rng.randint(0, 9) / 4} run{q % 3}\n"
        for q in range(n_queries)
        for i in range(n_docs)
    ]
    qrels = {
        f"q{q}": {lines[q * n_docs + i].split()[2]: rng.randint(-1, 2) for i in range(0, min(n_docs, 9), 2)}
        for q in range(n_queries)
    }
    qrels["unrun"] = {"dx": 1}
    return lines, qrels


def _scored(run: Any, qrels: Any) -> tuple[Any, ...]:
    """What `score_run` gives for `run` (a path or a run already read), comparable."""
    scores = score_run(run, qrels, MEASURES)
    return scores.means(), scores.per_query(), scores.run_id


@contextlib.contextmanager
def _piped(data: bytes) -> Iterator[str]:
    """`data` written into a real pipe by another thread, named as bash's ``<(...)`` names it."""
    read, write = os.pipe()

    def writer() -> None:
        with os.fdopen(write, "wb") as out:
            out.write(data)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        yield f"/dev/fd/{read}"
    finally:
        while os.read(read, 1 << 16):  # what a failed reading left, so the writer can finish
            pass
        os.close(read)
        thread.join()


def _file(tmp_path: Path, data: bytes) -> str:
    path = tmp_path / "run.txt"
    path.write_bytes(data)
    return str(path)


def _spy_on_feeds(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of every buffer given to the kernel's Ranker.feed from now on, in order."""
    fed: list[int] = []
    real = _hits.engine.Ranker

    class Spy:
        def __init__(self, *args: Any) -> None:
            self._ranker = real(*args)

        def feed(self, data: Any, final: bool, group: bool) -> Any:
            fed.append(len(data))
            return self._ranker.feed(data, final, group)

        def __getattr__(self, name: str) -> Any:
            return getattr(self._ranker, name)

    monkeypatch.setattr(_hits.engine, "Ranker", Spy)
    return fed


def _fails_alike(path: str, data: bytes, qrels: dict[str, dict[str, int]], line: int, problem: str) -> None:
    """The file at `path` and the same `data` through a pipe fail with one message, at `line`."""
    with pytest.raises(ValueError) as from_file:
        evaluate_run(path, qrels)
    assert str(from_file.value) == f"{path}:{line}: {problem}"
    with _piped(data) as name, pytest.raises(ValueError) as from_pipe:
        evaluate_run(name, qrels)
    assert str(from_pipe.value) == f"{name}:{line}: {problem}"


@pytest.fixture
def small_window(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(_hits, "_WINDOW", 1 << 10)
    return 1 << 10


def test_a_grouped_pipe_scores_as_its_file_window_by_window(tmp_path: Path, small_window: int) -> None:
    lines, qrels = _lines(60, 30)
    data = "".join(lines).encode()
    assert len(data) > 40 * small_window
    expected = _scored(_file(tmp_path, data), qrels)
    assert expected[2] == "run2"  # the last line's
    with _piped(data) as name:
        run, judged = load_run_and_qrels(name, qrels)
        assert isinstance(run, _hits.RunBytes)
        assert run.name == name
        assert _scored(run, judged) == expected
        assert run.pipe._spool is not None  # past the first window: on disk
        assert not run.pipe._kept
        # Read again from what was kept: a second scoring (as `ef trec-eval -J` does) and the whole run.
        assert _scored(run, judged) == expected
        assert run.to_dict() == read_run(_file(tmp_path, data))


def test_a_small_pipe_stays_in_memory(tmp_path: Path) -> None:
    lines, qrels = _lines(3, 4)
    data = b"\xef\xbb\xbf" + "".join(lines).encode()  # the byte-order mark is dropped, once
    with _piped(data) as name:
        run, judged = load_run_and_qrels(name, qrels)
        assert isinstance(run, _hits.RunBytes)
        assert _scored(run, judged) == _scored(_file(tmp_path, data), qrels)
        assert run.pipe._spool is None
        assert bytes(run.pipe._kept) == data[3:]


def test_an_ungrouped_pipe_scores_as_its_file(tmp_path: Path, small_window: int) -> None:
    lines, qrels = _lines(40, 20)
    random.Random(5).shuffle(lines)
    data = b"\xef\xbb\xbf" + "".join(lines).encode()
    expected = evaluate_run(_file(tmp_path, data), qrels, MEASURES)
    with _piped(data) as name:
        assert evaluate_run(name, qrels, MEASURES) == expected
    with _piped(data) as name:
        run, judged = load_run_and_qrels(name, qrels)
        assert _scored(run, judged) == _scored(_file(tmp_path, data), qrels)
        assert _scored(run, judged) == _scored(_file(tmp_path, data), qrels)
        assert run.to_dict() == read_run(_file(tmp_path, data))  # type: ignore[union-attr]


def test_to_dict_before_scoring_reads_the_pipe_once_and_scores_from_what_it_kept(
    tmp_path: Path, small_window: int
) -> None:
    lines, qrels = _lines(30, 10)
    data = "".join(lines).encode()
    with _piped(data) as name:
        run, judged = load_run_and_qrels(name, qrels)
        assert run.to_dict() == read_run(_file(tmp_path, data))  # type: ignore[union-attr]
        assert _scored(run, judged) == _scored(_file(tmp_path, data), qrels)


@pytest.mark.parametrize(
    ("at", "line", "problem"),
    [
        (1502, "q50 Q0 dz 1 1.5x r", "score '1.5x' is not a number"),
        (1502, "q50 Q0 dz 1 r", "expected 6 columns 'query_id iter doc_id rank score run_id', got 5"),
        (1502, None, "doc id 'DUP' appears twice in query 'q50' (first at line 1502)"),
        (1502, "q3 Q0 dz 1 x r", "score 'x' is not a number"),  # q3 again: ungrouped, then the fault
    ],
)
def test_a_fault_late_in_a_pipe_names_the_line_as_the_file_does(
    tmp_path: Path, small_window: int, at: int, line: str | None, problem: str
) -> None:
    lines, qrels = _lines(60, 30)
    if line is None:
        lines[at - 1] = lines[at] = "q50 Q0 DUP 1 1 r\n"
    else:
        lines.insert(at - 1, line + "\n")
    data = "".join(lines).encode()
    assert len("".join(lines[: at - 1]).encode()) > 40 * small_window  # many windows before it
    _fails_alike(_file(tmp_path, data), data, qrels, at + 1 if line is None else at, problem)


def test_a_gzip_pipe_and_a_truncated_one(tmp_path: Path, small_window: int) -> None:
    lines, qrels = _lines(50, 20)
    data = "".join(lines).encode()
    expected = evaluate_run(_file(tmp_path, data), qrels, MEASURES)
    packed = gzip.compress(data)
    with _piped(packed) as name:
        assert evaluate_run(name, qrels, MEASURES) == expected
    with _piped(packed[: len(packed) // 2]) as name, pytest.raises(ValueError) as info:
        evaluate_run(name, qrels, MEASURES)
    assert str(info.value) == f"{name}: truncated gzip stream"


def test_a_long_grouped_pipe_is_held_a_few_windows_at_a_time(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The size of what the kernel is given at once, not a timing: a window is 32 KiB here, the run 1.9 MB.
    window = 1 << 15
    monkeypatch.setattr(_hits, "_WINDOW", window)
    lines, qrels = _lines(2000, 30)
    data = "".join(lines).encode()
    assert len(data) > 50 * window
    expected = _scored(_file(tmp_path, data), qrels)
    fed = _spy_on_feeds(monkeypatch)
    with _piped(data) as name:
        run, judged = load_run_and_qrels(name, qrels)
        assert _scored(run, judged) == expected
        spool = run.pipe._spool  # type: ignore[union-attr]
        assert len(run.pipe._kept) == 0  # type: ignore[union-attr]
        assert os.fstat(spool.fileno()).st_size == len(data)
    assert max(fed) < 3 * window
    assert len(fed) > 50
    fed.clear()
    lines[-1] = lines[0].replace("x0 ", "y0 ")  # q0 again at the end: scattered, so ranked whole
    with _piped("".join(lines).encode()) as name:
        evaluate_run(name, qrels, MEASURES)
    assert max(fed) == len("".join(lines).encode())


def _ef(*args: str, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "ef", "trec-eval", *args], input=stdin, capture_output=True)


def test_standard_input_through_the_cli_scores_as_the_file(tmp_path: Path) -> None:
    # Past the real window (4 MiB): kept on disk, and -J reads it twice (the run id, then the scores).
    lines, qrels = _lines(5000, 30)
    data = "".join(lines).encode()
    assert len(data) > _hits._WINDOW
    path = _file(tmp_path, data)
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    qrels_path = str(tmp_path / "qrels")
    for options in (["-q", "-m", "map", "-m", "P.5", "-m", "runid"], ["-J", "-m", "ndcg_cut.10"]):
        from_file = _ef(*options, qrels_path, path, stdin=b"")
        assert from_file.returncode == 0
        assert from_file.stdout.count(b"\n") > (10 if "-q" in options else 0)
        for stdin in (data, gzip.compress(data, 1)):
            from_stdin = _ef(*options, qrels_path, "-", stdin=stdin)
            assert (from_stdin.returncode, from_stdin.stdout) == (0, from_file.stdout)
    lines.insert(80_000, "q2666 Q0 dz 1 0.5abc r\n")
    bad = "".join(lines).encode()
    failed = _ef(qrels_path, "-", stdin=bad)
    assert (failed.returncode, failed.stdout) == (2, b"")
    assert failed.stderr.decode() == "ef trec-eval: error: <stdin>:80001: score '0.5abc' is not a number\n"


def test_a_spool_that_cannot_be_written_is_named_and_the_run_is_refused_after(
    tmp_path: Path, small_window: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(tempfile, "TemporaryFile", full)
    lines, qrels = _lines(40, 20)
    expected = (
        f"cannot keep the run read from this pipe in {tempfile.gettempdir()} (No space left on device); "
        "set TMPDIR to a folder with room, or pass the run as a file"
    )
    with _piped("".join(lines).encode()) as name:
        run, judged = load_run_and_qrels(name, qrels)
        for _ in range(2):  # bytes were lost: a second reading is refused too, never scored short
            with pytest.raises(OSError) as info:
                score_run(run, judged, MEASURES)
            assert str(info.value) == f"{name}: {expected}"


# --- scattered runs larger than a part: dealt by query id into parts, each ranked alone --------


@pytest.fixture
def small_parts(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(_hits, "_WINDOW", 1 << 12)
    monkeypatch.setattr(_hits, "_PART", 1 << 14)
    return 1 << 14


def _scattered(n_queries: int, n_docs: int, seed: int = 7) -> tuple[list[str], dict[str, dict[str, int]]]:
    lines, qrels = _lines(n_queries, n_docs)
    random.Random(seed).shuffle(lines)
    return lines, qrels


def test_a_scattered_run_dealt_into_parts_scores_as_held_whole(
    tmp_path: Path, small_parts: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    lines, qrels = _scattered(300, 25)
    lines.insert(100, "# a comment\n")
    lines.insert(200, "   \n")
    data = b"\xef\xbb\xbf" + "".join(lines).rstrip("\n").encode()  # a BOM, and no newline at the end
    assert len(data) > 10 * small_parts
    path = _file(tmp_path, data)
    dealt = _scored(path, qrels)
    run_ids = {line.split()[5] for line in lines if line.strip() and not line.startswith("#")}
    assert dealt[2] == lines[-1].split()[5]
    assert len(run_ids) == 3  # the last line's run id, of three
    for depth in (None, 7):
        in_parts = evaluate_run(path, qrels, MEASURES, max_docs=depth)
        with _piped(data) as name:
            assert evaluate_run(name, qrels, MEASURES, max_docs=depth) == in_parts
        monkeypatch.setattr(_hits, "_PART", 1 << 40)  # one part: the run held whole
        assert evaluate_run(path, qrels, MEASURES, max_docs=depth) == in_parts
        assert _scored(path, qrels) == dealt
        monkeypatch.setattr(_hits, "_PART", small_parts)


def test_a_scattered_run_is_held_one_part_at_a_time(
    tmp_path: Path, small_parts: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What the kernel is given at once, not a timing: parts of ~16 KiB, the run ~260 KB.
    lines, qrels = _scattered(400, 25)
    data = "".join(lines).encode()
    fed = _spy_on_feeds(monkeypatch)
    evaluate_run(_file(tmp_path, data), qrels, MEASURES)
    parts = -(-len(data) // small_parts)
    assert len(fed) > parts  # the windows until the run shows scattered, then one feed per part
    assert max(fed) < 3 * small_parts


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("q5 Q0 dx 1 0.5abc r", "score '0.5abc' is not a number"),
        ("q5 Q0 dx 1", "expected 6 columns 'query_id iter doc_id rank score run_id', got 4"),
        (None, "doc id 'DUP' appears twice in query 'q50' (first at line 3001)"),
    ],
)
def test_a_fault_in_a_dealt_run_names_its_line_as_held_whole(
    tmp_path: Path, small_parts: int, line: str | None, problem: str
) -> None:
    lines, qrels = _scattered(300, 25)
    at = 6000
    if line is None:
        lines[3000] = "q50 Q0 DUP 1 1 r\n"
        lines[at - 1] = "q50 Q0 DUP 2 1 r\n"
    else:
        lines.insert(at - 1, line + "\n")
    data = "".join(lines).encode()
    _fails_alike(_file(tmp_path, data), data, qrels, at, problem)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.sampled_from(["q1", "q2", "q10", "é", "q\x01"]), st.integers(0, 5)).map(
                lambda t: f"{t[0]} Q0 d{t[1]} 1 {t[1] / 2} r"
            ),
            st.sampled_from(["", "  ", "# note", "q1 Q0 d1", "q1 Q0 d1 1 x r", "\tq2 Q0 d9 1 1 r\r"]),
        ),
        max_size=30,
    ),
    st.integers(1, 5),
    st.booleans(),
)
def test_deal_keeps_each_query_in_one_part_in_file_order(lines: list[str], parts: int, final: bool) -> None:
    data = "\n".join(lines).encode()
    for engine in (_kernel, _reference):
        dealt, used, last = engine.deal(data, parts, final)
        assert used == (len(data) if final else data.rfind(b"\n") + 1)
        assert len(dealt) == parts
        assert all(not chunk or chunk.endswith(b"\n") for chunk in dealt)  # an unended last line gains one
        every = data[:used].split(b"\n")[: -1 if data[:used].endswith(b"\n") or not used else None]
        part_of: dict[bytes, int] = {}
        for k, chunk in enumerate(dealt):
            for line in chunk.split(b"\n")[:-1]:
                fields = line.split()
                assert part_of.setdefault(fields[0] if fields else b"", k) == k  # a query: one part
        assert sorted(line for chunk in dealt for line in chunk.split(b"\n")[:-1]) == sorted(every)
        for k, chunk in enumerate(dealt):  # file order within a part
            assert chunk.split(b"\n")[:-1] == [line for line in every if part_of[(line.split() or [b""])[0]] == k]
        data_lines = [line for line in every if line.split() and not line.split()[0].startswith(b"#")]
        assert last == (part_of[data_lines[-1].split()[0]] if data_lines else -1)


def test_a_scattered_run_keeps_its_parts_in_one_temporary_file(
    tmp_path: Path, small_parts: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # One descriptor however many parts (a shuffled run of gigabytes has hundreds).
    lines, qrels = _scattered(300, 25)
    path = _file(tmp_path, "".join(lines).encode())
    made: list[Any] = []
    real = tempfile.TemporaryFile

    def counted(*args: Any, **kwargs: Any) -> Any:
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(tempfile, "TemporaryFile", counted)
    expected = evaluate_run(path, qrels, MEASURES)
    assert len(made) == 1
    assert made[0].closed
    monkeypatch.setattr(_hits, "_PART", 1 << 40)
    assert evaluate_run(path, qrels, MEASURES) == expected


@pytest.mark.parametrize("where", ["open", "write"])
def test_a_temporary_folder_without_room_is_named_with_the_run(
    tmp_path: Path, small_parts: int, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    lines, qrels = _scattered(300, 25)
    path = _file(tmp_path, "".join(lines).encode())
    real = tempfile.TemporaryFile

    class Full:
        def __init__(self) -> None:
            self._file = real()

        def write(self, data: bytes) -> int:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        def __getattr__(self, name: str) -> Any:
            return getattr(self._file, name)

        def __enter__(self) -> Any:
            return self

        def __exit__(self, *exc: object) -> None:
            self._file.close()

    def full(*args: Any, **kwargs: Any) -> Any:
        if where == "open":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return Full()

    monkeypatch.setattr(tempfile, "TemporaryFile", full)
    with pytest.raises(OSError) as raised:
        evaluate_run(path, qrels, MEASURES)
    assert str(raised.value) == (
        f"{path}: cannot keep the parts of this run, whose queries' lines are scattered, in "
        f"{tempfile.gettempdir()} (No space left on device); set TMPDIR to a folder with room, or "
        "group the run by query first (sort -s -k1,1)"
    )


def test_a_gzip_run_is_dealt_by_what_it_holds_not_its_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A run compresses 10-30x: guessing 4x its size would make each part several times too large.
    lines, qrels = _scattered(300, 25)
    data = "".join(line.replace(" run", " bm25-k1-0.9-b-0.4-rm3-" * 4 + "run") for line in lines).encode()
    path = tmp_path / "run.gz"
    path.write_bytes(gzip.compress(data))
    assert 4 * path.stat().st_size < len(data)
    with open(path, "rb") as raw, gzip.GzipFile(fileobj=raw) as stream:
        read, size = _hits._again(stream, str(path))  # type: ignore[arg-type]
        assert size == len(data)
        assert read(-1) == data
    monkeypatch.setattr(_hits, "_PART", 1 << 14)
    dealt: list[int] = []
    real = _hits._rank_parts
    monkeypatch.setattr(_hits, "_rank_parts", lambda name, read, parts, *rest: dealt.append(parts) or real(
        name, read, parts, *rest))
    expected = evaluate_run(_file(tmp_path, data), qrels, MEASURES)
    assert evaluate_run(str(path), qrels, MEASURES) == expected
    assert dealt == [-(-len(data) // (1 << 14))] * 2
