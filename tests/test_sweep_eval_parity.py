"""ef sweep scores the queries ef eval scores: those with a positive judgement and a text."""

from __future__ import annotations

import warnings

from ef.datasets import demo_dataset
from ef.evaluation import evaluate_retrieval, read_beir
from ef.source_manager import ingest
from ef.sweep import sweep


def _demo_with_extra_queries() -> tuple[dict[str, str], dict[str, str], dict[str, dict[str, float]]]:
    corpus, queries, qrels = read_beir(demo_dataset())
    queries = {**queries, "only-zero": "how do bees make honey"}
    qrels = {**qrels, "only-zero": {"coffee-04": 0}, "no-text": {"bee-01": 1}}
    return corpus, queries, qrels


def test_a_query_judged_only_non_relevant_is_skipped_as_ef_eval_skips_it() -> None:
    corpus, queries, qrels = _demo_with_extra_queries()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = sweep({"k": 10}, (corpus, queries, qrels), show_progress=False)
        report = evaluate_retrieval(ingest(corpus, show_progress=False), qrels, queries, k_values=(10,))
    cell = result.cells[0]
    # 27 demo queries: 'only-zero' (judged, no relevant document) was scored 0 and counted (28 queries,
    # NDCG@10 0.7789), 'no-text' left out without a word; ef eval scores the 27 (0.8078)
    assert (result.n_queries, report.n_queries) == (27, 27)
    assert round(cell.metrics["ndcg@10"], 4) == round(report.metrics["ndcg@10"], 4) == 0.8078


def test_a_judged_query_without_text_is_warned_of() -> None:
    corpus, queries, qrels = _demo_with_extra_queries()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sweep({"k": 10}, (corpus, queries, qrels), show_progress=False)
    assert [(w.category, str(w.message)) for w in caught] == [(UserWarning,
        "1 judged query has no text in the given dataset and was not scored (first: 'no-text')")
    ]
