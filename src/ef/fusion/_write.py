"""A fused run as TREC text straight from its arrays: what ``write_run(path, fuse(...))`` writes.

``ef fuse`` skips the output mapping and :func:`ef.io.trec.format_run`'s per-line checks and
re-sort: the fused entries are already in trec_eval's order, every id is written once (a fused
run holds each (query, doc) pair once), so the ids are checked in one pass, and the compiled
engine writes the lines (:func:`ef.io.trec.ranked_text`). Where an id or a score could not be
written, the mapping goes through ``format_run`` after all, so the error is the writer's.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ef.io.ids import check_trec_id
from ef.io.trec import ranked_text

__all__ = ["fused_text"]


def fused_text(queries: list[str], docs: list[str], query: np.ndarray, doc: np.ndarray, score: np.ndarray,
               run_id: str) -> Iterator[str] | None:
    """The TREC text of the fused entries (codes into `queries`/`docs`, each doc code once), a
    few queries a str.

    ``None`` when an id or a score needs the writer's own checks (the caller then formats the
    mapping with ``format_run``, whose errors name the query and the doc).
    """
    check_trec_id(run_id, "'run_id'")
    if not len(query):
        return iter(())
    bounds = np.flatnonzero(np.r_[True, query[1:] != query[:-1], True]).astype(np.int64)
    names = [queries[q] for q in query[bounds[:-1]].tolist()]
    doc, score = np.ascontiguousarray(doc, dtype=np.int64), np.ascontiguousarray(score, dtype=np.float64)
    return ranked_text(names, bounds, docs, doc, score, run_id)
