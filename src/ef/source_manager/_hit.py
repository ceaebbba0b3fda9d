"""The result type every ef retriever returns."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ef.segments import Segment

__all__ = ["SearchHit"]


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One ranked search result: a segment, its score and its 1-based rank.

    >>> hit = SearchHit(Segment("doc-1", 0, "Hello", 0, 5), score=3.5, rank=1)
    >>> hit.segment.source_id, hit.rank
    ('doc-1', 1)
    """

    segment: Segment
    score: float
    rank: int

    def __post_init__(self) -> None:
        if not isinstance(self.segment, Segment):
            raise TypeError(f"'segment' must be a Segment (got {type(self.segment).__name__})")
        if math.isnan(self.score):
            raise ValueError("'score' must not be NaN")
        if self.rank < 1:
            raise ValueError(f"'rank' must be >= 1 (got {self.rank!r})")
