"""A CrossEncoder reranker loads without transformers' "Loading weights" bar, as a bi-encoder does:
ef eval --rerank cross:DIR -q printed it on stderr, and neither -q nor EF_NO_PROGRESS hid it."""

from __future__ import annotations

from pathlib import Path

import pytest

from ef.rerank import CrossEncoderReranker


@pytest.mark.slow
def test_a_cross_encoder_loads_without_a_progress_bar(tmp_path: Path, capfd: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("sentence_transformers")
    import transformers
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast  # type: ignore[attr-defined]

    words = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "red", "apple", "car"]
    (tmp_path / "vocab.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    config = BertConfig(vocab_size=len(words), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, num_labels=1, max_position_embeddings=32)  # type: ignore[call-arg]
    BertForSequenceClassification(config).save_pretrained(tmp_path)
    BertTokenizerFast(str(tmp_path / "vocab.txt")).save_pretrained(tmp_path)
    transformers.utils.logging.enable_progress_bar()  # type: ignore[no-untyped-call]  # as in a fresh process
    capfd.readouterr()
    reranker = CrossEncoderReranker(str(tmp_path), device="cpu")
    assert len(reranker("red apple", ["red apple", "car"])) == 2
    assert capfd.readouterr().err == ""
    assert transformers.utils.logging.is_progress_bar_enabled()  # restored for the caller
