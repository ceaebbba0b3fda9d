"""Deterministic top-k selection over a score vector."""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["Ranking", "merge_top_k", "top_k"]

Ranking = tuple[npt.NDArray[np.int64], npt.NDArray[np.float32]]
"""Segment positions, best first, and their scores."""


def top_k(scores: npt.NDArray[np.floating], k: int, *, minimum: float | None = None) -> Ranking:
    """The `k` best positions of `scores`, by score descending and then position ascending.

    Ties are broken by position so a ranking never depends on the sort algorithm; positions whose
    score is not above `minimum` (when given) are left out.

    >>> top_k(np.array([0.5, 2.0, 0.5, 1.0], dtype=np.float32), 3)
    (array([1, 3, 0]), array([2. , 1. , 0.5], dtype=float32))
    >>> top_k(np.array([0.0, 3.0, 0.0], dtype=np.float32), 3, minimum=0.0)
    (array([1]), array([3.], dtype=float32))
    """
    candidates = np.flatnonzero(scores > minimum) if minimum is not None else np.arange(len(scores), dtype=np.int64)
    if len(candidates) > k:
        values = scores[candidates]
        kth = np.partition(values, len(values) - k)[len(values) - k]
        above = candidates[values > kth]
        # Among the scores equal to the k-th best, the earliest positions make the cut.
        tied = candidates[values == kth][: k - len(above)]
        candidates = np.concatenate([above, tied])
    order = np.lexsort((candidates, -scores[candidates]))
    chosen = candidates[order].astype(np.int64, copy=False)
    return chosen, scores[chosen].astype(np.float32, copy=False)


def merge_top_k(rankings: Sequence[Ranking], k: int) -> Ranking:
    """The `k` best of several rankings over disjoint positions (one per shard), as :func:`top_k` orders them.

    Each input is sorted by score descending, then position ascending (as :func:`top_k` returns
    it), so a heap merge reads only the heads it needs: the result equals :func:`top_k` over the
    concatenated scores, without ever holding one score vector for the whole corpus.

    >>> merge_top_k([(np.array([4, 0]), np.array([0.9, 0.5], dtype=np.float32)),
    ...              (np.array([7, 2]), np.array([0.9, 0.7], dtype=np.float32))], 3)
    (array([4, 7, 2]), array([0.9, 0.9, 0.7], dtype=float32))
    """
    merged = heapq.merge(
        *(zip((-scores).tolist(), positions.tolist(), strict=True) for positions, scores in rankings)
    )
    best = list(itertools.islice(merged, k))
    return (
        np.array([p for _, p in best], dtype=np.int64),
        np.array([-s for s, _ in best], dtype=np.float32),
    )
