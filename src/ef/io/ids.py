"""What an id and a ranking must be to be written to a TREC file and read back the same.

The TREC readers split a line on ASCII whitespace only (``bytes.split()``: space, tab, LF, CR,
VT, FF), as trec_eval does, and stop at a NUL byte; any other character — a no-break space,
``\\x1c``, U+2028 — is part of the id. The writers accept exactly those ids, so that every id a
reader returns can be written back; and their errors name the query and the document.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from numbers import Real

import numpy as np

__all__ = ["TREC_SEPARATORS", "check_query_id", "check_ranking", "check_trec_id"]

TREC_SEPARATORS = frozenset(" \t\n\r\x0b\x0c")  # what bytes.split() splits a line on
_NAMES = {" ": "a space", "\t": "a tab", "\n": "a line feed", "\r": "a carriage return",
          "\x0b": "a vertical tab", "\x0c": "a form feed", "\x00": "a NUL"}


def check_trec_id(value: object, what: str) -> str:
    """`value` if it can be a column of a TREC line that reads back as itself, else ``ValueError``.

    >>> check_trec_id("doc\\xa01", "a doc id")  # a no-break space is part of the id, as read
    'doc\\xa01'
    >>> check_trec_id("doc 1", "a doc id of query 'q1'")
    Traceback (most recent call last):
    ...
    ValueError: a doc id of query 'q1' must not hold a space, which separates TREC columns (got 'doc 1')
    """
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} must be a non-empty str (got {value!r:.80})")
    for char in value:
        if char in TREC_SEPARATORS or char == "\x00":
            rule = "ends a TREC file for trec_eval" if char == "\x00" else "separates TREC columns"
            raise ValueError(f"{what} must not hold {_NAMES[char]}, which {rule} (got {value!r:.80})")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(
            f"{what} holds a lone surrogate {value[error.start]!r} at position {error.start}, which UTF-8 cannot "
            f"write (got {value!r:.80})"
        ) from None
    return value


def check_query_id(value: object, what: str = "a query id") -> str:
    """:func:`check_trec_id` for a query id, which also must not start with ``#`` (a comment line).

    >>> check_query_id("")
    Traceback (most recent call last):
    ...
    ValueError: a query id must be a non-empty str (got '')
    """
    query_id = check_trec_id(value, what)
    if query_id.startswith("#"):
        raise ValueError(f"{what} must not start with '#': its line would read as a comment (got {query_id!r:.80})")
    return query_id


def check_ranking(query_id: str, docs: object) -> list[tuple[float, str]]:
    """One query's ``{doc_id: score}`` as ``(score, doc_id)`` pairs, each checked, errors naming
    the query and the document.

    >>> check_ranking("q1", {"d1": 2, "d2": 0.5})
    [(2.0, 'd1'), (0.5, 'd2')]
    >>> check_ranking("q1", {"d1": 10**400})
    Traceback (most recent call last):
    ...
    ValueError: score of doc 'd1' in query 'q1' is too large for a float (got an integer beyond 1.8e308)
    >>> check_ranking("q1", ["d1", "d2"])
    Traceback (most recent call last):
    ...
    ValueError: the ranking of query 'q1' must be a mapping {doc_id: score} (got list)
    """
    if not isinstance(docs, Mapping):
        raise ValueError(f"the ranking of query {query_id!r:.80} must be a mapping {{doc_id: score}} "
                         f"(got {type(docs).__name__})")
    if not docs:
        raise ValueError(
            f"query {query_id!r:.80} has no documents: a TREC run file cannot hold an empty ranking "
            "(leave the query out)"
        )
    ranked: list[tuple[float, str]] = []
    for doc_id, score in docs.items():
        check_trec_id(doc_id, f"a doc id of query {query_id!r:.80}")
        where = f"score of doc {doc_id!r:.80} in query {query_id!r:.80}"
        if isinstance(score, bool | np.bool_) or not isinstance(score, Real | np.integer | np.floating):
            raise ValueError(f"{where} must be a number (got {score!r:.80})")
        try:
            value = float(score)
        except OverflowError:
            raise ValueError(f"{where} is too large for a float (got an integer beyond 1.8e308)") from None
        if math.isnan(value):
            raise ValueError(f"{where} is NaN")
        ranked.append((value, doc_id))
    return ranked
