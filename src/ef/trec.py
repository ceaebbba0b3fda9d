"""TREC run and qrels files: strict readers and atomic writers, plain or gzip (by the ``.gz`` suffix).

A run file has one retrieved document per line, ``query_id iter doc_id rank score run_id``
(whitespace-separated; the ``iter`` and ``rank`` columns are ignored, as trec_eval ignores them,
and so are columns after the sixth). A qrels file has one judgement per line,
``query_id iter doc_id grade``; :func:`read_qrels` also reads BEIR's ``qrels/*.tsv``
(``query-id  corpus-id  score``, with or without its header row).

Every problem is an error naming ``file:line`` and what is wrong: a line with too few columns, a
score that is not a number or is NaN, a grade that is not a number, a doc id twice in one query.
Nothing is skipped except blank lines.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "run.txt")
>>> write_run(path, {"q1": {"d1": 0.5, "d2": 1.5}})
>>> print(open(path).read(), end="")
q1 Q0 d2 1 1.5 ef
q1 Q0 d1 2 0.5 ef
>>> read_run(path)
{'q1': {'d2': 1.5, 'd1': 0.5}}
"""

from __future__ import annotations

import gzip
import itertools
import math
import os
import re
import zlib
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ef.io.atomic import atomic_writer

__all__ = ["read_qrels", "read_run", "write_qrels", "write_run"]

PathLike = str | os.PathLike[str]

_PAD = 64  # zero bytes after the data, so fixed-width windows never run off the buffer
_CHUNK = 1 << 23  # bytes per tokenising chunk: big enough to amortise, small enough for cache
_MAX_FIELD = 256  # fields longer than this take the line-by-line path
_SAFE_DIGITS = 15  # decimal mantissas this short convert exactly: m / 10**k is correctly rounded


# --- reading ---------------------------------------------------------------------------------


def _read_bytes(path: PathLike) -> bytes:
    with open(path, "rb") as handle:
        if os.fspath(path).endswith(".gz"):
            try:
                with gzip.GzipFile(fileobj=handle) as unzipped:
                    return unzipped.read()
            except (EOFError, zlib.error, gzip.BadGzipFile) as error:
                raise ValueError(f"{os.fspath(path)}: not a valid gzip file ({error})") from None
        return handle.read()


def _read_padded(path: PathLike) -> tuple[bytearray, int]:
    """The file's bytes followed by ``_PAD`` zero bytes (read once, straight into place), and its size."""
    if os.fspath(path).endswith(".gz"):
        data = _read_bytes(path)
        padded = bytearray(len(data) + _PAD)
        padded[: len(data)] = data
        return padded, len(data)
    with open(path, "rb") as handle:
        size = os.fstat(handle.fileno()).st_size
        padded = bytearray(size + _PAD)
        got = handle.readinto(memoryview(padded)[:size])
        if got != size:
            raise OSError(f"{os.fspath(path)}: short read ({got} of {size} bytes)")
    return padded, size


def _lines(path: PathLike, data: bytes) -> Iterator[tuple[int, list[bytes]]]:
    """``(line number, fields)`` of each non-blank line."""
    carriage_returns = b"\r" in data  # "\r\n" is a line end; a lone "\r" inside a line is not
    for number, line in enumerate(data.split(b"\n"), start=1):
        if carriage_returns and line.find(b"\r", 0, len(line) - 1) >= 0:
            raise ValueError(
                f"{os.fspath(path)}:{number}: a carriage return ('\\r') inside a line; "
                "line ends must be '\\n' or '\\r\\n'"
            )
        fields = line.split()
        if fields:
            yield number, fields


def _text(path: PathLike, number: int, value: bytes) -> str:
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{os.fspath(path)}:{number}: {value!r} is not valid UTF-8") from None


def _score(path: PathLike, number: int, text: bytes, what: str) -> float:
    try:
        if b"_" in text:  # float() takes '1_0'; trec_eval's atof does not
            raise ValueError
        value = float(text)
    except ValueError:
        raise ValueError(
            f"{os.fspath(path)}:{number}: {what} {text.decode(errors='replace')!r} is not a number"
        ) from None
    if math.isnan(value):
        raise ValueError(f"{os.fspath(path)}:{number}: {what} is NaN")
    return value


