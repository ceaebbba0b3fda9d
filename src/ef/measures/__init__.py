"""The one measure registry: every measure ef computes, by every spelling it accepts.

- :data:`MEASURES`: the registry, one :class:`MeasureFamily` per family (``P``, ``ndcg_cut``,
  ``judged``, ``ndcg_binary``, ``exact_match`` …): canonical name, description, kind
  (``"score"``, ``"loss"``, ``"count"``, ``"text"``), parameters and defaults, aggregation, the
  per-query kernel and the name of the bulk kernel.
- :class:`Measure`: one measure with its parameters (``P_5``), checked when built, sortable,
  ``parse_measure(str(m)) == m``; :meth:`Measure.score` scores one ranking with the per-query
  kernel, :meth:`Measure.evaluate` every query of a :class:`~ef.measures.bulk.HitTable` at once.
- :func:`resolve`: a caller's list of names to ``(name as given, Measure)`` pairs — what
  ``evaluate_run``, ``ef trec-eval`` and the other readers of measure names call;
  :func:`parse_measure` reads one name, :func:`expand_measure_specs` trec_eval's ``-m`` list.
- :func:`score_ranking`: one measure of one ranking, by name, whichever kernel it has.
- :func:`register_measure`: a measure of your own, read by every reader of names
  (:func:`unregister_measure` removes it).

Importing this package imports no numpy: the bulk kernels (:mod:`ef.measures.bulk`, and
``HitTable`` here) load when a measure is computed over a run.

>>> from ef.measures import resolve
>>> [(name, str(m), m.spec.kind) for name, m in resolve(["nDCG@10", "num_ret"])]
[('nDCG@10', 'ndcg_cut_10', 'score'), ('num_ret', 'num_ret', 'count')]
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ef.measures.parse import (
    NICKNAMES,
    NICKNAMES_WITH_RUNID,
    cutoff_metric,
    expand_measure_spec,
    expand_measure_specs,
    parse_measure,
    resolve,
    valid_forms,
)
from ef.measures.registry import (
    MEASURES,
    RAG_MEASURES,
    RETRIEVAL_METRICS,
    Aggregate,
    Kind,
    Measure,
    MeasureFamily,
    Origin,
    ParamKind,
)
from ef.measures.user import register_measure, unregister_measure

if TYPE_CHECKING:
    from ef.measures.bulk import HitTable

__all__ = [
    "MEASURES",
    "NICKNAMES",
    "NICKNAMES_WITH_RUNID",
    "RAG_MEASURES",
    "RETRIEVAL_METRICS",
    "Aggregate",
    "HitTable",
    "Kind",
    "Measure",
    "MeasureFamily",
    "Origin",
    "ParamKind",
    "cutoff_metric",
    "expand_measure_spec",
    "expand_measure_specs",
    "parse_measure",
    "register_measure",
    "resolve",
    "score_ranking",
    "unregister_measure",
    "valid_forms",
]


def score_ranking(measure: str | Measure, ranked: Sequence[str], relevant: Mapping[str, float]) -> float:
    """One measure of one ranking: the per-query kernel where the measure has one, else its bulk kernel.

    `relevant` maps doc ids to grades (``{doc_id: grade}``; absent means unjudged). Unlike
    :meth:`Measure.score`, this scores every ranking measure of the registry (ERR, RBP, Judged …),
    through a one-query :class:`~ef.measures.bulk.HitTable` when no pure kernel exists.

    >>> score_ranking("ERR@10", ["x", "d1"], {"d1": 1})
    0.03125
    >>> score_ranking("ndcg@2", ["x", "d1"], {"d1": 1}) == score_ranking("nDCG@2", ["x", "d1"], {"d1": 1})
    True
    """
    m = measure if isinstance(measure, Measure) else parse_measure(measure)
    if not m.spec.scores_rankings:
        raise ValueError(f"measure {str(m)!r} scores RAG samples (evaluate_rag), not a ranking")
    if m.spec.per_query is not None:
        return m.score(ranked, relevant)
    from ef.measures.bulk import HitTable

    value = m.evaluate(HitTable.from_rankings([ranked], [relevant]))[0]
    if isinstance(value, str):
        raise ValueError(f"measure {str(m)!r} is a string per query, not a number")
    return float(value)


def __getattr__(name: str) -> Any:
    # HitTable needs numpy: imported on first use only.
    if name == "HitTable":
        value = importlib.import_module("ef.measures.bulk").HitTable
        globals()[name] = value
        return value
    raise AttributeError(f"module 'ef.measures' has no attribute {name!r}")
