"""One scored cell of a sweep: its pipeline, scores and costs (:class:`CellResult`).

The sweep as a whole, its comparison and its renderings are :class:`~ef.sweep._report.SweepResult`,
which reads these cells; nothing here imports it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ef.pipeline import Pipeline

__all__ = ["CellResult", "per_query_table"]


@dataclass(frozen=True)
class CellResult:
    """One scored pipeline of a sweep.

    ``metrics`` are the means over the sweep's queries, ``per_query[query_id][measure]`` the
    values (scored at the source level: see :func:`ef.pipeline.collapse_to_sources`);
    ``ci_low``/``ci_high`` bound the primary measure's mean (percentile bootstrap).
    ``latency_ms`` is the mean time per query of the first stage (its share of a batch, query
    encoding included) plus the reranker; ``index_bytes`` and ``build_seconds`` are the index's
    size and what chunking, tokenizing, BM25 indexing and encoding took (recorded when first
    computed, so a cached index reports its real cost). ``loaded``: read back from the sweep's
    folder instead of scored by this call.
    """

    pipeline: Pipeline
    metrics: Mapping[str, float]
    per_query: Mapping[str, Mapping[str, float]]
    ci_low: float
    ci_high: float
    retrieve_ms: float
    rerank_ms: float
    index_bytes: int
    build_seconds: float
    run_path: str | None
    loaded: bool

    @property
    def id(self) -> str:
        return self.pipeline.id

    @property
    def label(self) -> str:
        return self.pipeline.label

    @property
    def latency_ms(self) -> float:
        return self.retrieve_ms + self.rerank_ms

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "label": self.label,
            "pipeline": self.pipeline.to_dict(),
            "metrics": dict(self.metrics),
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "latency_ms": self.latency_ms,
            "retrieve_ms": self.retrieve_ms,
            "rerank_ms": self.rerank_ms,
            "index_bytes": self.index_bytes,
            "build_seconds": self.build_seconds,
            "run": self.run_path,
            "loaded": self.loaded,
        }


def per_query_table(cells: Sequence[CellResult], measure: str) -> dict[str, dict[str, float]]:
    """``{label: {query_id: value}}`` of one measure (what a comparison pairs)."""
    return {c.label: {q: v[measure] for q, v in c.per_query.items()} for c in cells}