def read_run(path: PathLike) -> dict[str, dict[str, float]]:
    """Read a TREC run file into ``{query_id: {doc_id: score}}``.

    Parameters
    ----------
    path
        The run file; gzip-compressed if its name ends in ``.gz``.

    Returns
    -------
    dict
        Queries in the order they first appear; each query's documents in file order.

    Raises
    ------
    ValueError
        ``file:line: ...`` for a line with fewer than 6 columns, a score that is not a number
        or is NaN, a doc id listed twice for one query, or bytes that are not UTF-8.
    OSError
        If the file cannot be read.
    """
    padded, size = _read_padded(path)
    columns = _run_columns(path, padded, size)
    if columns is not None:
        return columns.to_dict()
    return _read_run_lines(path, bytes(padded[:size]))


def _read_run_lines(path: PathLike, data: bytes) -> dict[str, dict[str, float]]:
    """The line-by-line reader: any whitespace, extra columns, blank lines."""
    run: dict[str, dict[str, float]] = {}
    first_line: dict[tuple[str, str], int] = {}
    for number, fields in _lines(path, data):
        if len(fields) < 6:
            raise ValueError(
                f"{os.fspath(path)}:{number}: expected 6 columns 'query_id iter doc_id rank score run_id', "
                f"got {len(fields)}"
            )
        query_id, doc_id = _text(path, number, fields[0]), _text(path, number, fields[2])
        docs = run.setdefault(query_id, {})
        if doc_id in docs:
            raise ValueError(
                f"{os.fspath(path)}:{number}: doc id {doc_id!r} appears twice in query {query_id!r} "
                f"(first at line {first_line[query_id, doc_id]})"
            )
        first_line[query_id, doc_id] = number
        docs[doc_id] = _score(path, number, fields[4], "score")
    return run


def _grade(path: PathLike, number: int, text: bytes) -> float:
    value = _score(path, number, text, "grade")
    if math.isinf(value):
        if text.lstrip(b"+-")[:3].lower() == b"inf":
            raise ValueError(f"{os.fspath(path)}:{number}: grade is infinite")
        raise ValueError(f"{os.fspath(path)}:{number}: grade {text.decode(errors='replace')!r} is too large")
    return int(value) if value.is_integer() else value


def read_qrels(path: PathLike) -> dict[str, dict[str, float]]:
    """Read relevance judgements: TREC qrels (``qid iter docid grade``) or BEIR TSV.

    The format is detected from the first non-blank line: 4 columns is TREC (integer grades, as
    trec_eval reads them; ``2.5`` is an error, not truncated), 3 columns is BEIR (any finite grade)
    (``query-id  corpus-id  score``; a first row whose score column is ``score``, ``relevance``,
    ``rel``, ``grade`` or ``label`` is a header and skipped, any other word there is a bad grade).
    Integral grades are returned as ``int``. A negative grade means *judged as unjudged* (as in
    trec_eval) and is kept.

    Parameters
    ----------
    path
        The qrels file; gzip-compressed if its name ends in ``.gz``.

    Returns
    -------
    dict
        ``{query_id: {doc_id: grade}}``, queries in first-appearance order.

    Raises
    ------
    ValueError
        ``file:line: ...`` for a line with the wrong number of columns, a grade that is not a
        finite number, a doc id judged twice for one query, or bytes that are not UTF-8.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "test.tsv")
    >>> _ = open(path, "w").write("query-id\\tcorpus-id\\tscore\\nq1\\td1\\t1\\nq1\\td2\\t0\\n")
    >>> read_qrels(path)
    {'q1': {'d1': 1, 'd2': 0}}
    """
    data = _read_bytes(path)
    qrels: dict[str, dict[str, float]] = {}
    width = 0
    for number, fields in _lines(path, data):
        if not width:
            width = len(fields)
            if width not in (3, 4):
                raise ValueError(
                    f"{os.fspath(path)}:{number}: expected TREC qrels 'query_id iter doc_id grade' (4 columns) "
                    f"or BEIR 'query-id corpus-id score' (3 columns), got {len(fields)} columns"
                )
            if width == 3 and fields[2].decode(errors="replace").lower() in _HEADER_SCORE_NAMES:
                continue  # BEIR header row; any other non-number is reported as a bad grade
        if len(fields) != width:
            raise ValueError(f"{os.fspath(path)}:{number}: expected {width} columns like line 1, got {len(fields)}")
        try:
            # The common case inline; anything unusual goes through the checks that name the problem.
            text = fields[width - 1]
            if len(text) > 15 or b"_" in text:  # may not fit a double, or int() would take '1_0'
                raise ValueError
            grade: float = int(text)
            query_id, doc_id = fields[0].decode(), fields[width - 2].decode()
        except ValueError:
            query_id = _text(path, number, fields[0])
            doc_id = _text(path, number, fields[width - 2])
            grade = _grade(path, number, fields[width - 1])
            if width == 4 and (not float(grade).is_integer() or not _INTEGER.fullmatch(fields[3])):
                raise ValueError(
                    f"{os.fspath(path)}:{number}: grade {fields[3].decode()!r} is not an integer "
                    "(trec_eval reads TREC qrels grades as integers and would truncate it)"
                ) from None
        docs = qrels.setdefault(query_id, {})
        if doc_id in docs:
            raise ValueError(f"{os.fspath(path)}:{number}: doc id {doc_id!r} is judged twice in query {query_id!r}")
        docs[doc_id] = grade
    return qrels


