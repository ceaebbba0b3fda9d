"""ef.rerank: the reranker protocol, the bi-encoder and CrossEncoder rerankers, and the pipeline's rerank stage."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from ef.rerank import BiEncoderReranker, CrossEncoderReranker, Reranker, make_reranker, rerank


def _overlap(query: str, candidates: Sequence[str]) -> list[int]:
    words = set(query.split())
    return [len(words & set(c.split())) for c in candidates]


def test_any_callable_reranks_best_first_and_ties_keep_their_order() -> None:
    candidates = ["red car", "green pear", "red apple pie", "apple red", "blue"]
    # By hand: overlaps 1, 0, 2, 2, 0 -> the two 2s in their order, then the 1, then the 0s in order.
    assert rerank("red apple", candidates, _overlap) == [(2, 2.0), (3, 2.0), (0, 1.0), (1, 0.0), (4, 0.0)]
    assert rerank("red apple", [], _overlap) == []
    assert isinstance(_overlap, Reranker)


def test_a_reranker_that_breaks_the_protocol_is_named() -> None:
    with pytest.raises(ValueError, match=r"^the reranker returned 1 scores for 2 candidates$"):
        rerank("q", ["a", "b"], lambda q, c: [1.0])
    with pytest.raises(ValueError, match=r"^the reranker's score 1 is nan: scores must be finite$"):
        rerank("q", ["a", "b"], lambda q, c: [1.0, float("nan")])
    with pytest.raises(TypeError, match=r"^the reranker's score 0 must be a number \(got '1'\)$"):
        rerank("q", ["a"], lambda q, c: ["1"])
    with pytest.raises(TypeError, match=r"^'query' must be a str \(got 3\)$"):
        rerank(3, ["a"], _overlap)  # type: ignore[arg-type]


def test_specs_name_the_reranker() -> None:
    assert repr(make_reranker("minilm")) == "BiEncoderReranker('all-MiniLM-L6-v2')"
    assert repr(make_reranker("bi:/some/model")) == "BiEncoderReranker('/some/model')"
    with pytest.raises(ValueError, match=r"^cross-encoder '/no/such' is not a local directory: ef never downloads"):
        make_reranker("cross:/no/such")
    with pytest.raises(ValueError, match=r"^'spec' must be 'bi:MODEL'"):
        make_reranker("bi:")


@pytest.mark.slow
def test_the_bi_encoder_scores_cosines_of_the_models_own_embeddings() -> None:
    from ef.source_manager._models import load_model

    texts = ["Coffee beans stay fresh in an airtight jar.", "The stock market fell.", "Grind beans before brewing."]
    reranker = BiEncoderReranker()
    scores = reranker("how to keep coffee fresh", texts)
    model = load_model("all-MiniLM-L6-v2")
    # The reference: sentence-transformers' own encode, one text at a time, cosine by hand.
    query = model.encode("how to keep coffee fresh")
    expected = [float(np.dot(query, v) / np.linalg.norm(query) / np.linalg.norm(v)) for v in model.encode(texts)]
    assert scores == pytest.approx(expected, abs=1e-5)
    assert [i for i, _ in rerank("how to keep coffee fresh", texts, reranker)] == [0, 2, 1]
    assert reranker.encoded == 4
    reranker("how to keep coffee fresh", [texts[1], "A new text."])  # only the new text is encoded
    assert reranker.encoded == 5


def _tiny_cross_encoder(folder: Path) -> tuple[object, object]:
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "red", "apple", "car", "green", "pear", "pie"]
    (folder / "vocab.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(str(folder / "vocab.txt"))
    torch.manual_seed(0)
    config = BertConfig(vocab_size=len(words), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, num_labels=1, max_position_embeddings=32, hidden_dropout_prob=0.0)
    model = BertForSequenceClassification(config).eval()
    with torch.no_grad():  # spread the classifier's weights so candidates score apart
        model.classifier.weight.mul_(50.0)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return model, tokenizer


@pytest.mark.slow
def test_a_local_cross_encoder_scores_as_its_model_does(tmp_path: Path) -> None:
    import torch

    model, tokenizer = _tiny_cross_encoder(tmp_path)
    candidates = ["green pear", "red apple pie", "red car"]
    scores = CrossEncoderReranker(str(tmp_path))("red apple", candidates)
    with torch.no_grad():
        batch = tokenizer(["red apple"] * 3, candidates, padding=True, return_tensors="pt")  # type: ignore[operator]
        logits = model(**batch).logits[:, 0]  # type: ignore[operator]
    # A one-label CrossEncoder applies a sigmoid to the logit.
    assert scores == pytest.approx(torch.sigmoid(logits).tolist(), abs=1e-6)
    assert len(set(np.round(scores, 6))) == 3


def test_a_folder_that_is_no_cross_encoder_is_named(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    (tmp_path / "README").write_text("not a model")
    with pytest.raises(ValueError, match=rf"^cannot load a CrossEncoder from {tmp_path} offline \("):
        CrossEncoderReranker(str(tmp_path))


@pytest.mark.slow
def test_the_pipelines_bi_encoder_stage_equals_the_reranker_called_by_hand() -> None:
    from ef.datasets import demo_dataset
    from ef.evaluation import read_beir
    from ef.pipeline import Pipeline
    from ef.pipeline_stages import Workspace

    corpus, queries, qrels = read_beir(demo_dataset())
    texts = [queries[q] for q in sorted(qrels)][:8]
    workspace = Workspace(corpus)
    pipeline = Pipeline("bm25", size=12, overlap=3, rerank="minilm", rerank_depth=20, k=20)
    output = workspace.run(pipeline, texts)
    first, _ = workspace.first_stage(pipeline, texts)
    chunks = workspace.chunks(pipeline).texts
    reranker = BiEncoderReranker()  # encodes every text itself, one reranker call per query
    for text, (positions, _), (got, got_scores) in zip(texts, first, output.rankings, strict=True):
        by_hand = rerank(text, [chunks[p] for p in positions.tolist()], reranker)
        assert got.tolist() == [int(positions[i]) for i, _ in by_hand]
        assert got_scores.tolist() == pytest.approx([s for _, s in by_hand], abs=1e-5)
    assert output.rerank_seconds > 0
    assert os.environ.get("HF_HUB_OFFLINE") in (None, "", "0", "1")
