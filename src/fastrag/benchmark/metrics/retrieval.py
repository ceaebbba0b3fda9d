"""Retrieval metrics: deterministic, free, fast — reach for these first.

Every metric looks at a *window*: the first `k` distinct documents of ``outcome.retrieved``,
where a document is identified by ``key`` — the chunk ``id``, or its ``source_uri`` for page-level
comparison. A document retrieved again (another chunk of the same page, or the same chunk twice)
keeps its first position and takes no second place in the window, so no metric can count it twice.
Positions are 1-based ranks within the window. The window is compared with the sample's distinct
``relevant_ids``; a sample without any scores ``None`` (missing), and an empty retrieval scores
``0.0`` on every metric.

Recall, MRR and NDCG are ef's per-query kernels (:mod:`ef.evaluation`) applied to the window with
every relevant id at grade 1; NDCG is therefore binary-gain with the ideal DCG over
``min(len(relevant), k)`` documents. Precision divides by the number of documents in the window
(not by `k` as ef's ``precision_at_k`` does), and HitRate is trec_eval's ``success@k``.

Examples
--------
>>> import asyncio
>>> from fastrag.documents import Chunk
>>> from fastrag.benchmark import EvalSample, QueryOutcome
>>> a0, a1, b0, c0 = Chunk("a", 0, "A0"), Chunk("a", 1, "A1"), Chunk("b", 0, "B0"), Chunk("c", 0, "C0")
>>> outcome = QueryOutcome("q", "?", [a0, a1, b0, c0])
>>> sample = EvalSample("q", "?", [b0.id, c0.id])
>>> asyncio.run(Recall(k=3).score(sample, outcome))  # b0 is in the top 3 chunks, c0 is not
0.5
>>> page_sample = EvalSample("q", "?", ["b", "c"])
>>> asyncio.run(Recall(k=3, key="source_uri").score(page_sample, outcome))  # pages a, b, c
1.0
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal, get_args

from ef._validate import check_positive_int
from ef.evaluation._ranking import ndcg_at_k, recall_at_k, reciprocal_rank
from fastrag.benchmark.metrics._base import Metric
from fastrag.benchmark.samples import EvalSample, QueryOutcome
from fastrag.documents import Chunk

__all__ = ["MRR", "NDCG", "HitRate", "Precision", "Recall", "RetrievalMetric"]

Key = Literal["id", "source_uri"]
_KEYS: tuple[str, ...] = get_args(Key)


def _window(retrieved: Sequence[Chunk], k: int, key: Key) -> list[str]:
    """The first `k` distinct keys of `retrieved`, each at its first position.

    >>> chunks = [Chunk("a", 0, "x"), Chunk("a", 1, "y"), Chunk("b", 0, "z")]
    >>> _window(chunks, 2, "source_uri")
    ['a', 'b']
    """
    values = [chunk.id for chunk in retrieved] if key == "id" else [chunk.source_uri for chunk in retrieved]
    # dict.fromkeys keeps each key at its first position, in C: the hot path of every metric.
    return list(dict.fromkeys(values))[:k]


def _precision(ranked: Sequence[str], relevant: Mapping[str, float]) -> float:
    if not ranked:
        return 0.0
    return sum(1 for doc_id in ranked if doc_id in relevant) / len(ranked)


def _hit_rate(ranked: Sequence[str], relevant: Mapping[str, float]) -> float:
    return 1.0 if any(doc_id in relevant for doc_id in ranked) else 0.0


@dataclass(frozen=True, kw_only=True)
class RetrievalMetric(Metric):
    """Shared machinery for the five ranking metrics below.

    Parameters
    ----------
    k
        How many of the retrieved documents to consider, best first.
    key
        Which field identifies a document for comparison against ``sample.relevant_ids``.
        ``"id"`` is the chunk id (sha256(source_uri, chunk_index, content)), which changes with
        every chunker configuration. ``"source_uri"`` compares at the page level, which survives
        a chunk-size sweep — pass it whenever the ground truth was authored per page rather than
        per chunk. The metric's :attr:`name` gains a ``[source_uri]`` suffix then, so both
        keys can run side by side.

    Raises
    ------
    TypeError
        If `k` is not an integer (``numpy.int64`` is one; ``True`` is not).
    ValueError
        If `k` is below 1 or `key` is not one of ``"id"``, ``"source_uri"``.

    Examples
    --------
    >>> Recall(k=10).name, Recall(k=10, key="source_uri").name
    ('recall@10', 'recall@10[source_uri]')
    >>> Recall(k=0)
    Traceback (most recent call last):
    ...
    ValueError: 'k' must be a positive integer (got 0)
    >>> Recall(key="url")
    Traceback (most recent call last):
    ...
    ValueError: 'key' must be one of 'id', 'source_uri' (got 'url')
    """

    k: int = 5
    key: Key = "id"
    needs_relevant_ids: ClassVar[bool] = True
    """True when score() reads sample.relevant_ids."""
    _label: ClassVar[str] = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "k", check_positive_int(self.k, "k"))  # numpy.int64(5) is 5
        if self.key not in _KEYS:
            raise ValueError(f"'key' must be one of {', '.join(map(repr, _KEYS))} (got {self.key!r})")

    @property
    def name(self) -> str:
        """The summary key, e.g. ``"recall@5"`` (``"recall@5[source_uri]"`` at page level)."""
        suffix = "" if self.key == "id" else f"[{self.key}]"
        return f"{self._label}@{self.k}{suffix}"

    def _measure(self, sample: EvalSample, outcome: QueryOutcome) -> float | None:
        if not sample.relevant_ids:
            return None
        relevant = dict.fromkeys(sample.relevant_ids, 1.0)
        return self._kernel(_window(outcome.retrieved, self.k, self.key), relevant)

    @abstractmethod
    def _kernel(self, ranked: Sequence[str], relevant: Mapping[str, float]) -> float:
        """The score of a window; pure and synchronous, one per metric."""


class Recall(RetrievalMetric):
    """``|relevant ∩ retrieved| / |relevant|``.

    >>> import asyncio
    >>> from fastrag.benchmark import EvalSample, QueryOutcome
    >>> from fastrag.documents import Chunk
    >>> outcome = QueryOutcome("q", "?", [Chunk("a", 0, ""), Chunk("b", 0, ""), Chunk("c", 0, "")])
    >>> asyncio.run(Recall(k=2, key="source_uri").score(EvalSample("q", "?", ["b", "c"]), outcome))
    0.5
    """

    _label = "recall"

    def _kernel(self, ranked: Sequence[str], relevant: Mapping[str, float]) -> float:
        return recall_at_k(ranked, relevant, self.k)

    async def score(self, sample: EvalSample, outcome: QueryOutcome) -> float | None:
        """Recall at k, or None when the sample has no relevant ids."""
        return self._measure(sample, outcome)


class Precision(RetrievalMetric):
    """``|relevant ∩ retrieved| / len(retrieved)``, over the documents in the window.

    A retrieval shorter than `k` divides by what was retrieved; an empty one scores ``0.0``.

    >>> import asyncio
    >>> from fastrag.benchmark import EvalSample, QueryOutcome
    >>> from fastrag.documents import Chunk
    >>> outcome = QueryOutcome("q", "?", [Chunk("a", 0, ""), Chunk("b", 0, "")])
    >>> asyncio.run(Precision(k=5, key="source_uri").score(EvalSample("q", "?", ["b"]), outcome))
    0.5
    """

    _label = "precision"

    def _kernel(self, ranked: Sequence[str], relevant: Mapping[str, float]) -> float:
        return _precision(ranked, relevant)

    async def score(self, sample: EvalSample, outcome: QueryOutcome) -> float | None:
        """Precision at k, or None when the sample has no relevant ids."""
        return self._measure(sample, outcome)


class MRR(RetrievalMetric):
    """``1 / (position of the first relevant)``, else ``0.0``.

    >>> import asyncio
    >>> from fastrag.benchmark import EvalSample, QueryOutcome
    >>> from fastrag.documents import Chunk
    >>> outcome = QueryOutcome("q", "?", [Chunk("a", 0, ""), Chunk("a", 1, ""), Chunk("b", 0, "")])
    >>> asyncio.run(MRR(key="source_uri").score(EvalSample("q", "?", ["b"]), outcome))  # page b is 2nd
    0.5
    """

    _label = "mrr"

    def _kernel(self, ranked: Sequence[str], relevant: Mapping[str, float]) -> float:
        return reciprocal_rank(ranked, relevant, self.k)

    async def score(self, sample: EvalSample, outcome: QueryOutcome) -> float | None:
        """Reciprocal rank of the first relevant hit, or None with no relevant ids."""
        return self._measure(sample, outcome)


class NDCG(RetrievalMetric):
    """Binary-gain NDCG, with the ideal ranking over ``min(len(relevant), k)``.

    >>> import asyncio
    >>> from fastrag.benchmark import EvalSample, QueryOutcome
    >>> from fastrag.documents import Chunk
    >>> outcome = QueryOutcome("q", "?", [Chunk("x", 0, ""), Chunk("a", 0, "")])
    >>> round(asyncio.run(NDCG(k=2, key="source_uri").score(EvalSample("q", "?", ["a"]), outcome)), 4)
    0.6309
    """

    _label = "ndcg"

    def _kernel(self, ranked: Sequence[str], relevant: Mapping[str, float]) -> float:
        return ndcg_at_k(ranked, relevant, self.k)

    async def score(self, sample: EvalSample, outcome: QueryOutcome) -> float | None:
        """Binary-gain NDCG at k, or None when the sample has no relevant ids."""
        return self._measure(sample, outcome)


class HitRate(RetrievalMetric):
    """``1.0`` if any relevant document is in the window, else ``0.0``.

    >>> import asyncio
    >>> from fastrag.benchmark import EvalSample, QueryOutcome
    >>> from fastrag.documents import Chunk
    >>> outcome = QueryOutcome("q", "?", [Chunk("x", 0, ""), Chunk("a", 0, "")])
    >>> asyncio.run(HitRate(k=1, key="source_uri").score(EvalSample("q", "?", ["a"]), outcome))
    0.0
    """

    _label = "hit_rate"

    def _kernel(self, ranked: Sequence[str], relevant: Mapping[str, float]) -> float:
        return _hit_rate(ranked, relevant)

    async def score(self, sample: EvalSample, outcome: QueryOutcome) -> float | None:
        """1.0 if any relevant document is in the window, else 0.0."""
        return self._measure(sample, outcome)
