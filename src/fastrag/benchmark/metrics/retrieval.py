"""Retrieval metrics: deterministic, free, fast — reach for these first.

Every metric looks at a *window*: the first `k` distinct documents of ``outcome.retrieved``,
where a document is identified by ``key`` — the chunk ``id``, or its ``source_uri`` for page-level
comparison. A document retrieved again (another chunk of the same page, or the same chunk twice)
keeps its first position and takes no second place in the window, so no metric can count it twice.
Positions are 1-based ranks within the window. The window is compared with the sample's distinct
``relevant_ids``; a sample without any scores ``None`` (missing), and an empty retrieval scores
``0.0`` on every metric.

Each metric is an entry of ef's measure registry (:data:`ef.measures.MEASURES`), whose per-query
kernel it applies to the window with every relevant id at grade 1: Recall is ``recall``, MRR
``recip_rank`` at k, HitRate ``success`` (trec_eval's ``success@k``). Two definitions are
fastrag's own and have their own registry names: Precision is ``precision_window`` (it divides by
the documents in the window, not by `k` as ef's ``precision@k`` does) and NDCG is ``ndcg_binary``
(binary gain, the ideal DCG over ``min(len(relevant), k)`` documents; on graded qrels ef's
``ndcg@k`` differs). Their summary keys stay ``precision@k`` and ``ndcg@k``; docs/fastrag.md
shows both definitions side by side. Any other ranking measure of the registry (``ERR@10``,
``RBP(p=0.8)``, ``ndcg_exp@10`` …) runs as a :class:`RankingMeasure`.

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

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar, Literal, get_args

from ef._validate import check_positive_int
from ef.measures import MEASURES, Measure, parse_measure, score_ranking
from fastrag.benchmark.metrics._base import Metric
from fastrag.benchmark.samples import EvalSample, QueryOutcome
from fastrag.documents import Chunk

__all__ = ["MRR", "NDCG", "HitRate", "Precision", "RankingMeasure", "Recall", "RetrievalMetric"]

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
    family: ClassVar[str] = ""
    """The registry entry (:data:`ef.measures.MEASURES`) whose per-query kernel this metric applies."""

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

    @cached_property
    def measure(self) -> Measure:
        """The registry measure this metric computes: its :attr:`family` at cutoff `k`."""
        return Measure(self.family, self.k)

    def _kernel(self, ranked: Sequence[str], relevant: Mapping[str, float]) -> float:
        """The score of a window: the registry's per-query kernel of :attr:`family`, at `k`."""
        return self.measure.score(ranked, relevant)

    @property
    def description(self) -> str:
        """The registry's definition of this metric."""
        return MEASURES[self.family].description


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
    family = "recall"

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
    family = "precision_window"

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
    family = "recip_rank"

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
    family = "ndcg_binary"

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
    family = "success"

    async def score(self, sample: EvalSample, outcome: QueryOutcome) -> float | None:
        """1.0 if any relevant document is in the window, else 0.0."""
        return self._measure(sample, outcome)


# Measures that read judged non-relevant (or unjudged) documents: a sample judges only its relevant ids.
_NEEDS_JUDGEMENTS = frozenset({"bpref", "gm_bpref", "infAP", "judged", "unj", "rbp_resid", "num_nonrel_judged_ret"})


@dataclass(frozen=True)
class RankingMeasure(Metric):
    """Any ranking measure of ef's registry, by name, over the distinct documents retrieved.

    For the measures the five classes above do not cover: ``ERR@10``, ``RBP(p=0.8)``,
    ``ndcg_exp@10``, ``AP``, ``R@100``, ``Rprec`` … A sample's relevant ids are its only
    judgements, each at grade 1, so the measures that read grades above 1 (``P(rel=2)@5``) or
    judged non-relevant documents (``Judged@10``, ``unj``, ``bpref``, ``infAP``, ``rbp_resid``)
    would measure nothing and are refused. The measure applies its own cutoff to the distinct
    retrieved documents; its name is the metric's :attr:`name` (with ``[source_uri]`` at page
    level).

    Parameters
    ----------
    measure
        A measure name in any spelling :func:`ef.measures.resolve` reads.
    key
        As for :class:`RetrievalMetric`.

    Raises
    ------
    ValueError
        For an unknown name, a name for several measures (``official``), a RAG measure, a
        measure that is not a mean of per-query values (``num_ret``, ``relstring``), or one that
        needs more judgements than relevant ids (see above).

    Examples
    --------
    >>> import asyncio
    >>> from fastrag.benchmark import EvalSample, QueryOutcome
    >>> from fastrag.documents import Chunk
    >>> outcome = QueryOutcome("q", "?", [Chunk("x", 0, ""), Chunk("a", 0, "")])
    >>> metric = RankingMeasure("ERR@10", key="source_uri")
    >>> metric.name, asyncio.run(metric.score(EvalSample("q", "?", ["a"]), outcome))
    ('ERR@10[source_uri]', 0.03125)
    """

    measure: str
    key: Key = "id"
    parsed: Measure = field(init=False, repr=False, compare=False)
    needs_relevant_ids: ClassVar[bool] = True
    """True when score() reads sample.relevant_ids."""

    def __post_init__(self) -> None:
        if not isinstance(self.measure, str):
            raise TypeError(f"'measure' must be a measure name as a str (got {self.measure!r})")
        if self.key not in _KEYS:
            raise ValueError(f"'key' must be one of {', '.join(map(repr, _KEYS))} (got {self.key!r})")
        parsed = parse_measure(self.measure)
        if not parsed.spec.scores_rankings or parsed.spec.aggregate != "mean":
            raise ValueError(
                f"'measure' must be a ranking measure averaged over queries (got {self.measure!r}, "
                f"a {'RAG measure' if not parsed.spec.scores_rankings else parsed.spec.summary})"
            )
        if parsed.family in _NEEDS_JUDGEMENTS or (parsed.rel or 1) > 1:
            raise ValueError(
                f"'measure' must not need grades or judged non-relevant documents, which a sample's relevant ids "
                f"do not have (got {self.measure!r})"
            )
        object.__setattr__(self, "parsed", parsed)
        object.__setattr__(self, "higher_is_better", parsed.spec.higher_is_better)

    @property
    def name(self) -> str:
        """The summary key: the measure's name as given (``"ERR@10"``, ``"ERR@10[source_uri]"``)."""
        return self.measure + ("" if self.key == "id" else f"[{self.key}]")

    async def score(self, sample: EvalSample, outcome: QueryOutcome) -> float | None:
        """The measure of the distinct retrieved documents, or None when the sample has no relevant ids."""
        if not sample.relevant_ids:
            return None
        retrieved = outcome.retrieved
        values = [chunk.id for chunk in retrieved] if self.key == "id" else [chunk.source_uri for chunk in retrieved]
        return score_ranking(self.parsed, list(dict.fromkeys(values)), dict.fromkeys(sample.relevant_ids, 1.0))
