"""TREC run and qrels files, read as trec_eval 10.0 reads them, written atomically.

A run file has one retrieved document per line, ``query_id iter doc_id rank score run_id``. As
in trec_eval, columns are separated by any run of C whitespace (space, tab, ``\\v``, ``\\f``,
``\\r``), so spaces, tabs, mixed separators and CRLF line ends all read alike; the ``iter`` and
``rank`` columns and anything after the sixth are ignored; a line whose first non-blank
character is ``#`` is a comment; blank lines are skipped; the run id is the last line's. A
qrels file has one judgement per line, ``query_id iter doc_id grade`` (integer grades, as
trec_eval reads them); :func:`read_qrels` also reads BEIR's ``qrels/*.tsv`` (tab-separated
``query-id  corpus-id  score``, with or without its header row). Sources are paths or ``-``,
plain or gzip, files or pipes (see :mod:`ef.io._source`).

Where trec_eval would guess, ef refuses with ``file:line`` and the reason: a score that is not
entirely a number (trec_eval's ``atof`` reads ``1.5x`` as 1.5 and ``x`` as 0), NaN, a score
beyond the range of a double (``1e400`` and ``1e401`` would tie as infinity), a grade that is
not an integer or does not fit 64 bits, a NUL byte (trec_eval stops reading there), bytes that
are not UTF-8, a doc id twice in one query. ``inf`` and ``-inf`` are accepted: they rank.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "run.txt")
>>> write_run(path, {"q1": {"d1": 0.5, "d2": 1.5}})
>>> print(open(path).read(), end="")
q1 Q0 d2 1 1.5 ef
q1 Q0 d1 2 0.5 ef
>>> from ef.trec import read_run  # the run engine reads runs: ef.evaluation._hits
>>> read_run(path)
{'q1': {'d2': 1.5, 'd1': 0.5}}
"""

from __future__ import annotations

import contextlib
import gzip
import math
import os
import re
from collections.abc import Iterable, Iterator, Mapping

import numpy as np
import numpy.typing as npt

from ef.io._source import Source, display_name, read_bytes
from ef.io.ids import check_query_id, check_ranking, check_trec_id
from ef.io.numbers import IS_NAN, NOT_A_NUMBER, strtod
from ef.io.ranked import RankedRun

__all__ = ["format_run", "parse_qrels", "read_qrels", "run_lines", "strtod", "write_lines", "write_qrels", "write_run"]

PathLike = str | os.PathLike[str]



def _line_at(data: bytes, position: int) -> int:
    return data.count(b"\n", 0, position) + 1


# --- the qrels reader ------------------------------------------------------------------------

# The score column of a BEIR header row. Only these names: any other word in the first row is a
# bad grade to report, not a header to skip.
_HEADER_SCORE_NAMES = frozenset({"score", "scores", "rel", "relevance", "grade", "label", "judgement", "judgment"})
# An integral grade as trec_eval's atol() reads it whole: digits, maybe a zero fraction ("1.0"), or a
# zero fraction alone (".0", which atol reads as 0).
_INTEGER = re.compile(rb"([+-]?)([0-9]+)(?:\.0*)?|([+-]?)\.0+")
_INT64 = 1 << 63


def _grade(text: bytes, where: str, *, trec: bool) -> float:
    """A grade: ``int`` when integral, else ``float`` (BEIR only: TREC qrels grades are integers)."""
    whole = _INTEGER.fullmatch(text)
    if whole:
        value = int(whole.group(1) + whole.group(2)) if whole.group(2) else 0
        if not -_INT64 <= value < _INT64:
            raise ValueError(f"{where}: grade {text.decode()!r} does not fit a 64-bit integer, as trec_eval reads it")
        if value == 0 and text.startswith(b"-") and not trec:
            return -0.0  # kept exactly as written (write_beir round-trips it)
        return value
    grade = strtod(text)
    if isinstance(grade, int):
        shown = text.decode(errors="replace")
        problem = {NOT_A_NUMBER: f"grade {shown!r} is not a number", IS_NAN: "grade is NaN"}
        raise ValueError(f"{where}: {problem.get(grade, f'grade {shown!r} is beyond the range of a double')}")
    if math.isinf(grade):
        raise ValueError(f"{where}: grade {text.decode()!r} is not finite")
    if trec:
        raise ValueError(
            f"{where}: grade {text.decode(errors='replace')!r} is not an integer "
            "(trec_eval reads TREC qrels grades as integers and would truncate it)"
        )
    if grade == 0 and math.copysign(1.0, grade) < 0:
        return grade  # -0.0, kept exactly as written
    return int(grade) if grade.is_integer() else grade


