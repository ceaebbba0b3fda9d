"""Ingest a corpus and search it: the retrievers that :func:`ef.evaluation.evaluate_retrieval` scores.

- :func:`ingest` indexes a corpus (``{doc_id: text}``, as :func:`ef.evaluation.read_beir` returns
  it) and returns a :class:`SearchableCorpus` with ``search`` and batched ``search_many``;
  indexes save to a directory and load back (:meth:`SearchableCorpus.save` / :meth:`~SearchableCorpus.load`).
- :class:`SourceManager` grows source by source and answers ``retrieve(query, limit=...)``.
- Every search returns :class:`SearchHit`\\ s — a :class:`~ef.segments.Segment`, its score, its rank.

Embedders are named by string: ``"bm25"`` (default), ``"st:<model>"`` (sentence-transformers,
in the ``dense`` extra) and ``"hybrid:st:<model>"`` (reciprocal rank fusion of the two).
Importing this module is cheap: the index machinery (numpy, bm25s, torch, sentence-transformers)
loads on first use of a name that needs it, so :mod:`ef.evaluation` can check for a
:class:`SearchHit` without paying for it.

>>> from ef.source_manager import ingest
>>> index = ingest({"d1": "Rust is a systems language.", "d2": "Python is a scripting language."},
...                show_progress=False)
>>> index.search("python scripts")[0].segment.source_id
'd2'
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ef.retrieval import SearchHit

if TYPE_CHECKING:
    from ef.source_manager._collection import FORMAT_VERSION
    from ef.source_manager._corpus import SearchableCorpus, ingest
    from ef.source_manager._embedders import EmbedderSpec, parse_embedder
    from ef.source_manager._manager import SourceManager

__all__ = [
    "FORMAT_VERSION",
    "EmbedderSpec",
    "SearchHit",
    "SearchableCorpus",
    "SourceManager",
    "ingest",
    "parse_embedder",
]

_LAZY = {
    "FORMAT_VERSION": "ef.source_manager._collection",
    "EmbedderSpec": "ef.source_manager._embedders",
    "SearchableCorpus": "ef.source_manager._corpus",
    "SourceManager": "ef.source_manager._manager",
    "ingest": "ef.source_manager._corpus",
    "parse_embedder": "ef.source_manager._embedders",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value  # resolve once
        return value
    raise AttributeError(f"module 'ef.source_manager' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
