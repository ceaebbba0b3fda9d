"""trec_eval's ranking order, written once: score descending, then doc id descending.

Every ranking ef.fusion forms (an input run's ranks, a normalisation by rank, the fused output)
goes through :func:`trec_order`, which the compiled engine runs (``ef.evaluation._hits``' door).
Doc ids are compared byte-wise on UTF-8, as trec_eval's ``strcmp`` does, so ``"d9"`` ranks
before ``"d10"`` on a tie.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ef.evaluation._engine import engine

__all__ = ["heads_of", "trec_order"]


def trec_order(
    group: npt.NDArray[np.int64], score: npt.NDArray[np.float64], doc: npt.NDArray[np.int64],
    heads: npt.NDArray[np.uint64], ids: list[str] | None = None,
) -> npt.NDArray[np.int64]:
    """The permutation that sorts entries by `group` ascending, then `score` descending, then doc id descending.

    `doc` holds codes into `heads` and `ids`: a code's head is its id's first 8 bytes read as a
    big-endian number (:func:`heads_of`), which orders most ids; on equal heads the ids decide.
    Without `ids`, the heads are codes that order alone (a caller that ranks positions passes
    codes ordered so that the tie it wants first has the largest). Entries equal in all keep
    their order.

    >>> ids = ["d9", "d1", "d10"]
    >>> trec_order(np.array([0, 0, 0]), np.array([1.0, 2.0, 1.0]), np.array([0, 1, 2]), heads_of(ids), ids).tolist()
    [1, 0, 2]
    """
    group = np.ascontiguousarray(group, dtype=np.int64)
    if len(group) and int(group.max()) - int(group.min()) > 4 * len(group):  # many empty lists between
        group = np.unique(group, return_inverse=True)[1].reshape(-1).astype(np.int64)
    order = engine.trec_order(
        group, np.ascontiguousarray(score, dtype=np.float64), np.ascontiguousarray(doc, dtype=np.int64),
        np.ascontiguousarray(heads, dtype=np.uint64), ids,
    )
    return np.frombuffer(order, dtype=np.int64)


def heads_of(ids: list[str]) -> npt.NDArray[np.uint64]:
    """Each id's first 8 UTF-8 bytes (zeros past its end) as a big-endian number: its tie order's head."""
    raw = [i.encode("utf-8", "surrogatepass")[:8].ljust(8, b"\0") for i in ids]
    return np.frombuffer(b"".join(raw), dtype=">u8").astype(np.uint64)