# An integral grade as trec_eval's atol() reads it whole: digits, maybe a zero fraction ("1.0").
_INTEGER = re.compile(rb"[+-]?(?:[0-9]+(?:\.0*)?|\.0+)")

# The score column of a BEIR header row (as ef.evaluation._beir reads it). Only these names: any
# other word in the first row is a bad grade to report, not a header to skip.
_HEADER_SCORE_NAMES = frozenset({"score", "scores", "rel", "relevance", "grade", "label", "judgement", "judgment"})


# --- the columnar fast path ------------------------------------------------------------------


@dataclass(frozen=True)
class _Segment:
    query_id: bytes
    start: int  # first row
    stop: int  # one past the last row


@dataclass
class RunColumns:
    """A run file tokenised into columns, one row per line (private; for :func:`evaluate_run`).

    ``rows(query)`` gives the row indices of one query; ``doc_id(row)`` the doc id bytes; the
    line number of a row is ``row + 1`` (the fast path only takes files without blank lines).
    """

    path: str
    data: bytes | bytearray
    scores: npt.NDArray[np.float64]
    key: npt.NDArray[np.uint64]  # a hash of (query id, doc id): equal pairs, equal keys
    doc_start: npt.NDArray[np.int64]
    doc_stop: npt.NDArray[np.int64]
    segments: dict[bytes, list[_Segment]]

    def rows(self, query_id: bytes) -> npt.NDArray[np.int64] | slice:
        parts = self.segments[query_id]
        if len(parts) == 1:
            return slice(parts[0].start, parts[0].stop)
        return np.concatenate([np.arange(p.start, p.stop) for p in parts])

    def doc_id(self, row: int) -> bytes:
        return bytes(self.data[int(self.doc_start[row]) : int(self.doc_stop[row])])

    def to_dict(self) -> dict[str, dict[str, float]]:
        run: dict[str, dict[str, float]] = {}
        for query_id in self.segments:
            rows = self.rows(query_id)
            starts = self.doc_start[rows].tolist()
            stops = self.doc_stop[rows].tolist()
            scores = self.scores[rows].tolist()
            data = self.data
            docs = {data[a:b].decode(): s for a, b, s in zip(starts, stops, scores, strict=True)}
            if len(docs) != len(scores):
                self.check_duplicates(query_id)
            run[query_id.decode()] = docs
        return run

    def check_duplicates(self, query_id: bytes, hashes: npt.NDArray[np.uint64] | None = None) -> None:
        """Raise ``file:line`` if a doc id appears twice in ``query_id``."""
        rows = self.rows(query_id)
        row_index = np.arange(rows.start, rows.stop) if isinstance(rows, slice) else rows
        values = self.key[rows] if hashes is None else hashes
        order = np.argsort(values, kind="stable")
        ordered = values[order]
        same = np.flatnonzero(ordered[1:] == ordered[:-1])
        found = []  # (line, first line, doc id) of each true repeat; equal keys may be a hash collision
        for i in same.tolist():
            first, second = int(row_index[order[i]]), int(row_index[order[i + 1]])
            doc_id = self.doc_id(first)
            if doc_id == self.doc_id(second):
                found.append((max(first, second) + 1, min(first, second) + 1, doc_id))
        if found:
            line, earlier, doc_id = min(found)  # the earliest line, as the line-by-line reader reports
            raise ValueError(
                f"{self.path}:{line}: doc id {doc_id.decode(errors='replace')!r} appears twice in query "
                f"{query_id.decode(errors='replace')!r} (first at line {earlier})"
            )


