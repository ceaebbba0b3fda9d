"""The lexical index: BM25 (Lucene variant) through bm25s, English stopwords and Snowball stemmer."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ef._console import Progress
from ef.source_manager._index import DAMAGED
from ef.source_manager._topk import Ranking, top_k

__all__ = ["BM25_PARAMS", "Bm25Index"]

# BEIR/Anserini's BM25 settings; the manifest records them so a saved index says how it scores.
BM25_PARAMS: dict[str, Any] = {
    "method": "lucene",
    "k1": 1.2,
    "b": 0.75,
    "token_pattern": r"(?u)\b\w\w+\b",
    "lowercase": True,
    "stopwords": "bm25s english",
    "stemmer": "snowball english (PyStemmer)",
}
# The token pattern's matches are the maximal runs of 2+ word characters, so its \b's decide
# nothing: without them the regex finds the same tokens in 0.77x the time (SciFact's corpus).
_SPLIT = re.compile(r"\w\w+").findall
BM25_DIR = "bm25"
_CHUNK = 4096  # texts per progress-bar update
_STOP = -1  # the id a stopword maps to in the word cache


def _require_bm25() -> Any:
    """The bm25s module; imported here, not at module level, to keep ``import ef`` light."""
    try:
        import bm25s
        import Stemmer  # noqa: F401  # checked here so that a missing stemmer fails at ingest
    except ImportError as error:  # pragma: no cover - both are core dependencies
        raise ImportError(
            f"embedder 'bm25' needs bm25s and PyStemmer ({error}): pip install bm25s PyStemmer"
        ) from error
    return bm25s


class _Tokenizer:
    """bm25s's tokenizer (lowercase, ``\\b\\w\\w+\\b``, English stopwords, Snowball stems), memoized.

    Same tokens as ``bm25s.tokenize(..., stopwords="en", stemmer=Stemmer("english"))``, but each
    distinct word is looked up, filtered and stemmed once for the whole corpus, and queries map
    straight to the index's token ids (bm25s rebuilds its stopword set for every document).
    """

    def __init__(self, vocab: dict[str, int]) -> None:
        import Stemmer
        from bm25s.stopwords import STOPWORDS_EN

        self._stemmer = Stemmer.Stemmer("english")
        self._stopwords = frozenset(STOPWORDS_EN)
        self.vocab = vocab  # stem -> token id, the id space of the bm25s index
        self._words: dict[str, int] = {}  # word -> token id, or _STOP

    def _word_id(self, word: str, grow: bool) -> int | None:
        if word in self._stopwords:
            self._words[word] = _STOP
            return _STOP
        stem = self._stemmer.stemWord(word)
        token = self.vocab.get(stem)
        if token is None:
            if not grow:
                return None  # unseen in the corpus: contributes nothing to any score
            token = self.vocab[stem] = len(self.vocab)
        self._words[word] = token
        return token

    def ids(self, text: str, *, grow: bool) -> list[int]:
        words = self._words
        out: list[int] = []
        for word in _SPLIT(text.lower()):
            token = words.get(word)
            if token is None:
                token = self._word_id(word, grow)
                if token is None:
                    continue
            if token != _STOP:
                out.append(token)
        return out


class Bm25Index:
    """BM25 over segment texts; segments are addressed by their position in the collection."""

    def __init__(self, *, texts: Callable[[], Sequence[str]] | None = None) -> None:
        self._bm25s = _require_bm25()
        self._model: Any = None
        self._tokenizer = _Tokenizer({})
        self._doc_ids: list[list[int]] | None = []
        # A loaded index holds scores, not token ids; adding to it re-tokenizes these texts first.
        self._all_texts = texts

    def __len__(self) -> int:
        if self._doc_ids is not None:
            return len(self._doc_ids)
        return int(self._model.scores["num_docs"])

    def add(self, texts: Sequence[str], *, show_progress: bool) -> None:
        """Tokenize `texts` and append them; the score matrix is rebuilt by :meth:`build`."""
        if self._doc_ids is None:
            if self._all_texts is None:  # pragma: no cover - load() always passes texts
                raise RuntimeError("a loaded BM25 index needs its texts to grow")
            # A loaded index holds scores, not token ids: tokenize what it holds, then grow.
            previous = self._all_texts()
            self._tokenizer = _Tokenizer({})
            self._doc_ids = [self._tokenizer.ids(t, grow=True) for t in previous]
        with Progress(len(texts), "indexing (bm25)", enabled=show_progress) as bar:
            for start in range(0, len(texts), _CHUNK):
                chunk = texts[start : start + _CHUNK]
                self._doc_ids.extend(self._tokenizer.ids(t, grow=True) for t in chunk)
                bar.update(len(chunk))
        self._model = None

    def build(self) -> None:
        """Build the score matrix now rather than at the next search (which would build it anyway)."""
        self._built()

    def _built(self) -> Any:
        if self._model is None:
            if not self._doc_ids:
                return None
            model = self._bm25s.BM25(k1=BM25_PARAMS["k1"], b=BM25_PARAMS["b"], method=BM25_PARAMS["method"])
            vocab = dict(self._tokenizer.vocab)  # bm25s appends its empty-document token to the dict it is given
            if vocab:
                model.index((self._doc_ids, vocab), show_progress=False)
            else:
                # No segment holds an indexable word (all stopwords, one-letter words or blank): a
                # valid index that matches no query. bm25s needs a vocabulary (its empty-document
                # token, which no query word stems to) and divides by the mean length, 0 here.
                with np.errstate(divide="ignore", invalid="ignore"):
                    model.index((self._doc_ids, {"": 0}), show_progress=False)
            self._model = model
        return self._model

    def search_many(self, queries: Sequence[str], *, limit: int, show_progress: bool) -> list[Ranking]:
        """Top-`limit` segment positions and scores per query; only segments sharing a term."""
        model = self._built()
        empty = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32))
        out: list[Ranking] = []
        with Progress(len(queries), "retrieving (bm25)", enabled=show_progress) as bar:
            for query in queries:
                tokens = self._tokenizer.ids(query, grow=False) if model is not None else []
                if not tokens:
                    out.append(empty)
                else:
                    scores = model.get_scores_from_ids(tokens)
                    # A score of 0 means no query term occurs: Lucene does not return such documents.
                    out.append(top_k(scores, limit, minimum=0.0))
                bar.update()
        return out

    def save(self, directory: Path) -> None:
        """Write the bm25s index: its own files, in ``directory / "bm25"``."""
        model = self._built()
        if model is None:  # pragma: no cover - an empty collection cannot be saved
            raise ValueError("cannot save an empty BM25 index")
        (directory / BM25_DIR).mkdir()
        model.save(str(directory / BM25_DIR), show_progress=False)

    @classmethod
    def load(cls, directory: Path, *, texts: Callable[[], Sequence[str]]) -> Bm25Index:
        """Read an index :meth:`save` wrote, its score matrix memory-mapped."""
        index = cls(texts=texts)
        try:
            model = index._bm25s.BM25.load(
                str(directory / BM25_DIR), mmap=True, load_corpus=False, show_progress=False
            )
        except (OSError, ValueError, KeyError, TypeError, AttributeError, IndexError) as error:
            # bm25s trusts its files: a damaged one surfaces as whatever its parsing trips on.
            raise ValueError(
                f"{directory / BM25_DIR}: cannot read the bm25 index ({type(error).__name__}: {error}); "
                f"{DAMAGED}"
            ) from error
        vocab = _checked_vocab(directory / BM25_DIR, model)
        index._model = model
        index._doc_ids = None
        index._tokenizer = _Tokenizer(vocab)
        return index


def _checked_vocab(where: Path, model: Any) -> dict[str, int]:
    """The model's vocabulary, after checking its score matrix is one bm25s could have written.

    bm25s indexes its arrays with the stored ids without checking them, so a damaged file would
    give an IndexError deep in a search, or wrong scores, instead of an error naming the file.
    """

    def damaged(what: str) -> ValueError:
        return ValueError(f"{where}: {what}; {DAMAGED}")

    vocab = getattr(model, "vocab_dict", None)
    if not isinstance(vocab, dict):
        raise damaged(f"the vocabulary is a {type(vocab).__name__}, not an object of token ids")
    ids = list(vocab.values())
    if not all(isinstance(k, str) for k in vocab) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in ids
    ):
        raise damaged("the vocabulary must map str tokens to integer ids")
    if sorted(ids) != list(range(len(ids))):
        raise damaged(f"the vocabulary's ids are not 0..{len(ids) - 1}, each once")
    scores = getattr(model, "scores", None)
    if not isinstance(scores, dict) or not {"data", "indices", "indptr", "num_docs"} <= set(scores):
        raise damaged("the score matrix is incomplete")
    data, indices, indptr, num_docs = (np.asarray(scores[k]) for k in ("data", "indices", "indptr", "num_docs"))
    if num_docs.shape != () or not np.issubdtype(num_docs.dtype, np.integer) or int(num_docs) < 0:
        raise damaged(f"the document count is {scores['num_docs']!r}")
    if not (np.issubdtype(indices.dtype, np.integer) and np.issubdtype(indptr.dtype, np.integer)):
        raise damaged("the score matrix's indices are not integers")
    if not np.issubdtype(data.dtype, np.floating) or data.ndim != 1 or indices.shape != data.shape:
        raise damaged("the score matrix's data and indices do not match")
    if (
        indptr.ndim != 1
        or len(indptr) not in (len(ids), len(ids) + 1)
        or (len(indptr) and (indptr[0] != 0 or indptr[-1] != len(data)))
        or bool(np.any(np.diff(indptr) < 0))
    ):
        raise damaged("the score matrix's column pointers do not fit its data")
    if len(indices) and (int(indices.min()) < 0 or int(indices.max()) >= int(num_docs)):
        raise damaged("the score matrix names documents that do not exist")
    if not bool(np.isfinite(data).all()):
        raise damaged("the score matrix holds a NaN or infinite score")
    return dict(vocab)
