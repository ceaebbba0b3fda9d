"""BEIR files: ``corpus.jsonl``, ``queries.jsonl`` and a qrels TSV, to and from the evaluation triple.

Readers are strict: a malformed line is a ``ValueError`` naming ``file:line`` and what is wrong,
never a silently skipped record. Files are read as bytes and decoded line by line, so line
numbers are exact and only ``\\n`` ends a line (a JSON string may hold U+2028 and friends).
"""

from __future__ import annotations

import errno
import json
import math
import numbers
import os
import re
from collections.abc import Iterator, Mapping
from typing import IO, Any

from ef.io._atomic import atomic_files
from ef.io.jsonl import iter_json_objects, json_type
from ef.io.trec import read_qrels

__all__ = ["read_beir", "write_beir"]

_DEFAULT_QRELS_PATHS: tuple[str, ...] = ("qrels/test.tsv", "qrels.tsv")
"""Where :func:`read_beir` looks for the qrels file, in order, when none is named."""

_QRELS_HEADER = ("query-id", "corpus-id", "score")
# Characters a BEIR qrels TSV cannot hold in an id: the column and line separators.
_TSV_UNSAFE = re.compile(r"[\t\n\r\x00]")
_ASCII_SPACE = " \t\n\r\x0b\x0c"

Triple = tuple[dict[str, str], dict[str, str], dict[str, dict[str, float]]]


# --- reading --------------------------------------------------------------------------------------


def _locate(path: str) -> str:
    """`path`, or `path` + ``.gz`` when only the compressed file exists; else FileNotFoundError."""
    if os.path.exists(path):
        return path
    if os.path.exists(path + ".gz"):
        return path + ".gz"
    raise FileNotFoundError(errno.ENOENT, "BEIR file not found (nor its .gz)", path)


def _record_id(record: Mapping[str, Any], where: str) -> str:
    if "_id" not in record:
        raise ValueError(f"{where}: record has no '_id'")
    value = record["_id"]
    # Integer ids occur in hand-made files; qrels ids are text, so they become text here too.
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise ValueError(f"{where}: '_id' must be a string (got {json_type(value)})")
    if not value:
        raise ValueError(f"{where}: '_id' is empty")
    if value != value.strip(_ASCII_SPACE):  # as the qrels readers refuse such an id
        raise ValueError(f"{where}: '_id' {value!r} has surrounding whitespace, so it could never match a qrels id")
    _refuse_surrogate(value, "'_id'", repr(value), where)
    return value


_SURROGATE = re.compile("[\ud800-\udfff]")


def _refuse_surrogate(text: str, field: str, shown: str, where: str) -> None:
    """A ``\\ud800``-style JSON escape gives half a UTF-16 pair, which no UTF-8 text holds: it would
    fail later, naming neither the record nor the file."""
    found = _SURROGATE.search(text)
    if found is not None:
        raise ValueError(
            f"{where}: {field} {shown} holds a lone surrogate {found.group()!r} at position {found.start()} (half of a "
            "UTF-16 pair, written as a \\u escape), which UTF-8 text cannot hold"
        )


def _record_str(record: Mapping[str, Any], key: str, where: str, *, required: bool) -> str:
    value = record.get(key)
    if value is None:
        if required:
            raise ValueError(f"{where}: record has no {key!r}")
        return ""
    if not isinstance(value, str):
        raise ValueError(f"{where}: {key!r} must be a string (got {json_type(value)})")
    return value


def iter_texts(path: str, *, corpus: bool) -> Iterator[tuple[str, str]]:
    """``(id, text)`` for each record of a BEIR ``corpus.jsonl`` / ``queries.jsonl``, read streaming,
    as strictly as :func:`read_beir` reads it; only the ids seen are kept (to name a duplicate's lines).
    ``ef.datasets`` streams a large corpus through it."""
    first_line: dict[str, int] = {}
    for number, record in iter_json_objects(path):
        where = f"{path}:{number}"
        record_id = _record_id(record, where)
        if record_id in first_line:
            raise ValueError(f"{where}: duplicate _id {record_id!r} (first on line {first_line[record_id]})")
        text = _record_str(record, "text", where, required=True)
        kind = "doc" if corpus else "query"
        _refuse_surrogate(text, "'text'", f"of {kind} {record_id!r}", where)
        if corpus:
            # BEIR's convention: the title, a space, the text; the text alone when untitled.
            title = _record_str(record, "title", where, required=False)
            _refuse_surrogate(title, "'title'", f"of {kind} {record_id!r}", where)
            text = f"{title} {text}" if title else text
        first_line[record_id] = number
        yield record_id, text


