"""The result type every ef retriever returns."""

from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

from ef.validate import finite_float
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
        score: object = self.score  # callers pass anything: check it as such
        rank: object = self.rank
        value = finite_float(score)
        if value is None:
            raise ValueError(f"'score' must be a finite number (got {score!r:.60})")
        if isinstance(rank, bool) or not isinstance(rank, Integral):
            raise TypeError(f"'rank' must be an int (got {type(rank).__name__})")
        if int(rank) < 1:
            raise ValueError(f"'rank' must be >= 1 (got {self.rank!r})")
        # Stored as Python numbers: a numpy float32 score would not survive json.dumps in a report.
        object.__setattr__(self, "score", value)
        object.__setattr__(self, "rank", int(rank))
