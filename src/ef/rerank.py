"""Rerankers: one protocol, a callable over ``(query, candidates) -> scores``, higher is better.

- :class:`BiEncoderReranker`: the cosine between the query's and each candidate's embedding by a
  sentence-transformers model (``all-MiniLM-L6-v2`` runs offline from the ``dense`` extra);
  each distinct text is encoded once per reranker, and :meth:`~BiEncoderReranker.remember`
  hands it vectors encoded elsewhere (a sweep's cached index), so reranking costs no encoding.
- :class:`CrossEncoderReranker`: any sentence-transformers ``CrossEncoder`` given as a local
  directory; never downloaded.
- :func:`make_reranker` builds either from a spec (``"bi:MODEL"``, ``"cross:PATH"``,
  ``"minilm"``) and :func:`rerank` orders candidates with any reranker, plain functions included.

>>> def overlap(query, candidates):  # any callable is a reranker
...     words = set(query.split())
...     return [len(words & set(c.split())) for c in candidates]
>>> rerank("red apple", ["green pear", "red apple pie", "red car"], overlap)
[(1, 2.0), (2, 1.0), (0, 0.0)]
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ef._validate import check_device, check_non_empty_str, check_positive_int, check_str, describe
from ef.pipeline import parse_rerank

__all__ = ["BiEncoderReranker", "CrossEncoderReranker", "Reranker", "make_reranker", "rerank"]


@runtime_checkable
class Reranker(Protocol):
    """Scores each candidate text for a query; higher is better. Any such callable is one."""

    def __call__(self, query: str, candidates: Sequence[str]) -> Sequence[float]: ...


class BiEncoderReranker:
    """Cosine similarity of sentence-transformers embeddings (normalized, so an inner product).

    Parameters
    ----------
    model
        A model name or local directory, resolved as the ``st:`` embedders are (never
        downloaded): ``all-MiniLM-L6-v2`` is the copy the ``dense`` extra installs.
    device, batch_size
        Where and in what batches the model encodes.

    Texts are encoded once per reranker and remembered, so candidates that recur across
    queries (the same chunks, retrieved again) cost nothing the second time.
    """

    def __init__(self, model: str = "all-MiniLM-L6-v2", *, device: str | None = None, batch_size: int = 32) -> None:
        self.model = check_non_empty_str(model, "model")
        self.device = check_device(device)
        self.batch_size = check_positive_int(batch_size, "batch_size")
        self._vectors: dict[str, npt.NDArray[np.float32]] = {}
        self.encoded = 0  # texts this reranker encoded itself (not remembered ones)

    def __repr__(self) -> str:
        return f"BiEncoderReranker({self.model!r})"

    def remember(self, texts: Sequence[str], vectors: npt.NDArray[np.float32]) -> None:
        """Take `vectors` (one normalized row per text, from this model) instead of encoding `texts`.

        Raises
        ------
        TypeError
            If `texts` is not a list of str (a str's characters were remembered as texts).
        ValueError
            If `vectors` is not a 2-D array of one finite row of norm 1 per text, of the width of the
            vectors remembered before (a NaN row gave NaN scores; another width failed in a later call;
            a longer row scored as a closer one).
        """
        _check_texts(texts, "texts")
        matrix = np.asarray(vectors, dtype=np.float32)
        if matrix.ndim != 2 or len(matrix) != len(texts):
            raise ValueError(
                f"'vectors' must be a 2-D array of one row per text ({len(texts)}) (got shape {matrix.shape})"
            )
        if not np.isfinite(matrix).all():
            raise ValueError("'vectors' holds NaN or infinity: cosine scores of them would be NaN")
        width = next((len(v) for v in self._vectors.values()), matrix.shape[1])
        if len(matrix) and matrix.shape[1] != width:
            raise ValueError(f"'vectors' rows are {matrix.shape[1]} wide, the vectors remembered before {width}")
        norms = np.linalg.norm(matrix, axis=1)
        off = np.flatnonzero(np.abs(norms - 1) > 1e-3)  # float32 unit rows are within ~1e-6 of 1
        if len(off):  # an inner product of unnormalized rows is no cosine: longer texts would win
            raise ValueError(
                f"'vectors' row {off[0]} ({texts[off[0]]!r:.40}) has norm {norms[off[0]]:.4g}, not 1: cosine scores "
                "need normalized rows (divide each by its norm, or encode with normalize_embeddings=True)"
            )
        for text, row in zip(texts, matrix, strict=True):
            self._vectors.setdefault(text, row)

    def vectors(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """The normalized embedding of each text, encoding only those not seen before."""
        _check_texts(texts, "texts")
        new = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if new:
            from ef.source_manager._models import encode, load_model

            model = load_model(self.model, device=self.device)
            encoded = encode(model, new, batch_size=self.batch_size, show_progress=False)
            self.encoded += len(new)
            self.remember(new, encoded)
        if not texts:
            return np.empty((0, 0), dtype=np.float32)
        return np.stack([self._vectors[t] for t in texts])

    def __call__(self, query: str, candidates: Sequence[str]) -> list[float]:
        check_str(query, "query")
        if not _check_texts(candidates, "candidates"):
            return []
        matrix = self.vectors([query, *candidates])
        return [float(v) for v in matrix[1:] @ matrix[0]]


class CrossEncoderReranker:
    """A sentence-transformers ``CrossEncoder`` loaded from a local directory, offline.

    Raises
    ------
    ValueError
        If `path` is not an existing directory or does not hold a model CrossEncoder can load, or
        its model scores more than one label per pair (a reranker reads one score).
    ImportError
        Without sentence-transformers (the ``dense`` extra).
    """

    def __init__(self, path: str, *, device: str | None = None, batch_size: int = 32) -> None:
        check_non_empty_str(path, "path")
        device = check_device(device)
        directory = Path(path).expanduser()
        if not directory.is_dir():
            raise ValueError(
                f"cross-encoder {path!r} is not a local directory: ef never downloads models; "
                "pass the directory of a saved CrossEncoder (CrossEncoder.save)"
            )
        from ef.source_manager._models import _offline, _quiet_transformers, require_sentence_transformers

        st = require_sentence_transformers()
        self.path = str(directory)
        self.batch_size = check_positive_int(batch_size, "batch_size")
        with _offline():
            try:  # transformers' "Loading weights" bar hidden, as for a bi-encoder (-q could not silence it)
                with _quiet_transformers():
                    self._model = st.CrossEncoder(self.path, device=device, local_files_only=True)
            except Exception as error:
                raise ValueError(
                    f"cannot load a CrossEncoder from {self.path} offline ({type(error).__name__}: {error})"
                ) from error
        # A model of several labels (a passage classifier: 0 not relevant, 1 relevant) gives a row of
        # logits per pair; which one means "relevant" is the model's, so none is picked here.
        labels = getattr(self._model, "num_labels", 1)
        if labels != 1:
            raise ValueError(f"the CrossEncoder in {self.path} scores {labels} labels per pair (num_labels={labels}); "
                             "a reranker needs one relevance score per pair (num_labels=1)")

    def __repr__(self) -> str:
        return f"CrossEncoderReranker({self.path!r})"

    def __call__(self, query: str, candidates: Sequence[str]) -> list[float]:
        check_str(query, "query")
        if not _check_texts(candidates, "candidates"):
            return []
        scores = self._model.predict(
            [(query, c) for c in candidates], batch_size=self.batch_size, show_progress_bar=False,
            convert_to_numpy=True,
        )
        return [float(s) for s in np.asarray(scores, dtype=np.float64).reshape(len(candidates), -1)[:, 0]]


def make_reranker(
    spec: str, *, device: str | None = None, batch_size: int = 32
) -> BiEncoderReranker | CrossEncoderReranker:
    """The reranker a spec names: ``bi:MODEL``, ``cross:PATH`` or ``minilm`` (``bi:all-MiniLM-L6-v2``).

    >>> make_reranker("minilm")
    BiEncoderReranker('all-MiniLM-L6-v2')
    >>> make_reranker("colbert")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: 'spec' must be 'bi:MODEL' (bi-encoder cosine), 'cross:PATH' (...) or 'minilm' (got 'colbert')
    >>> make_reranker("cross:/no/such/model")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: cross-encoder '/no/such/model' is not a local directory: ef never downloads models; ...
    """
    kind, model = parse_rerank(spec, "spec")
    if kind == "bi":
        return BiEncoderReranker(model, device=device, batch_size=batch_size)
    return CrossEncoderReranker(model, device=device, batch_size=batch_size)


def rerank(
    query: str,
    candidates: Sequence[str],
    reranker: Reranker | Callable[[str, Sequence[str]], Sequence[float]],
) -> list[tuple[int, float]]:
    """``(position in candidates, score)`` by the reranker's score, best first; ties keep their order.

    Raises
    ------
    ValueError
        If the reranker returns another number of scores than candidates, or a NaN or infinite score.
    TypeError
        If `candidates` is not a sequence of str (a single str would be reranked character by
        character), `reranker` is not callable, or it returns anything but a sequence of numbers.
    """
    check_str(query, "query")
    _check_texts(candidates, "candidates")
    if not callable(reranker):
        raise TypeError("'reranker' must be a Reranker or a callable (query, candidates) -> scores "
                        f"(got {type(reranker).__name__})")
    returned: object = reranker(query, candidates)
    if isinstance(returned, str | bytes) or not isinstance(returned, Iterable):
        raise TypeError(f"the reranker must return one score per candidate (got {describe(returned)})")
    scores = list(returned)
    if len(scores) != len(candidates):
        raise ValueError(f"the reranker returned {len(scores)} scores for {len(candidates)} candidates")
    checked = [_score(s, i) for i, s in enumerate(scores)]
    order = sorted(range(len(checked)), key=lambda i: -checked[i])  # stable: ties keep the first stage's order
    return [(i, checked[i]) for i in order]


def _check_texts(texts: object, name: str) -> Sequence[str]:
    """`texts` if it is a sequence of str (a single str would be read character by character)."""
    if isinstance(texts, str):
        raise TypeError(f"{name!r} must be a sequence of str texts, not a single str")
    if not isinstance(texts, Sequence):
        raise TypeError(f"{name!r} must be a sequence of str texts (got {type(texts).__name__})")
    for k, text in enumerate(texts):
        check_str(text, f"'{name}'[{k}]")
    return texts




def _score(value: object, position: int) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.floating | np.integer):
        raise TypeError(f"the reranker's score {position} must be a number (got {describe(value)})")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"the reranker's score {position} is {number!r}: scores must be finite")
    return number


_ = Mapping, Any  # typing names kept for readers of the protocol's signature