def _text(raw: bytes, where: str, what: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{where}: {what} {raw!r} is not valid UTF-8") from None


def read_qrels(path: Source) -> dict[str, dict[str, float]]:
    """Read relevance judgements: TREC qrels (``qid iter docid grade``) or a BEIR qrels TSV.

    The format is told by the first judgement line: three tab-separated fields is BEIR
    (``query-id  corpus-id  score``, split on tabs only, so an id may hold a space; a first row
    whose score column is ``score``, ``relevance``, ``rel``, ``grade`` or ``label`` is a header),
    anything else TREC (four whitespace-separated columns, integer grades, as trec_eval reads
    them: ``2.5`` is an error, not truncated; a line starting with ``#`` is a comment). Blank
    lines are skipped. Grades are ``int`` when integral, else ``float``, whichever reader reads
    the file. A negative grade means *judged as unjudged* (as in trec_eval) and is kept.

    Parameters
    ----------
    path
        The qrels file, or ``-``; plain or gzip-compressed.

    Returns
    -------
    dict
        ``{query_id: {doc_id: grade}}``, queries in first-appearance order.

    Raises
    ------
    ValueError
        ``file:line: ...`` for a line with the wrong number of columns, a grade that is not a
        number (or, in TREC qrels, not an integer), an id with surrounding whitespace in a BEIR
        TSV, a doc id judged twice for one query, or bytes that are not UTF-8.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "test.tsv")
    >>> _ = open(path, "w").write("query-id\\tcorpus-id\\tscore\\nq1\\td1\\t1\\nq1\\td2\\t0\\n")
    >>> read_qrels(path)
    {'q1': {'d1': 1, 'd2': 0}}
    """
    return parse_qrels(display_name(path), read_bytes(path))


def parse_qrels(name: str, data: bytes) -> dict[str, dict[str, float]]:
    """Qrels held in memory, as :func:`read_qrels` reads a file's bytes; its errors name `name`.

    >>> parse_qrels("qrels", b"q1 0 d1 2\\nq1 0 d2 0\\n")
    {'q1': {'d1': 2, 'd2': 0}}
    """
    nul = data.find(b"\x00")
    if nul >= 0:
        raise ValueError(f"{name}:{_line_at(data, nul)}: a NUL byte (trec_eval stops reading a file there)")
    plain = _plain_qrels(data)
    if plain is not None:
        return plain
    ascii_only = data.isascii()
    qrels: dict[str, dict[str, float]] = {}
    beir: bool | None = None
    for number, line in enumerate(data.split(b"\n"), start=1):
        if line.endswith(b"\r"):
            line = line[:-1]
        if beir is None:
            if not line.strip() or (line.count(b"\t") != 2 and line.startswith(b"#")):
                continue  # blank, or a TREC comment before the first judgement
            beir = line.count(b"\t") == 2
            if beir and line.rsplit(b"\t", 1)[1].strip().decode(errors="replace").lower() in _HEADER_SCORE_NAMES:
                continue  # BEIR header row; any other non-number is reported as a bad grade
            if beir and len(line.split()) == 4:
                # 'q1 0<TAB>d1<TAB>1' is TREC qrels with mixed separators, 'q 1<TAB>d1<TAB>1' a BEIR
                # row whose query id holds a space: the bytes cannot tell which, so neither is guessed.
                raise ValueError(
                    f"{name}:{number}: reads both as TREC qrels (4 whitespace-separated columns) and as a BEIR "
                    "TSV row (3 tab-separated columns); start a BEIR file with its 'query-id<TAB>corpus-id<TAB>score' "
                    "header, or separate TREC columns consistently"
                )
        if beir:
            if not line.strip():
                continue
            fields = line.split(b"\t")
            if len(fields) != 3:
                raise ValueError(f"{name}:{number}: expected 3 tab-separated columns (query-id, corpus-id, score)")
            for field, what in zip(fields[:2], ("query-id", "corpus-id"), strict=True):
                if not field or field != field.strip():
                    raise ValueError(
                        f"{name}:{number}: {what} {field.decode(errors='replace')!r} is empty or has surrounding "
                        "whitespace, so it could never match an id"
                    )
            query_field, doc_field, grade_field = fields[0], fields[1], fields[2].strip()
        else:
            fields = line.split()
            if len(fields) != 4:
                if not fields or line.startswith(b"#"):
                    continue  # blank, or a TREC comment ('#' at column 0, as trec_eval reads it)
                raise ValueError(
                    f"{name}:{number}: expected TREC qrels 'query_id iter doc_id grade' (4 columns) or BEIR "
                    f"'query-id<TAB>corpus-id<TAB>score', got {len(fields)} columns"
                )
            if line.startswith(b"#"):
                continue
            query_field, doc_field, grade_field = fields[0], fields[2], fields[3]
        if ascii_only:
            query_id, doc_id = query_field.decode(), doc_field.decode()
        else:
            query_id = _text(query_field, f"{name}:{number}", "query id")
            doc_id = _text(doc_field, f"{name}:{number}", "doc id")
        # The common grade, a few plain digits, inline; anything else through the checks that name it.
        if grade_field.isdigit() and len(grade_field) < 19:
            grade: float = int(grade_field)
        else:
            grade = _grade(grade_field, f"{name}:{number}", trec=not beir)
        docs = qrels.setdefault(query_id, {})
        if doc_id in docs:
            first = next(n for n, judged in _judgements(data, beir) if judged == (query_id, doc_id))
            raise ValueError(
                f"{name}:{number}: doc id {doc_id!r} is judged twice in query {query_id!r} (first at line {first})"
            )
        docs[doc_id] = grade
    return qrels


# Qrels as most are written: printable ASCII, spaces or tabs, TREC's 4 columns on every line,
# grades of plain digits, no comment, CR or blank line. Read as one str (~2x faster); anything
# else is read line by line, which gives the same qrels or the error with its line number.
_NOT_PLAIN = re.compile(rb"[^\x20-\x7e\t\n]|#")


def _plain_qrels(data: bytes) -> dict[str, dict[str, float]] | None:
    """`data` read as plain TREC qrels, or None when it is not plain (see above)."""
    if _NOT_PLAIN.search(data):
        return None
    rows = data.decode("ascii").split("\n")
    if rows[-1] == "":
        rows.pop()
    if rows and rows[0].count("\t") == 2:
        return None  # a BEIR row
    qrels: dict[str, dict[str, float]] = {}
    try:
        for query_id, _, doc_id, grade in map(str.split, rows):
            if not grade.isdigit() or len(grade) > 18:
                return None
            docs = qrels.get(query_id)
            if docs is None:
                docs = qrels[query_id] = {}
            docs[doc_id] = int(grade)
    except ValueError:  # a line of other than 4 columns
        return None
    return qrels if sum(map(len, qrels.values())) == len(rows) else None  # else a doc judged twice


def _judgements(data: bytes, beir: bool) -> Iterator[tuple[int, tuple[str, str]]]:
    """``(line, (query id, doc id))`` of each judgement line, to find where a repeat began."""
    for number, line in enumerate(data.split(b"\n"), start=1):
        fields = line.rstrip(b"\r").split(b"\t") if beir else line.split()
        if len(fields) == (3 if beir else 4) and not line.startswith(b"#"):
            pair = (fields[0], fields[1]) if beir else (fields[0], fields[2])
            yield number, (pair[0].decode(errors="replace"), pair[1].decode(errors="replace"))


# --- writing ---------------------------------------------------------------------------------


def write_lines(path: PathLike, lines: Iterable[str]) -> None:
    """Write text ``lines`` to ``path`` atomically (gzip-compressed when it ends in ``.gz``, any case).

    A line that is not a str stops the write: the old file stays as it was.
    """
    from ef.io._atomic import atomic_writer  # only a writer needs it (and its imports)

    _check_path(path)
    if isinstance(lines, str):  # its characters would be written as lines, whatever it holds
        raise TypeError("'lines' must be an iterable of str lines, not a single str")
    with atomic_writer(path) as raw:
        gz = os.fspath(path).lower().endswith(".gz")
        with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) if gz else contextlib.nullcontext(raw) as out:
            for k, line in enumerate(lines):
                if not isinstance(line, str):
                    raise TypeError(f"'lines'[{k}] must be a str (got {type(line).__name__})")
                out.write(line.encode())


