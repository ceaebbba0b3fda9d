"""ef.rerank's CrossEncoder reranker and a model that scores more than one label per pair."""

from __future__ import annotations

from pathlib import Path

import pytest

from ef.rerank import CrossEncoderReranker


@pytest.mark.slow
def test_a_cross_encoder_of_two_labels_is_refused_not_ranked_by_its_first_logit(tmp_path: Path) -> None:
    # A two-label passage classifier (label 1: relevant) was read by its first column, the
    # not-relevant logit: the reranking came out inverted, silently.
    pytest.importorskip("sentence_transformers")
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast  # type: ignore[attr-defined]

    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "red", "apple", "car"]
    (tmp_path / "vocab.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    config = BertConfig(vocab_size=len(words), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, num_labels=2, max_position_embeddings=32)  # type: ignore[call-arg]
    BertForSequenceClassification(config).save_pretrained(tmp_path)
    BertTokenizerFast(str(tmp_path / "vocab.txt")).save_pretrained(tmp_path)
    with pytest.raises(ValueError) as raised:
        CrossEncoderReranker(str(tmp_path))
    assert str(raised.value) == (
        f"the CrossEncoder in {tmp_path} scores 2 labels per pair (num_labels=2); a reranker needs one relevance "
        "score per pair (num_labels=1)")