class _IrregularError(Exception):
    """The file is not in the strict one-space, six-column layout: use the line-by-line path."""


def _word_view(data: bytearray) -> npt.NDArray[np.uint64]:
    """Every 8-byte window of ``data`` as a little-endian integer: ``view[i]`` = bytes ``i..i+7``."""
    return np.ndarray((len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))


# _LOW_BYTES[n]: a mask keeping the first n bytes of a little-endian word.
_LOW_BYTES = np.array([(1 << (8 * n)) - 1 for n in range(8)] + [(1 << 64) - 1], dtype=np.uint64)


def _words(
    view: npt.NDArray[np.uint64], start: npt.NDArray[np.int64], length: npt.NDArray[np.int64]
) -> list[npt.NDArray[np.uint64]]:
    """Each field as zero-padded little-endian 64-bit words, one array per word."""
    longest = int(length.max()) if len(length) else 1
    if longest > _MAX_FIELD:
        raise _IrregularError
    words = []
    last = len(view) - 1
    for offset in range(0, max(longest, 1), 8):
        keep = _LOW_BYTES[np.clip(length - offset, 0, 8)]
        # Fancy indexing, not take(): take() would first copy the whole unaligned view.
        words.append(view[np.minimum(start + offset, last)] & keep)  # past the end: masked anyway
    return words


_MIX = np.uint64(0x9E3779B97F4A7C15)
_FMIX1, _FMIX2 = np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53)


def _hash_words(words: list[npt.NDArray[np.uint64]]) -> npt.NDArray[np.uint64]:
    """A 64-bit hash per row; equal fields hash equal, collisions are checked by the caller."""
    h = words[0].copy()
    for word in words[1:]:
        h = (h ^ (h >> np.uint64(29))) * _MIX + word
    # MurmurHash3's finaliser: every output bit depends on every input bit, so a slice of the
    # hash (the bit tables of evaluate_run) spreads ids that share a prefix like "doc000".
    h ^= h >> np.uint64(33)
    h *= _FMIX1
    h ^= h >> np.uint64(33)
    h *= _FMIX2
    h ^= h >> np.uint64(33)
    return h


def hash_ids(ids: Iterable[bytes]) -> npt.NDArray[np.uint64]:
    """The run columns' doc-id hash of each id, to match judged doc ids against them."""
    items = list(ids)
    if not items:
        return np.zeros(0, dtype=np.uint64)
    lengths = np.fromiter(map(len, items), dtype=np.int64, count=len(items))
    long = lengths > _MAX_FIELD
    if long.any():
        # An id this long is never in a run that takes the fast path, so it can match no row:
        # any value will do (matches are checked byte for byte); the others hash as usual.
        out = np.zeros(len(items), dtype=np.uint64)
        short = np.flatnonzero(~long)
        out[short] = hash_ids([items[i] for i in short.tolist()])
        return out
    joined = bytearray(b"".join(items) + bytes(_PAD))
    starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
    return _hash_words(_words(_word_view(joined), starts, lengths))


_KEY_MIX = np.uint64(0xC2B2AE3D27D4EB4F)


def hash_keys(query_ids: list[bytes], doc_ids: list[bytes]) -> npt.NDArray[np.uint64]:
    """The run columns' ``key`` of each ``(query id, doc id)`` pair."""
    return hash_ids(doc_ids) ^ (hash_ids(query_ids) * _KEY_MIX)