def _read_texts(path: str, *, corpus: bool) -> dict[str, str]:
    return dict(iter_texts(path, corpus=corpus))


def _directory(directory: object) -> str:
    """`directory` as a str path; bytes or None would fail inside ``os.path.join`` naming neither."""
    if not isinstance(directory, str | os.PathLike) or not isinstance(path := os.fspath(directory), str):
        raise TypeError(f"'directory' must be a str or os.PathLike[str] (got {type(directory).__name__})")
    return path


def read_beir(directory: str | os.PathLike[str], *, qrels: str | None = None) -> Triple:
    """Load a BEIR-format dataset from disk into the in-memory evaluation triple.

    Reads ``corpus.jsonl`` (records ``{"_id", "title", "text"}``), ``queries.jsonl`` (records
    ``{"_id", "text"}``) and a ``qrels`` TSV (``query-id``, ``corpus-id``, ``score`` columns).
    The corpus text is the record's ``title`` and ``text`` joined — the BEIR convention:
    ``title + " " + text`` when the title is non-empty, else ``text``.

    Each file may instead be gzip-compressed with a ``.gz`` suffix (``corpus.jsonl.gz`` is read
    when ``corpus.jsonl`` is absent). Lines end in LF or CRLF; blank lines are skipped; the qrels
    header row is optional (a first row whose score column is ``score``, ``relevance``, ``rel``,
    ``grade`` or ``label`` is one; any other word there is reported as a bad grade).
    Extra JSON keys (``metadata``) are ignored; an integer ``_id`` is read as its decimal text.
    Grades are ``int`` when integral and ``float`` otherwise, as :func:`ef.trec.read_qrels` reads
    the same file (one reader serves both); they may be negative or zero. The qrels file may also
    be a TREC qrels file (four columns).

    Parameters
    ----------
    directory
        The dataset directory.
    qrels
        The qrels file, relative to `directory`. ``None`` tries ``_DEFAULT_QRELS_PATHS``
        (``qrels/test.tsv``, then ``qrels.tsv``) in order.

    Returns
    -------
    tuple
        A ``(corpus, queries, qrels)`` triple — `corpus` and `queries` are ``{id: text}`` dicts,
        `qrels` is ``{query_id: {doc_id: relevance}}``, all in file order. Feed it straight to
        :func:`evaluate_retrieval` (after indexing `corpus`).

    Raises
    ------
    FileNotFoundError
        If ``corpus.jsonl``, ``queries.jsonl`` or the qrels file is missing (the message names
        the path looked for).
    ValueError
        For a malformed line, naming ``file:line``: invalid UTF-8 or JSON, a record that is not
        an object or has no ``_id`` or ``text``, a duplicate id, a qrels row without exactly
        three tab-separated columns, an empty id, a grade that is not a finite number, or a
        (query, doc) pair judged twice.

    Examples
    --------
    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> write_beir(folder, {'d1': 'Paris is in France.'}, {'q1': 'Where is Paris?'},
    ...            {'q1': {'d1': 1}})
    >>> corpus, queries, qrels = read_beir(folder)
    >>> corpus, queries, qrels
    ({'d1': 'Paris is in France.'}, {'q1': 'Where is Paris?'}, {'q1': {'d1': 1}})
    """
    root = _directory(directory)
    if qrels is not None and not isinstance(qrels, str):
        raise TypeError(f"'qrels' must be a str path relative to 'directory', or None (got {type(qrels).__name__})")
    if qrels is None:
        for candidate in _DEFAULT_QRELS_PATHS:
            path = os.path.join(root, candidate)
            if os.path.exists(path) or os.path.exists(path + ".gz"):
                qrels_path = path
                break
        else:
            tried = ", ".join(_DEFAULT_QRELS_PATHS)
            raise FileNotFoundError(errno.ENOENT, f"no BEIR qrels file ({tried} or their .gz) in directory", root)
    else:
        qrels_path = os.path.join(root, qrels)
    corpus_path = _locate(os.path.join(root, "corpus.jsonl"))
    queries_path = _locate(os.path.join(root, "queries.jsonl"))
    qrels_path = _locate(qrels_path)
    return (
        _read_texts(corpus_path, corpus=True),
        _read_texts(queries_path, corpus=False),
        read_qrels(qrels_path),
    )