def _check_path(path: object) -> None:
    """A path the writers take: a str or an ``os.PathLike`` of a str (not bytes, which they cannot name)."""
    if not isinstance(path, str | os.PathLike) or not isinstance(os.fspath(path), str):
        raise TypeError(f"'path' must be a str or os.PathLike[str] (got {type(path).__name__})")


# An empty run or qrels mapping: its file would be empty, and every reader of ef refuses an empty
# one (trec_eval too), so a writer does not make a file ef itself cannot read back.
_NO_QUERY = (
    "{name!r} holds no query: its file would hold no {line}, which trec_eval, evaluate_run and ef trec-eval "
    "refuse to score"
)


def _check_mapping(value: object, name: str, what: str) -> None:
    """`value` (the argument `name`) must be a ``{query_id: {doc_id: what}}`` mapping: a list, a
    generator or a DataFrame would otherwise fail inside, on ``.items()``, or write its columns."""
    if not isinstance(value, Mapping):
        raise TypeError(f"'{name}' must be a mapping {{query_id: {{doc_id: {what}}}}} (got {type(value).__name__})")


def _real(value: object) -> bool:
    return not isinstance(value, bool | np.bool_) and isinstance(value, int | float | np.floating | np.integer)


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
        For an id that is not a non-empty str without whitespace, a score that is not a number
        or is NaN, a query with no documents (a TREC run file cannot list a query without a line),
        or a run of no query at all: its file would hold no line, which ef's scorers refuse, as
        trec_eval does ("the run holds no ranking line"). Nothing is written then.

    >>> import tempfile
    >>> write_run(os.path.join(tempfile.mkdtemp(), "run.txt"), {})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: 'run' holds no query: its file would hold no ranking line, which trec_eval, evaluate_run and ef ...
    """
    _check_path(path)
    write_lines(path, run_lines(run, run_id=run_id))


def run_lines(run: Mapping[str, Mapping[str, float]], *, run_id: str = "ef") -> Iterator[str]:
    """The text :func:`write_run` writes, in pieces (a few queries each), the whole run checked
    first (the same errors): for standard output, or a stream of one's own.

    A dict of dicts and a :class:`~ef.io.ranked.RankedRun` (``ef.fusion.fuse``'s) whose ids and
    scores the checks would pass are written by the compiled engine; anything else, and every
    fault, goes through :func:`format_run`, line by line.

    >>> "".join(run_lines({"q1": {"d1": 0.5, "d2": 1.5}}, run_id="bm25"))
    'q1 Q0 d2 1 1.5 bm25\\nq1 Q0 d1 2 0.5 bm25\\n'
    """
    check_trec_id(run_id, "'run_id'")
    _check_mapping(run, "run", "score")
    if not run:  # format_run writes a block of a run, which may be empty; a whole run may not
        raise ValueError(_NO_QUERY.format(name="run", line="ranking line"))
    text = _plain_text(run, run_id)
    return format_run(run, run_id=run_id) if text is None else text


def format_run(run: Mapping[str, Mapping[str, float]], *, run_id: str = "ef") -> Iterator[str]:
    """The lines :func:`write_run` writes, the whole run checked first (the same errors).

    `run` may be one block of a run written piece by piece, so an empty one yields no line
    (where :func:`write_run` and :func:`run_lines`, which make a whole file, refuse it).

    >>> list(format_run({"q1": {"d1": 0.5, "d2": 1.5}}, run_id="bm25"))
    ['q1 Q0 d2 1 1.5 bm25\\n', 'q1 Q0 d1 2 0.5 bm25\\n']
    """
    check_trec_id(run_id, "'run_id'")
    _check_mapping(run, "run", "score")
    rows: list[tuple[str, list[tuple[float, str]]]] = []
    for query_id, docs in run.items():
        check_query_id(query_id)
        ranked = check_ranking(query_id, docs)  # ids a reader returns can be written back
        ranked.sort(key=lambda item: (item[0], item[1].encode()), reverse=True)
        rows.append((query_id, ranked))

    def lines() -> Iterator[str]:
        for query_id, ranked in rows:
            for rank, (score, doc_id) in enumerate(ranked, start=1):
                yield f"{query_id} Q0 {doc_id} {rank} {score!r} {run_id}\n"

    return lines()


def _plain_text(run: Mapping[str, Mapping[str, float]], run_id: str) -> Iterator[str] | None:
    """format_run's text, a few queries a piece, made by the compiled engine, for a dict of dicts
    of str ids and float scores that its checks would pass (no empty query, every id writable,
    every score finite); ``None`` for anything else, which they then take line by line (and name)."""
    from ef.evaluation._engine import engine  # the run engine reads the run's dicts in one pass

    if isinstance(run, RankedRun):  # already in trec_eval's order, each doc once: checked in one pass
        if (np.diff(run.bounds) == 0).any():  # an empty query: for the checks
            return None
        return ranked_text(list(run.queries), run.bounds, run.ids, run.doc, run.score, run_id)
    columns = engine.stack_columns([run]) if type(run) is dict else None
    if columns is None:
        return None
    queries, ids, pair_query, pair_head, _, _, list_size, _, score, ordered = columns
    sizes, scores = np.frombuffer(list_size, dtype=np.int64), np.frombuffer(score, dtype=np.float64)
    if not sizes.all() or not np.isfinite(scores).all():  # an empty query, NaN or inf: for the checks
        return None
    # One run: every entry is a pair of its own, numbered in the dicts' order.
    order = np.arange(len(scores), dtype=np.int64)
    if not ordered:
        order = np.frombuffer(engine.trec_order(pair_query, scores, order, pair_head, ids), dtype=np.int64)
        scores = scores[order]
    return ranked_text(queries, np.concatenate(([0], np.cumsum(sizes))).astype(np.int64), ids, order, scores, run_id)


def ranked_text(names: list[str], bounds: npt.NDArray[np.int64], ids: list[str], doc: npt.NDArray[np.int64],
                score: npt.NDArray[np.float64], run_id: str) -> Iterator[str] | None:
    """The TREC text of entries in trec_eval's order: query ``names[k]`` holds entries
    ``bounds[k]:bounds[k + 1]`` (doc id ``ids[doc[i]]``), written by the compiled engine a few
    queries at a time (a few MB of text each). ``None`` when a name or one of `ids` is not one
    write_run accepts, or a score is not finite: the caller then takes the checks' path, whose
    error names it."""
    from ef.evaluation._engine import engine

    if not (engine.writable(names, True) and engine.writable(ids, False) and np.isfinite(score).all()):
        return None

    import orjson  # the shortest digits of a score, as repr picks them, ~25x faster than repr

    def text() -> Iterator[str]:
        for at in range(0, len(names), 64):
            scores = score[bounds[at] : bounds[min(at + 64, len(names))]]
            json = orjson.dumps(np.ascontiguousarray(scores), option=orjson.OPT_SERIALIZE_NUMPY)
            chunk = engine.run_text(names[at : at + 64], bounds[at : at + 65], ids, doc, score, run_id, json)
            if chunk is None:  # pragma: no cover - every id and score was checked above
                raise RuntimeError("an id or a score changed while the run was written")
            yield from chunk

    return text()


def write_qrels(path: PathLike, qrels: Mapping[str, Mapping[str, float]]) -> None:
    """Write ``{query_id: {doc_id: grade}}`` as a TREC qrels file (``qid 0 docid grade``), atomically.

    Raises
    ------
    ValueError
        For an id a TREC line cannot hold (empty, a separator or NUL in it, a lone surrogate, a
        query id starting with ``#``: :func:`ef.io.ids.check_trec_id`), a grade that is not a finite integer
        (trec_eval reads qrels grades as integers), a query with no judgements (a qrels
        file cannot hold it, and dropping it would change ``-c`` averages), or qrels of no query
        (an empty file, which evaluate_run and trec_eval refuse to score with).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "qrels.txt")
    >>> write_qrels(path, {"q1": {"d1": 2, "d2": 0}})
    >>> read_qrels(path)
    {'q1': {'d1': 2, 'd2': 0}}
    """
    _check_path(path)
    _check_mapping(qrels, "qrels", "grade")
    if not qrels:
        raise ValueError(_NO_QUERY.format(name="qrels", line="judgement"))
    for query_id, docs in qrels.items():
        # the ids write_run and read_qrels take: a lone surrogate was a bare UnicodeEncodeError,
        # and a no-break space (part of an id, as read) was refused as "whitespace"
        check_query_id(query_id)
        if not isinstance(docs, Mapping):
            raise TypeError(f"the judgements of query {query_id!r:.80} must be a mapping {{doc_id: grade}} "
                            f"(got {type(docs).__name__})")
        if not docs:
            raise ValueError(f"query {query_id!r} has no judgements: a qrels file cannot hold it (leave it out)")
        for doc_id, grade in docs.items():
            check_trec_id(doc_id, f"a doc id of query {query_id!r}")
            if not _real(grade):
                raise ValueError(f"grade of doc {doc_id!r} in query {query_id!r} must be a number (got {grade!r})")
            # An int is checked whole (math.isfinite(10**400) would overflow); read_qrels refuses what
            # does not fit 64 bits, so the writer does too.
            if not isinstance(grade, int | np.integer) and (not math.isfinite(grade) or not float(grade).is_integer()):
                raise ValueError(
                    f"grade of doc {doc_id!r} in query {query_id!r} must be a finite integer: TREC qrels hold "
                    f"integer grades (got {grade!r})"
                )
            if not -_INT64 <= int(grade) < _INT64:
                raise ValueError(f"grade of doc {doc_id!r} in query {query_id!r} does not fit a 64-bit integer, "
                                 f"as trec_eval reads it (got {grade!r:.80})")

    def lines() -> Iterator[str]:
        for query_id, docs in qrels.items():
            for doc_id, grade in docs.items():
                yield f"{query_id} 0 {doc_id} {int(grade)}\n"

    write_lines(path, lines())