_POW10 = 10.0 ** np.arange(23)


def _parse_scores(
    buf: npt.NDArray[np.uint8], start: npt.NDArray[np.int64], length: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """Decimal scores (``-?digits[.digits]``, at most 15 digits) converted exactly; ``ok`` marks them.

    ``m / 10**k`` with both exact doubles is the correctly rounded value, i.e. what ``float()``
    gives. Other spellings (exponents, long mantissas, ``inf``, garbage) are left to the caller.
    Works column by column over all rows, so every step is one vectorised operation.
    """
    n = len(start)
    longest = int(length.max()) if n else 0
    if longest > 24:
        return np.zeros(n), np.zeros(n, dtype=bool)
    mantissa, scaled = np.zeros(n), np.empty(n)
    digits, dots = np.zeros(n, dtype=np.int8), np.zeros(n, dtype=np.int8)
    dot_at = length.copy()  # no dot: no decimals
    byte, digit = np.empty(n, dtype=np.uint8), np.empty(n, dtype=np.uint8)
    is_digit, is_dot, inside = (np.empty(n, dtype=bool) for _ in range(3))
    shortest = int(length.min()) if n else 0
    for j in range(longest):
        np.take(buf[j:], start, out=byte, mode="clip")  # clip: bytes past the field are masked
        np.subtract(byte, 48, out=digit)
        np.less(digit, 10, out=is_digit)
        if j >= shortest:  # some fields have ended: mask their bytes out
            np.greater(length, j, out=inside)
            is_digit &= inside
        np.multiply(mantissa, 10.0, out=scaled)
        scaled += digit
        np.copyto(mantissa, scaled, where=is_digit)
        digits += is_digit
        np.equal(byte, 46, out=is_dot)
        if j >= shortest:
            is_dot &= inside
        dots += is_dot
        np.copyto(dot_at, j, where=is_dot)
    negative = buf[start] == 45
    ok = (digits + dots + negative == length) & (dots <= 1) & (digits >= 1) & (digits <= _SAFE_DIGITS)
    decimals = np.where(dots > 0, length - dot_at - 1, 0)
    value = mantissa / _POW10[np.clip(decimals, 0, 22)]
    return np.where(negative, -value, value), ok


def _tokenise(
    buf: npt.NDArray[np.uint8],
    view: npt.NDArray[np.uint64],
    begin: int,
    end: int,
    rows: slice,
    out: dict[str, npt.NDArray],
) -> dict[str, npt.NDArray]:
    """One chunk of whole lines ``[begin, end)``: writes its rows into ``out[...][rows]``.

    Returns the chunk's query segments and the rows whose score needs ``float()``; raises
    :class:`_IrregularError` if a line is not six single-separated fields.
    """
    chunk = buf[begin:end]
    pos = np.flatnonzero(chunk <= 32)
    if len(pos) != 6 * (rows.stop - rows.start):
        raise _IrregularError
    grid = pos.reshape(-1, 6)
    # The chunk has exactly one newline per row (``rows`` counts them): if each row's last
    # separator is a newline, no row holds another one.
    if not (chunk[grid[:, 5]] == 10).all():
        raise _IrregularError
    if pos[0] == 0 or (np.diff(pos) < 2).any():
        raise _IrregularError  # an empty field: doubled separators, a blank line, CRLF
    grid += begin
    line_start = np.empty(len(grid), dtype=np.int64)
    line_start[0] = begin
    line_start[1:] = grid[:-1, 5] + 1
    query_words = _words(view, line_start, grid[:, 0] - line_start)
    new_query = np.ones(len(grid), dtype=bool)
    same = np.ones(len(grid) - 1, dtype=bool)
    for word in query_words:
        same &= word[1:] == word[:-1]
    new_query[1:] = ~same
    doc_start, doc_stop = grid[:, 1] + 1, grid[:, 2]
    out["doc_start"][rows] = doc_start
    out["doc_stop"][rows] = doc_stop
    doc_hash = _hash_words(_words(view, doc_start, doc_stop - doc_start))
    out["key"][rows] = doc_hash ^ (_hash_words(query_words) * _KEY_MIX)
    scores, ok = _parse_scores(buf, grid[:, 3] + 1, grid[:, 4] - grid[:, 3] - 1)
    out["scores"][rows] = scores
    return {
        "line_start": line_start[new_query],
        "query_end": grid[new_query, 0],
        "first_row": np.flatnonzero(new_query),
        "redo": np.flatnonzero(~ok),
        "score_start": grid[~ok, 3] + 1,
        "score_stop": grid[~ok, 4],
    }


def _run_columns(path: PathLike, padded: bytearray, size: int) -> RunColumns | None:
    """Tokenise a run file with numpy; ``None`` if it needs the line-by-line path.

    The fast path takes files whose every line is exactly six fields separated by single spaces
    or tabs (what ef, Anserini, Pyserini and most tools write); anything else goes line by line.
    """
    if size == 0:
        return None
    if not padded.isascii():
        try:
            padded[:size].decode()
        except UnicodeDecodeError:
            return None  # the line-by-line path names the line (ids must be UTF-8)
    if padded[size - 1] != 10:
        padded[size] = 10
        size += 1
    buf = np.frombuffer(padded, dtype=np.uint8)
    view = _word_view(padded)
    bounds = [0]
    while bounds[-1] < size:
        cut = padded.find(b"\n", min(bounds[-1] + _CHUNK, size - 1), size) + 1
        bounds.append(cut if cut > 0 else size)
    pairs = list(itertools.pairwise(bounds))
    counts = [int(np.count_nonzero(buf[a:b] == 10)) for a, b in pairs]  # 3x faster than bytearray.count
    firsts = [0, *itertools.accumulate(counts)]
    n_rows = firsts[-1]
    out: dict[str, Any] = {
        "scores": np.empty(n_rows),
        "key": np.empty(n_rows, dtype=np.uint64),
        "doc_start": np.empty(n_rows, dtype=np.int64),
        "doc_stop": np.empty(n_rows, dtype=np.int64),
    }
    jobs = [(a, b, slice(firsts[i], firsts[i + 1])) for i, (a, b) in enumerate(pairs)]
    try:
        # numpy releases the GIL in its loops, so two threads tokenise two chunks at once.
        with ThreadPoolExecutor(max_workers=min(2, os.cpu_count() or 1)) as pool:
            chunks = list(pool.map(lambda job: _tokenise(buf, view, job[0], job[1], job[2], out), jobs))
    except _IrregularError:
        return None
    name = os.fspath(path)
    segments: dict[bytes, list[_Segment]] = {}
    last: _Segment | None = None
    for (_, _, rows), chunk in zip(jobs, chunks, strict=True):
        starts = [*chunk["first_row"].tolist(), rows.stop - rows.start]
        for i, (a, b) in enumerate(zip(chunk["line_start"].tolist(), chunk["query_end"].tolist(), strict=True)):
            query_id = bytes(padded[a:b])
            segment = _Segment(query_id, rows.start + starts[i], rows.start + starts[i + 1])
            if last is not None and last.query_id == query_id and last.stop == segment.start:
                segment = _Segment(query_id, last.start, segment.stop)  # continues across chunks
                segments[query_id][-1] = segment
            else:
                segments.setdefault(query_id, []).append(segment)
            last = segment
        for row, a, b in zip(
            chunk["redo"].tolist(), chunk["score_start"].tolist(), chunk["score_stop"].tolist(), strict=True
        ):
            out["scores"][rows.start + row] = _score(name, rows.start + row + 1, bytes(padded[a:b]), "score")
    return RunColumns(
        path=name,
        data=padded,
        scores=out["scores"],
        key=out["key"],
        doc_start=out["doc_start"],
        doc_stop=out["doc_stop"],
        segments=segments,
    )


def read_run_columns(path: PathLike) -> RunColumns | dict[str, dict[str, float]]:
    """The run as columns when the file allows the fast path, else as :func:`read_run`'s dict."""
    padded, size = _read_padded(path)
    columns = _run_columns(path, padded, size)
    if columns is not None:
        return columns
    return _read_run_lines(path, bytes(padded[:size]))


# --- writing ---------------------------------------------------------------------------------


def _check_id(value: object, what: str) -> str:
    if not isinstance(value, str) or not value or any(c.isspace() for c in value):
        raise ValueError(f"{what} must be a non-empty str without whitespace (got {value!r})")
    return value


def _atomic_write(path: PathLike, lines: Iterable[str]) -> None:
    """Write ``lines`` to ``path`` atomically (gzip-compressed when it ends in ``.gz``)."""
    with atomic_writer(path) as raw:
        if os.fspath(path).endswith(".gz"):
            with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out:
                for line in lines:
                    out.write(line.encode())
        else:
            for line in lines:
                raw.write(line.encode())


def write_run(path: PathLike, run: Mapping[str, Mapping[str, float]], *, run_id: str = "ef") -> None:
    """Write ``{query_id: {doc_id: score}}`` as a TREC run file, atomically.

    Each query's documents are written in trec_eval's order (score descending, ties by doc id
    descending), ranked from 1; scores are written with ``repr`` so they read back exactly.

    Parameters
    ----------
    path
        The file to write; gzip-compressed if its name ends in ``.gz``. Replaced atomically.
    run
        The run. Scores must be real numbers, not NaN.
    run_id
        The last column of every line.

    Raises
    ------
    ValueError
        For an id that is empty or contains whitespace, a score that is not a number or NaN, or a
        query with no documents (a TREC run file has no way to list a query without a line).
    """
    _check_id(run_id, "'run_id'")
    rows: list[tuple[str, list[tuple[float, str]]]] = []
    for query_id, docs in run.items():
        _check_id(query_id, "a query id")
        if not docs:
            raise ValueError(
                f"query {query_id!r} has no documents: a TREC run file cannot hold an empty ranking "
                "(leave the query out)"
            )
        ranked = []
        for doc_id, score in docs.items():
            _check_id(doc_id, f"a doc id of query {query_id!r}")
            if isinstance(score, bool) or not isinstance(score, int | float | np.floating | np.integer):
                raise ValueError(f"score of doc {doc_id!r} in query {query_id!r} must be a number (got {score!r})")
            if math.isnan(score):
                raise ValueError(f"score of doc {doc_id!r} in query {query_id!r} is NaN")
            ranked.append((float(score), doc_id))
        ranked.sort(key=lambda item: (item[0], item[1].encode()), reverse=True)
        rows.append((query_id, ranked))

    def lines() -> Iterator[str]:
        for query_id, ranked in rows:
            for rank, (score, doc_id) in enumerate(ranked, start=1):
                yield f"{query_id} Q0 {doc_id} {rank} {score!r} {run_id}\n"

    _atomic_write(path, lines())


def write_qrels(path: PathLike, qrels: Mapping[str, Mapping[str, float]]) -> None:
    """Write ``{query_id: {doc_id: grade}}`` as a TREC qrels file (``qid 0 docid grade``), atomically.

    Raises
    ------
    ValueError
        For an id that is empty or contains whitespace, or a grade that is not a finite integer
        (trec_eval reads qrels grades as integers).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "qrels.txt")
    >>> write_qrels(path, {"q1": {"d1": 2, "d2": 0}})
    >>> read_qrels(path)
    {'q1': {'d1': 2, 'd2': 0}}
    """
    for query_id, docs in qrels.items():
        _check_id(query_id, "a query id")
        for doc_id, grade in docs.items():
            _check_id(doc_id, f"a doc id of query {query_id!r}")
            if (
                isinstance(grade, bool)
                or not isinstance(grade, int | float | np.floating | np.integer)
                or not math.isfinite(grade)
            ):
                raise ValueError(
                    f"grade of doc {doc_id!r} in query {query_id!r} must be a finite number (got {grade!r})"
                )
            if not float(grade).is_integer():
                raise ValueError(
                    f"grade of doc {doc_id!r} in query {query_id!r} must be an integer: TREC qrels hold "
                    f"integer grades (got {grade!r})"
                )

    def lines() -> Iterator[str]:
        for query_id, docs in qrels.items():
            for doc_id, grade in docs.items():
                text = str(int(grade))
                yield f"{query_id} 0 {doc_id} {text}\n"

    _atomic_write(path, lines())
