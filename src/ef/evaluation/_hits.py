"""The one door to the run engine: a run and its qrels in, the :class:`~ef.measures.bulk.HitTable` out.

A run is a TREC file (a path: read once, through one descriptor, window by window of whole
query groups), a pipe or standard input (read once, window by window too, and kept for a second
reading), ``{query_id: {doc_id: score}}`` or a :class:`~ef.io.ranked.RankedRun` (ranked already).
The compiled kernel (``_kernel.c``) tokenises, checks and ranks it with trec_eval's order (score
descending, then doc id descending byte-wise); this module only opens files, words the kernel's
faults as ``file:line: ...`` errors, validates grades and assembles the table. ``_reference.py``
is the same engine in plain Python: the tests' oracle, and the fallback when the extension
cannot be imported.

>>> table, evaluated, run_id = hit_table({"q1": {"d1": 0.5, "d2": 0.5}}, {"q1": {"d1": 1}}, ["q1"])
>>> evaluated, table.hit_rank.tolist()  # the tie goes to the greater id, "d2"
(['q1'], [1])
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
import numbers
import os
import stat
import struct
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import IO, Any

import numpy as np
import numpy.typing as npt

from ef.evaluation._engine import engine
from ef.io._source import BOM, Source, Spooled, display_name, open_binary, read_bytes
from ef.io._source import reread as _again
from ef.io.numbers import IS_NAN, NOT_A_NUMBER
from ef.io.ranked import RankedRun
from ef.measures.bulk import HitTable

__all__ = ["RunBytes", "RunFile", "hit_table", "open_run", "parse_run", "read_run"]

Run = Mapping[str, Mapping[str, float]]
_WINDOW = 1 << 22  # bytes read at a time: a few MiB keeps memory flat and numpy-free reading fast


@dataclass(frozen=True)
class RunFile:
    """A run file on disk (plain or gzip), scored streaming when its queries are grouped."""

    path: str

    def to_dict(self) -> dict[str, dict[str, float]]:
        """The whole run in memory (for a report that shows every ranking)."""
        return read_run(self.path)


@dataclass(frozen=True)
class RunBytes:
    """A run from a pipe or standard input: its bytes read once, window by window as it is scored,
    and kept (in a temporary file past the first window) to be read again."""

    name: str
    pipe: Spooled

    def to_dict(self) -> dict[str, dict[str, float]]:
        return parse_run(self.name, self.pipe.whole())


def open_run(source: Source) -> RunFile | RunBytes:
    """`source` ready to score: a regular file is only named, a pipe opened; either is read when scored."""
    name = os.fspath(source)
    if name != "-" and os.path.isfile(name):
        return RunFile(name)
    pipe = Spooled(source, _WINDOW)
    return RunBytes(pipe.name, pipe)


def read_run(path: Source) -> dict[str, dict[str, float]]:
    """Read a TREC run file into ``{query_id: {doc_id: score}}``.

    Parameters
    ----------
    path
        The run file, or ``-`` for standard input; plain or gzip-compressed, a file or a pipe.

    Returns
    -------
    dict
        Queries in the order they first appear; each query's documents in file order.

    Raises
    ------
    ValueError
        ``file:line: ...`` for a line with fewer than 6 columns, a score that is not a number,
        is NaN or is beyond a double's range, a doc id listed twice for one query, a NUL byte,
        or a query or doc id that is not UTF-8.
    OSError
        If the file cannot be read.
    """
    return parse_run(display_name(path), read_bytes(path))


def parse_run(name: str, data: bytes | bytearray) -> dict[str, dict[str, float]]:
    """A run's bytes, read whole, as :func:`read_run`'s mapping; its errors name `name`."""
    return _checked(name, data, engine.read_run(data))  # type: ignore[no-any-return]


# --- faults -----------------------------------------------------------------------------------


def _checked(name: str, data: bytes | bytearray, got: Any) -> Any:
    """`got`, or the error that its fault tuple describes."""
    if isinstance(got, tuple):
        raise _error(name, data, got)
    return got


def _error(name: str, data: bytes | bytearray, fault: tuple[Any, ...]) -> ValueError:
    kind, line = fault[0], fault[1]
    where = f"{name}:{line}"
    if kind == "nul":
        return ValueError(f"{where}: a NUL byte (trec_eval stops reading a file there)")
    if kind == "cr":
        return ValueError(f"{where}: a carriage return ('\\r') inside a line; line ends must be '\\n' or '\\r\\n'")
    if kind == "columns":
        return ValueError(f"{where}: expected 6 columns 'query_id iter doc_id rank score run_id', got {fault[2]}")
    if kind == "score":
        shown = bytes(data[fault[3] : fault[4]]).decode(errors="replace")
        problem = {NOT_A_NUMBER: f"score {shown!r} is not a number", IS_NAN: "score is NaN"}.get(
            fault[2], f"score {shown!r} is beyond the range of a double"
        )
        return ValueError(f"{where}: {problem}")
    if kind == "utf8":
        field = bytes(data[fault[2] : fault[3]])
        try:
            field.decode()
            bad = field
        except UnicodeDecodeError as error:
            bad = field[error.start : error.end]
        return ValueError(f"{where}: {bad!r} is not valid UTF-8")
    if kind == "twice":
        doc_id = bytes(data[fault[3] : fault[4]])
        query_id = bytes(data[fault[5] : fault[6]])
        first = fault[2] or _first_line(data, query_id, doc_id)
        return ValueError(
            f"{where}: doc id {doc_id.decode(errors='replace')!r} appears twice in query "
            f"{query_id.decode(errors='replace')!r} (first at line {first})"
        )
    return ValueError(f"{where}: {kind}")


def _first_line(data: bytes | bytearray, query_id: bytes, doc_id: bytes) -> int:
    """The line where `doc_id` first appears in `query_id` (an error's detail, found only then)."""
    for number, line in enumerate(bytes(data).split(b"\n"), start=1):
        fields = line.split()
        if len(fields) >= 3 and fields[0] == query_id and fields[2] == doc_id:
            return number
    return 0


# --- ranking ----------------------------------------------------------------------------------


def _rank_bytes(
    name: str, data: bytes | bytearray, judged: Any, max_docs: int, *, grouped: bool = True
) -> tuple[Any, ...]:
    """A run held whole: ranked query group by query group, or (`grouped` false, or when a query's
    lines turn out scattered) with its lines grouped by query first."""
    ranker = engine.Ranker(judged, max_docs)
    got = ranker.feed(data, True, not grouped)
    if isinstance(got, tuple) and got[0] == "ungrouped":
        ranker = engine.Ranker(judged, max_docs)
        got = ranker.feed(data, True, True)
    _checked(name, data, got)
    return ranker.result()


def _rank_file(path: str, judged: Any, max_docs: int) -> tuple[Any, ...]:
    """Stream `path` through the kernel, window by window; one descriptor for every read. A large
    plain file is ranked in two halves on two threads (:func:`_rank_halves`), and read again in
    one pass when a half has a fault: that pass gives the error, and the line, one pass gives."""
    name = display_name(path)
    with open_binary(path) as stream:
        again = functools.partial(_again, stream, name)  # from the first byte, BOM dropped
        if isinstance(stream, io.BufferedReader) and _CORES > 1 and hasattr(os, "pread"):  # not gzip: cut
            fd = stream.fileno()
            status = os.fstat(fd)
            cut = _cut(fd, status.st_size) if stat.S_ISREG(status.st_mode) and status.st_size >= 4 * _WINDOW else None
            got = None if cut is None else _rank_halves(name, fd, cut, again, judged, max_docs)
            if got is not None:
                return got
        read, _ = again()
        return _rank_stream(read, bytearray(), name, judged, max_docs, again)


def _rank_stream(
    read: Callable[[int], bytes],
    head: bytearray,
    name: str,
    judged: Any,
    max_docs: int,
    again: Callable[[], tuple[Callable[[int], bytes], int]],
) -> tuple[Any, ...]:
    """Rank `head` and what `read(n)` gives after it, window by window; when a query's lines turn
    out scattered, the run read `again()` from its first byte (:func:`_rank_scattered`)."""
    ranker, fault = _rank_windows(read, head, _WINDOW, judged, max_docs)
    if fault is None:
        result: tuple[Any, ...] = ranker.result()
        return result
    if fault[0][0] != "ungrouped":
        raise _error(name, fault[1], fault[0])
    head.clear()  # the window (`fault`'s, the same bytearray) goes first: memory holds the run once
    del fault, ranker
    return _rank_scattered(name, again, judged, max_docs)


_PART = 2 * _WINDOW  # the bytes a part of a scattered run holds, about: memory holds ~3x two parts


def _rank_scattered(
    name: str, again: Callable[[], tuple[Callable[[int], bytes], int]], judged: Any, max_docs: int
) -> tuple[Any, ...]:
    """A run whose queries' lines are scattered, read `again()` from its first byte: held whole and
    grouped by query when it is at most one part; larger, dealt by query id into parts (every line
    of a query in one part, in a temporary file) and each part grouped and ranked on its own (two
    at a time), so that memory holds two parts, not the run. On any fault the run is ranked whole, for the error
    (and line number) one pass over it gives."""
    read, size = again()
    if size > _PART:
        got = _rank_parts(name, read, -(-size // _PART), judged, max_docs)
        if got is not None:
            return got
        read, size = again()
    return _rank_bytes(name, bytearray(read(-1)), judged, max_docs, grouped=False)


def _rank_parts(
    name: str, read: Callable[[int], bytes], parts: int, judged: Any, max_docs: int
) -> tuple[Any, ...] | None:
    """The run `read(n)` gives dealt into `parts` and ranked part by part, the results joined as
    one pass gives them; None on a fault (a part's line numbers are not the run's). The parts go
    to one anonymous temporary file, each a list of (offset, length) segments of it."""
    segments: list[list[tuple[int, int]]] = [[] for _ in range(parts)]
    with _spool(name) as spool:
        data, last, end = bytearray(), -1, 0
        while True:
            more = read(_WINDOW)
            data += more
            lines, used, where = engine.deal(data, parts, not more)
            for k, chunk in enumerate(lines):
                if chunk:
                    _keep(name, spool, chunk)
                    segments[k].append((end, len(chunk)))
                    end += len(chunk)
            last = where if where >= 0 else last
            del data[:used]
            if not more:
                break
        _keep(name, spool, b"")  # flushed, for the reads below
        lock = threading.Lock()

        def part(k: int) -> bytes:
            with lock:  # one file position for both threads (a part is read in ~1 ms, ranked in ~50)
                return b"".join(_read_at(spool, at, n) for at, n in segments[k])

        def rank(k: int) -> tuple[Any, ...] | None:
            """Part k's hits, and num_ret where it has them: the parts' results are held together,
            and a num_ret per judged query each would be parts x the qrels."""
            ranker = engine.Ranker(judged, max_docs)
            if isinstance(ranker.feed(part(k), True, True), tuple):
                return None
            num_ret, *hits, run_id = ranker.result()
            counts = _ints(num_ret)
            present = np.flatnonzero(counts >= 0)
            return len(counts), present, counts[present], *hits, run_id

        ranked = _two_at_a_time(rank, parts)
    results = [result for result in ranked if result is not None]
    if len(results) < parts:
        return None
    # Each query is in one part; the table sorts the hits itself.
    num_ret = np.full(results[0][0], -1, dtype=np.int64)
    for _, present, counts, *_ in results:
        num_ret[present] = counts
    return (
        num_ret.tobytes(), *(b"".join(r[k] for r in results) for k in (3, 4, 5)),
        results[last][6] if last >= 0 else None,
    )


def _two_at_a_time(job: Callable[[int], Any], count: int) -> list[Any]:
    """``[job(0), ..., job(count - 1)]``, two at a time where there are two cores: on this thread
    and one other (the kernel releases the GIL); the first error is raised once both are done."""
    results: list[Any] = [None] * count
    jobs, errors = iter(range(count)), []  # a range iterator hands each k to one thread

    def work() -> None:
        try:
            for k in jobs:
                results[k] = job(k)
        except BaseException as error:  # raised below, on the caller's thread
            errors.append(error)

    other = threading.Thread(target=work) if _CORES > 1 and count > 1 else None
    if other is not None:
        other.start()
    work()
    if other is not None:
        other.join()
    if errors:
        raise errors[0]
    return results


def _read_at(stream: IO[bytes], at: int, size: int) -> bytes:
    stream.seek(at)
    return stream.read(size)


@contextlib.contextmanager
def _spool(name: str) -> Iterator[IO[bytes]]:
    """An anonymous temporary file (unlinked at once) for a scattered run's parts."""
    try:
        spool = tempfile.TemporaryFile()  # noqa: SIM115  # closed below
    except OSError as error:
        raise _no_room(name, error) from error
    with spool:
        yield spool


def _keep(name: str, spool: IO[bytes], chunk: bytes) -> None:
    """`chunk` written to the end of `spool` (flushed when empty), or the error that names the run."""
    try:
        if chunk:
            spool.write(chunk)
        else:
            spool.flush()
    except OSError as error:
        raise _no_room(name, error) from error


def _no_room(name: str, error: OSError) -> OSError:
    return OSError(
        f"{name}: cannot keep the parts of this run, whose queries' lines are scattered, in "
        f"{tempfile.gettempdir()} ({error.strerror or error}); set TMPDIR to a folder with room, or "
        "group the run by query first (sort -s -k1,1)"
    )


def _rank_windows(
    read: Callable[[int], bytes], data: bytearray, window: int, judged: Any, max_docs: int
) -> tuple[Any, Any]:
    """Feed the kernel `data` and then what `read(n)` returns, window by window of whole query
    groups, until it returns nothing: (ranker, None) or (ranker, (fault, the window at fault))."""
    ranker = engine.Ranker(judged, max_docs)
    want = window
    while True:
        more = read(want)
        data += more
        final = not more
        got = ranker.feed(data, final, False)
        if isinstance(got, tuple):
            return ranker, (got, data)
        if final:
            return ranker, None
        # One query longer than what is held: read as much again (linear overall).
        want = window if got else max(window, len(data))
        del data[:got]


_CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _cut(fd: int, size: int) -> int | None:
    """The offset of a line near the middle of the file whose query id differs from the data line
    before it (the second half then starts a query), or None when one window finds none."""
    middle = size // 2
    block = os.pread(fd, _WINDOW, middle)
    at = block.find(b"\n") + 1
    previous = None
    while at:
        end = block.find(b"\n", at)
        if end < 0:
            return None
        fields = block[at:end].split(None, 1)  # bytes.split() splits on C isspace's six bytes
        if fields and not fields[0].startswith(b"#"):
            if previous is not None and fields[0] != previous:
                return middle + at
            previous = fields[0]
        at = end + 1
    return None


def _rank_range(fd: int, start: int, stop: int | None, judged: Any, max_docs: int) -> tuple[Any, Any]:
    """Rank bytes [start, stop) of `fd` (whole query groups; `stop` None: to the end, as one pass
    reads a file still growing), in half windows (two threads hold what one does)."""
    at = start

    def read(n: int) -> bytes:
        nonlocal at
        more = os.pread(fd, n if stop is None else min(n, stop - at), at)
        at += len(more)
        return more

    return _rank_windows(read, bytearray(), _WINDOW // 2, judged, max_docs)


def _rank_halves(
    name: str, fd: int, cut: int, again: Callable[[], tuple[Callable[[int], bytes], int]], judged: Any, max_docs: int
) -> tuple[Any, ...] | None:
    """`fd` ranked as two halves cut at `cut`, on two threads (the kernel releases the GIL), joined
    as one pass's; a scattered run as :func:`_rank_scattered`; None on any other fault (a second
    half's line numbers are not the file's)."""
    start = len(BOM) if os.pread(fd, len(BOM), 0) == BOM else 0
    starts, stops = (start, cut), (cut, None)
    (one, one_fault), (two, two_fault) = _two_at_a_time(
        lambda k: _rank_range(fd, starts[k], stops[k], judged, max_docs), 2
    )
    faults = {fault[0][0] for fault in (one_fault, two_fault) if fault is not None}
    if faults - {"ungrouped"}:
        return None
    if faults or two.shares_query(one):  # scattered, and one pass meets no fault before it knows
        return _rank_scattered(name, again, judged, max_docs)
    a, b = one.result(), two.result()
    num_ret = np.where(_ints(b[0]) >= 0, _ints(b[0]), _ints(a[0]))
    return num_ret.tobytes(), a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] if b[4] is None else b[4]


def _grades(qrels: Run, query_ids: list[str]) -> npt.NDArray[np.float64]:
    """Every grade of `query_ids`, flat, checked: a bool, a non-number, NaN or an infinity is named."""
    values = [grade for q in query_ids for grade in qrels[q].values()]
    if set(map(type, values)) <= {int, float}:
        try:
            grades = np.array(values, dtype=np.float64)
            if np.isfinite(grades).all():
                return grades
        except OverflowError:
            pass
    for query_id in query_ids:
        for grade in qrels[query_id].values():
            problem = _grade_problem(grade)
            if problem:
                raise ValueError(f"qrels: a grade of query {query_id!r} {problem}")
    return np.array(values, dtype=np.float64)


def _grade_problem(grade: object) -> str | None:
    if isinstance(grade, bool | np.bool_) or not isinstance(grade, numbers.Real):
        return f"is not a number (got {grade!r})"
    try:
        value = float(grade)
    except OverflowError:
        return f"is not finite (got {grade!r})"
    if value != value:
        return "is NaN"
    if math.isinf(value):
        return f"is not finite (got {grade!r})"
    return None


def _score_problem(score: object) -> str | None:
    """Why a run score is refused, or ``None``: a bool, what cannot be read as a double, NaN, or a
    finite number whose nearest double is infinite (an infinity itself is taken)."""
    if isinstance(score, bool | np.bool_):
        return f"is not a number (got {score!r})"
    try:
        (value,) = struct.unpack("d", struct.pack("d", score))
    except (struct.error, ArithmeticError, TypeError, ValueError):
        if isinstance(score, numbers.Number):
            try:
                float(score)  # type: ignore[arg-type]
            except OverflowError:
                return "is beyond the range of a double"
            except (ArithmeticError, TypeError, ValueError):
                pass
        return f"is not a number (got {score!r})"
    if value != value:
        return "is NaN"
    if math.isinf(value) and score != value:  # a Decimal, a long double ... that overflowed
        return "is beyond the range of a double"
    return None


def _convert(query_id: str, doc_id: str, score: object) -> float:
    """A score that is not a plain float or int, as a double (numpy's, Decimal ...), or the error."""
    problem = _score_problem(score)
    if problem:
        raise ValueError(f"run: score of doc {doc_id!r} in query {query_id!r} {problem}")
    return float(struct.unpack("d", struct.pack("d", score))[0])


def _bad_doc(query_id: str, doc_id: object) -> None:
    raise TypeError(f"'run[{query_id!r}]' has a doc id that is not a str: {doc_id!r} ({type(doc_id).__name__})")


def _dicts(value: Run) -> dict[str, dict[str, Any]]:
    """`value` as a dict of dicts (what the kernel iterates); dicts pass as they are."""
    if type(value) is dict and set(map(type, value.values())) <= {dict}:  # one pass in C
        return value
    return {q: v if type(v) is dict else dict(v) for q, v in value.items()}


def _ints(data: bytes) -> npt.NDArray[np.int64]:
    return np.frombuffer(data, dtype=np.int64)


def hit_table(
    run: Run | RankedRun | RunFile | RunBytes,
    qrels: Run,
    query_ids: list[str],
    *,
    missing: str = "zero",
    max_docs: int | None = None,
    relevance_level: float = 1,
) -> tuple[HitTable, list[str], str]:
    """The hit table of `run` against `qrels` over `query_ids` (judged queries, trec_eval's order).

    Returns the table, the evaluated query ids (its rows: those of the run, and with
    ``missing="zero"`` the others too, retrieving nothing) and the run id (a file's last line's).
    """
    depth = -1 if max_docs is None else max_docs
    if isinstance(run, RunFile | RunBytes):
        judged = engine.Judged(query_ids, [list(qrels[q]) for q in query_ids])
        if isinstance(run, RunFile):
            num_ret, hit_query, hit_rank, hit_judgement, run_id = _rank_file(run.path, judged, depth)
        else:
            read = run.pipe.reader()
            ranked = _rank_stream(read, bytearray(read(_WINDOW)), run.name, judged, depth, run.pipe.again)
            num_ret, hit_query, hit_rank, hit_judgement, run_id = ranked
        if run_id is None:  # not one ranking line (the run id is the last one's): as trec_eval, refused
            raise ValueError(f"{display_name(run.path) if isinstance(run, RunFile) else run.name}: the run holds no "
                             "ranking line (it would score 0 on every query)")
        retrieved = _ints(num_ret)
        evaluated = retrieved >= 0 if missing == "skip" else np.ones(len(query_ids), dtype=bool)
        kept = [q for q, e in zip(query_ids, evaluated.tolist(), strict=True) if e]
        grades = _grades(qrels, kept)
        sizes = np.array([len(qrels[q]) for q in query_ids], dtype=np.int64)
        flat = np.zeros(int(sizes.sum()))
        flat[np.repeat(evaluated, sizes)] = grades
        hit_grade = flat[_ints(hit_judgement)]
        position = np.cumsum(evaluated) - 1
        hit_query_array = position[_ints(hit_query)]
        judged_sizes = sizes[evaluated]
        name = run_id.decode(errors="replace")  # a run with no ranking line was refused above
    else:
        kept = query_ids if missing == "zero" else [q for q in query_ids if q in run]
        grades = _grades(qrels, kept)
        plain_qrels = _dicts(qrels)
        if isinstance(run, RankedRun):  # ranked already (fused): a lookup an entry, no dicts
            index = {query_id: k for k, query_id in enumerate(run.queries)}
            ks = np.array([index.get(q, -1) for q in kept], dtype=np.int64)
            each = [plain_qrels[q] for q in kept]
            ranked = engine.rank_ranked(ks, run.bounds, run.ids, run.doc, each, depth)
        else:
            ranked = engine.rank_mapping(_dicts(run), plain_qrels, kept, depth, _convert, _bad_doc)
        num_ret, hit_query, hit_rank, grade_bytes = ranked
        retrieved = _ints(num_ret)
        evaluated = np.ones(len(kept), dtype=bool)
        hit_query_array = _ints(hit_query)
        hit_grade = np.frombuffer(grade_bytes, dtype=np.float64)
        judged_sizes = np.array([len(qrels[q]) for q in kept], dtype=np.int64)
        name = ""
    table = HitTable(
        num_ret=np.maximum(retrieved[evaluated], 0),
        hit_query=hit_query_array,
        hit_rank=_ints(hit_rank).copy(),
        hit_grade=hit_grade,
        judged_query=np.repeat(np.arange(len(kept), dtype=np.int64), judged_sizes),
        judged_grade=grades,
        relevance_level=float(relevance_level),
    )
    return table, kept, name