# --- writing --------------------------------------------------------------------------------------


def _check_id(value: object, container: str) -> str:
    """An id of `container` (``'corpus'``, ``'qrels['q1']'``) that a BEIR qrels TSV can hold."""
    if not isinstance(value, str):
        raise TypeError(f"{container} has an id that is not a str: {value!r} ({type(value).__name__})")
    if not value:
        raise ValueError(f"{container} has an empty id")
    unsafe = _TSV_UNSAFE.search(value)
    if unsafe:
        raise ValueError(f"{container} id {value!r} contains {unsafe.group()!r}, which a BEIR qrels TSV cannot hold")
    if value != value.strip(_ASCII_SPACE):
        raise ValueError(f"{container} id {value!r} has surrounding whitespace, which a qrels reader cannot tell apart")
    # BEIR reads qrels with csv.QUOTE_MINIMAL, which would strip a leading quote as quoting.
    if value.startswith('"'):
        raise ValueError(f"{container} id {value!r} starts with '\"', which BEIR's qrels reader takes as quoting")
    return value


def _check_texts(texts: object, name: str) -> Mapping[str, str]:
    if not isinstance(texts, Mapping):
        raise TypeError(f"'{name}' must be a mapping of id -> text (got {type(texts).__name__})")
    for key, text in texts.items():
        _check_id(key, f"'{name}'")
        if not isinstance(text, str):
            raise TypeError(f"'{name}[{key!r}]' must be a str (got {type(text).__name__})")
    return texts


def _check_qrels(qrels: object) -> Mapping[str, Mapping[str, float]]:
    if not isinstance(qrels, Mapping):
        raise TypeError(f"'qrels' must be a mapping of query id -> {{doc id: grade}} (got {type(qrels).__name__})")
    for query_id, judged in qrels.items():
        _check_id(query_id, "'qrels'")
        if not isinstance(judged, Mapping):
            raise TypeError(f"'qrels[{query_id!r}]' must be a mapping of doc id -> grade (got {type(judged).__name__})")
        if not judged:
            raise ValueError(f"'qrels[{query_id!r}]' is empty; a qrels TSV cannot hold a query without judgements")
        for doc_id, grade in judged.items():
            where = f"'qrels[{query_id!r}][{doc_id!r}]'"
            _check_id(doc_id, f"'qrels[{query_id!r}]'")
            if isinstance(grade, bool) or not isinstance(grade, numbers.Real):
                raise TypeError(f"{where} must be a number (got {type(grade).__name__})")
            try:
                finite = math.isfinite(float(grade))
            except OverflowError:  # an int beyond the float range
                finite = False
            if not finite:
                raise ValueError(f"{where} must be a finite number (got {grade!r})")
    return qrels


def _format_grade(grade: float) -> str:
    """The shortest text that reads back as exactly `grade`: ``1`` for 1.0, else ``repr``."""
    value = float(grade)
    negative_zero = value == 0 and math.copysign(1.0, value) < 0
    if value.is_integer() and abs(value) < 2**53 and not negative_zero:
        return str(int(value))
    return repr(value)  # repr round-trips every finite float, -0.0 included


def _write_lines(stream: IO[bytes], lines: Iterator[tuple[str, str]]) -> None:
    """Write ``(label, line)`` pairs as UTF-8; `label` names the entry if it cannot be encoded."""
    for label, line in lines:
        try:
            stream.write(line.encode("utf-8"))
        except UnicodeEncodeError as error:
            raise ValueError(f"{label} is not encodable as UTF-8 ({error.reason})") from None


