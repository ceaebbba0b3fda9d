"""Scaling an index out: Ray sessions for distributed encoding and search, approximate (ANN) search.

The public names ``ef eval``'s scale flags (``--engine ray``, ``--ann``) use, so that no tool
reaches into :mod:`ef.source_manager`'s private modules: each optional dependency has its check
with the install hint (:func:`require_ray`, :func:`require_faiss`), :class:`AnnSpec` validates
an ANN kind and its parameters, :func:`dense_index` finds the dense part of an index, and
:func:`recall_against_exact` measures what approximate search loses.
"""

from __future__ import annotations

from typing import Any

from ef.source_manager import _ann, _ray
from ef.source_manager._ann import ANN_KINDS, QUERY_PARAMS, AnnSpec, recall_against_exact
from ef.source_manager._ray import ray_session

__all__ = [
    "ANN_KINDS",
    "QUERY_PARAMS",
    "AnnSpec",
    "dense_index",
    "ray_session",
    "recall_against_exact",
    "require_faiss",
    "require_ray",
]


def dense_index(index: Any) -> Any:
    """The dense part of a :class:`~ef.source_manager.SearchableCorpus` (itself, or a hybrid's), or ``None`` for bm25.

    It encodes queries (``encode_queries``), searches exactly (``exact_search``) and holds the
    ANN index, if any (``ann``).
    """
    inner = getattr(index._collection.index, "dense", index._collection.index)
    return inner if hasattr(inner, "exact_search") else None


def require_faiss() -> Any:
    """The ``faiss`` module; ``ImportError`` with the install command (``pip install 'ef-eval[ann]'``) without it."""
    return _ann.require_faiss()


def require_ray() -> Any:
    """The ``ray`` module; ``ImportError`` with the install command (``pip install 'ef-eval[ray]'``) without it."""
    return _ray.require_ray()
