"""A fused run as TREC text straight from its arrays: what ``write_run(path, fuse(...))`` writes.

``ef fuse`` skips the output mapping and :func:`ef.io.trec.format_run`'s per-line checks and
re-sort: the fused entries are already in trec_eval's order, the ids are checked in one pass (not
one call a line), and the text is built one query at a time. Where an id or a score could not be written,
the mapping goes through ``format_run`` after all, so the error is word for word the writer's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np

from ef.io.ids import check_trec_id

__all__ = ["fused_text"]

_SEPARATOR = re.compile("[ \t\n\r\x0b\x0c\x00]")  # TREC_SEPARATORS and NUL: what check_trec_id refuses


def _plain(ids: list[str]) -> bool:
    """Whether every id is a non-empty str that check_trec_id (and check_query_id) would pass."""
    if not all(type(i) is str and i for i in ids):
        return False
    joined = "".join(ids)
    try:
        joined.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return False
    return _SEPARATOR.search(joined) is None


def fused_text(queries: list[str], docs: list[str], query: np.ndarray, doc: np.ndarray, score: np.ndarray,
               run_id: str) -> Iterator[str] | None:
    """The TREC lines of the fused entries (codes into `queries`/`docs`), one str per query.

    ``None`` when an id or a score needs the writer's own checks (the caller then formats the
    mapping with ``format_run``, whose errors name the query and the doc).
    """
    check_trec_id(run_id, "'run_id'")
    if not len(query):
        return iter(())
    bounds = np.flatnonzero(np.r_[True, query[1:] != query[:-1], True])
    names = [queries[q] for q in query[bounds[:-1]].tolist()]
    ids = np.array(docs, dtype=object)[doc].tolist()  # the ids written, checked in one pass below
    if not (_plain(names) and _plain(ids) and not any(n.startswith("#") for n in names)
            and np.isfinite(score).all()):
        return None
    scores = score.tolist()
    edges = bounds.tolist()
    tail = f" {run_id}\n"

    def text() -> Iterator[str]:
        for name, lo, hi in zip(names, edges, edges[1:], strict=False):
            head = f"{name} Q0 "
            yield "".join([
                f"{head}{d} {rank} {s!r}{tail}"
                for d, rank, s in zip(ids[lo:hi], range(1, hi - lo + 1), scores[lo:hi], strict=True)
            ])

    return text()
