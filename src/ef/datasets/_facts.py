"""A dataset's conventions (:class:`DatasetFacts`), in a module that imports nothing of ef.

:mod:`ef.evaluation._retrieval` reads a dataset's facts and judgements without importing
:mod:`ef.datasets._load`, whose :meth:`~ef.datasets.Dataset.evaluate` calls it: the facts are
the one class both need, so imports between the two packages go one way.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

__all__ = ["DatasetFacts", "JudgedSet"]


@dataclass(frozen=True, slots=True)
class DatasetFacts:
    """What a dataset's conventions are, for scoring it the way its publishers do.

    ``relevance_level``: the smallest grade that counts as relevant in binary measures (recall,
    precision, MRR, MAP): 1 for BEIR and MS MARCO dev, 2 for TREC DL. ``judges_non_relevant``:
    whether the qrels hold judgements of grade 0 or below (read from the qrels loaded).
    ``query_ids_are_doc_ids``: whether queries are documents of the corpus under the same id, so
    a query's own document must be dropped from its ranking (ArguAna, Quora; BEIR's
    ``ignore_identical_ids``).
    """

    relevance_level: int
    judges_non_relevant: bool
    query_ids_are_doc_ids: bool


class JudgedSet(Protocol):
    """What scoring reads of a loaded :class:`~ef.datasets.Dataset`: its name, judgements, query
    texts and facts."""

    @property
    def name(self) -> str: ...

    @property
    def qrels(self) -> Mapping[str, Mapping[str, float]]: ...

    @property
    def queries(self) -> Mapping[str, str]: ...

    @property
    def facts(self) -> DatasetFacts: ...
