"""trec_eval's ranking order, written once: score descending, then doc id descending.

Every ranking ef.fusion forms (an input run's ranks, a normalisation by rank, the fused output)
goes through :func:`trec_order`. Doc ids are compared through integer codes whose order is the
ids' byte-wise order on UTF-8 (Python's ``str`` order is code-point order, which UTF-8 keeps), so
``"d9"`` ranks before ``"d10"`` on a tie, as trec_eval's ``strcmp`` puts it.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["trec_order"]

_SMALL = 32  # below this many entries per group on average, one global sort is faster than a loop


def trec_order(
    group: npt.NDArray[np.int64], score: npt.NDArray[np.float64], doc: npt.NDArray[np.int64]
) -> npt.NDArray[np.intp]:
    """The permutation that sorts entries by `group` ascending, then `score` descending, then `doc` descending.

    `doc` holds codes whose ascending order is the ids' byte order; a caller that ranks positions
    rather than ids passes codes ordered so that the tie it wants first has the largest code.

    >>> trec_order(np.array([0, 0, 0]), np.array([1.0, 2.0, 1.0]), np.array([5, 3, 9])).tolist()
    [1, 2, 0]
    """
    n = len(group)
    if n < 2:
        return np.arange(n)
    new = group[1:] != group[:-1]
    upper, lower = score[:-1], score[1:]
    ordered = np.where(new, group[1:] > group[:-1], (upper > lower) | ((upper == lower) & (doc[:-1] > doc[1:])))
    if ordered.all():  # already in order, as most runs are (read_run keeps the file's order)
        return np.arange(n)
    starts = np.flatnonzero(np.r_[True, new])
    if len(starts) * _SMALL > n or len(np.unique(group[starts])) != len(starts):
        # lexsort's last key is the primary one; negating turns its ascending sort into descending.
        # -0.0 and 0.0 compare equal, as they do in trec_eval.
        return np.lexsort((-doc, -score, group))
    # Each group in one block (lists of a run, queries of a fused run): sorting block by block
    # costs n log(block) rather than three passes of n log n over everything.
    ends = np.r_[starts[1:], n]
    blocks = np.argsort(group[starts], kind="stable")
    parts = [
        lo + np.lexsort((-doc[lo:hi], -score[lo:hi]))
        for lo, hi in zip(starts[blocks].tolist(), ends[blocks].tolist(), strict=True)
    ]
    return np.concatenate(parts)
