"""A fused run as TREC text straight from its arrays: what ``write_run(path, fuse(...))`` writes.

``ef fuse`` skips the output mapping and :func:`ef.io.trec.format_run`'s per-line checks and
re-sort: the fused entries are already in trec_eval's order, every id is written once (a fused
run holds each (query, doc) pair once), so the ids are checked in one pass, and the compiled
engine writes the lines a few queries at a time. Where an id or a score could not be written,
the mapping goes through ``format_run`` after all, so the error is word for word the writer's.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ef.evaluation._hits import engine
from ef.io.ids import check_trec_id

__all__ = ["fused_text"]

_QUERIES = 64  # queries formatted per call: a few MB of text at a time


def fused_text(queries: list[str], docs: list[str], query: np.ndarray, doc: np.ndarray, score: np.ndarray,
               run_id: str) -> Iterator[str] | None:
    """The TREC lines of the fused entries (codes into `queries`/`docs`, each doc code once), one
    str per query.

    ``None`` when an id or a score needs the writer's own checks (the caller then formats the
    mapping with ``format_run``, whose errors name the query and the doc).
    """
    check_trec_id(run_id, "'run_id'")
    if not len(query):
        return iter(())
    bounds = np.flatnonzero(np.r_[True, query[1:] != query[:-1], True]).astype(np.int64)
    names = [queries[q] for q in query[bounds[:-1]].tolist()]
    doc = np.ascontiguousarray(doc, dtype=np.int64)
    score = np.ascontiguousarray(score, dtype=np.float64)
    if not (engine.writable(names, True) and engine.writable(docs, False) and np.isfinite(score).all()):
        return None

    def text() -> Iterator[str]:
        for at in range(0, len(names), _QUERIES):
            chunk = engine.run_text(names[at : at + _QUERIES], bounds[at : at + _QUERIES + 1], docs, doc, score, run_id)
            if chunk is None:  # pragma: no cover - every id and score was checked above
                raise RuntimeError("a fused id or score changed while it was written")
            yield from chunk

    return text()