def write_beir(
    directory: str | os.PathLike[str],
    corpus: Mapping[str, str],
    queries: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, float]],
) -> None:
    """Write an evaluation triple to disk in BEIR format — the inverse of :func:`read_beir`.

    Creates `directory` (and parents) and writes ``corpus.jsonl``, ``queries.jsonl`` and
    ``qrels.tsv``. Use it to snapshot an ``ef`` corpus as a reusable benchmark. Into an existing
    BEIR folder, one with ``qrels/test.tsv`` (or its ``.gz``), the qrels go to ``qrels/test.tsv``
    instead: the file :func:`read_beir` and ``ef eval`` read first, so both read back what was
    written, never the old judgements (other splits, ``qrels/train.tsv`` say, stay as they are).

    ``read_beir(directory)`` gives back exactly the triple written: each document is written as
    ``{"_id": id, "title": "", "text": text}`` (an empty title, so the text is not split or
    joined), JSON keeps non-ASCII text as UTF-8, and grades are written as integers when they
    are whole numbers and as ``repr`` otherwise, both of which read back as the same float.

    All input is checked before anything is written. Each file is written to a temporary file
    in `directory` and moved into place with ``os.replace`` only once all three are complete, so
    an error leaves no partial file behind (a crash between the three moves can still leave a
    mix of old and new files). Symlinks are followed and existing files keep their permissions,
    as with every ef writer (:mod:`ef.io._atomic`).

    Parameters
    ----------
    directory
        The output directory — created if absent.
    corpus
        The documents — ``{doc_id: text}``.
    queries
        The queries — ``{query_id: query_text}``.
    qrels
        The relevance judgements — ``{query_id: {doc_id: relevance}}``.

    Raises
    ------
    ValueError
        If an id is empty, contains a tab, line feed or carriage return (a qrels TSV cannot
        hold it) or starts with ``"`` (BEIR's csv reader would unquote it); if a query's
        judgements are empty (the TSV has no row for it); if a grade is not finite; or if a text
        cannot be encoded as UTF-8 (a lone surrogate). The message names the offending entry.
    TypeError
        If an argument or an entry has the wrong type.

    Examples
    --------
    >>> import os, tempfile
    >>> folder = os.path.join(tempfile.mkdtemp(), 'snapshot')
    >>> write_beir(folder, {'d1': 'Über uns'}, {'q1': 'who?'}, {'q1': {'d1': 2, 'd2': 0.5}})
    >>> sorted(os.listdir(folder))
    ['corpus.jsonl', 'qrels.tsv', 'queries.jsonl']
    >>> print(open(os.path.join(folder, 'qrels.tsv')).read(), end='')
    query-id	corpus-id	score
    q1	d1	2
    q1	d2	0.5
    >>> read_beir(folder)[0]
    {'d1': 'Über uns'}
    """
    corpus = _check_texts(corpus, "corpus")
    queries = _check_texts(queries, "queries")
    qrels = _check_qrels(qrels)
    root = _directory(directory)
    os.makedirs(root, exist_ok=True)

    def corpus_lines() -> Iterator[tuple[str, str]]:
        for doc_id, text in corpus.items():
            record = {"_id": doc_id, "title": "", "text": text}
            yield f"'corpus[{doc_id!r}]'", json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n"

    def query_lines() -> Iterator[tuple[str, str]]:
        for query_id, text in queries.items():
            record = {"_id": query_id, "text": text}
            yield f"'queries[{query_id!r}]'", json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n"

    def qrels_lines() -> Iterator[tuple[str, str]]:
        yield "header", "\t".join(_QRELS_HEADER) + "\n"
        for query_id, judged in qrels.items():
            for doc_id, grade in judged.items():
                yield f"'qrels[{query_id!r}][{doc_id!r}]'", f"{query_id}\t{doc_id}\t{_format_grade(grade)}\n"

    # The qrels go where read_beir looks first, else an old qrels/test.tsv would shadow them.
    nested = os.path.join(root, _DEFAULT_QRELS_PATHS[0])
    qrels_name = _DEFAULT_QRELS_PATHS[0] if any(os.path.exists(nested + gz) for gz in ("", ".gz")) else "qrels.tsv"
    jobs = [("corpus.jsonl", corpus_lines()), ("queries.jsonl", query_lines()), (qrels_name, qrels_lines())]
    with atomic_files([os.path.join(root, name) for name, _ in jobs]) as streams:
        for stream, (_, lines) in zip(streams, jobs, strict=True):
            _write_lines(stream, lines)
