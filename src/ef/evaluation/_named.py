"""``ef.evaluation.evaluate_retrieval``: a dataset named by a string or a path is loaded here.

:mod:`ef.evaluation._retrieval` scores; a loaded :class:`~ef.datasets.Dataset` calls it from
:meth:`~ef.datasets.Dataset.evaluate`, so it must not import :mod:`ef.datasets._load` back. This
face sits above both: it loads what `qrels` names (its judgements and query texts, not its
corpus: the retriever holds that) and hands the dataset on; every other argument, and every
error, is :func:`~ef.evaluation._retrieval.evaluate_retrieval`'s.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from ef.datasets._load import Dataset, load
from ef.evaluation import _retrieval
from ef.evaluation._retrieval import RetrievalEvalReport

__all__ = ["evaluate_retrieval"]


def evaluate_retrieval(
    retriever: Any,
    qrels: Mapping[str, Mapping[str, float]] | str | os.PathLike[str] | Dataset,
    queries: Mapping[str, str] | None = None,
    *,
    k_values: Sequence[int] = (1, 5, 10, 100),
    metrics: Sequence[str] = ("ndcg", "recall", "precision", "mrr", "map"),
    limit: int | None = None,
    ignore_identical_ids: bool | None = None,
    run_path: str | os.PathLike[str] | None = None,
    show_progress: bool = False,
    relevance_level: float | None = None,
) -> RetrievalEvalReport:
    # With `queries` given, a name or path is refused (by the scorer) before anything is read.
    if isinstance(qrels, str | os.PathLike) and queries is None:
        qrels = load(qrels, corpus=False)
    return _retrieval.evaluate_retrieval(
        retriever,
        qrels,
        queries,
        k_values=k_values,
        metrics=metrics,
        limit=limit,
        ignore_identical_ids=ignore_identical_ids,
        run_path=run_path,
        show_progress=show_progress,
        relevance_level=relevance_level,
    )


# One text for both: the scorer's docstring says what this function takes (a name or a path too).
evaluate_retrieval.__doc__ = _retrieval.evaluate_retrieval.__doc__
