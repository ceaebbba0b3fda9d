"""Evaluation hookpoints — measuring retrieval and RAG quality.

Two journeys, two conventions:

- **Retrieval evaluation** — :func:`evaluate_retrieval` (BEIR/MTEB-shaped: a corpus, ``queries``
  and graded ``qrels``; primary metric NDCG@10) and :func:`evaluate_run` (whole TREC runs,
  trec_eval's numbers). The metric primitives (:func:`ndcg_at_k`, :func:`recall_at_k`, …) are pure
  functions, usable on their own. :func:`read_beir` / :func:`write_beir` move the triple to and
  from disk.
- **RAG evaluation** — :func:`evaluate_rag` computes deterministic, reference-based lexical
  metrics, no LLM; :func:`as_ragas_dataset` hands the same samples to Ragas for LLM-judged ones.
"""

from typing import TYPE_CHECKING

from ef._lazy import lazy_names

# Each public name is imported from its module on first use (PEP 562), so importing one
# kernel or reader does not load every orchestrator; type checkers see the plain imports.
_LAZY = {
    "_DEFAULT_QRELS_PATHS": "ef.evaluation._beir",
    "read_beir": "ef.evaluation._beir",
    "write_beir": "ef.evaluation._beir",
    "RagEvalReport": "ef.evaluation._rag",
    "RagSample": "ef.evaluation._rag",
    "context_precision": "ef.measures.answers",
    "context_recall": "ef.measures.answers",
    "evaluate_rag": "ef.evaluation._rag",
    "exact_match": "ef.measures.answers",
    "token_f1": "ef.measures.answers",
    "as_ragas_dataset": "ef.evaluation._ragas",
    "RepeatedScores": "ef.evaluation._ragas",
    "evaluate_ragas_repeated": "ef.evaluation._ragas",
    "RETRIEVAL_METRICS": "ef.measures.registry",
    "Qrels": "ef.measures.per_query",
    "average_precision": "ef.measures.per_query",
    "dcg_at_k": "ef.measures.per_query",
    "ndcg_at_k": "ef.measures.per_query",
    "precision_at_k": "ef.measures.per_query",
    "recall_at_k": "ef.measures.per_query",
    "reciprocal_rank": "ef.measures.per_query",
    "RetrievalEvalReport": "ef.evaluation._retrieval",
    "evaluate_retrieval": "ef.evaluation._named",  # loads a dataset named by a string, then _retrieval
    "RunEvalReport": "ef.evaluation._run",
    "evaluate_run": "ef.evaluation._run",
}

if TYPE_CHECKING:
    from ef.evaluation._beir import _DEFAULT_QRELS_PATHS as _DEFAULT_QRELS_PATHS
    from ef.evaluation._beir import read_beir, write_beir
    from ef.evaluation._named import evaluate_retrieval
    from ef.evaluation._rag import RagEvalReport, RagSample, evaluate_rag
    from ef.evaluation._ragas import RepeatedScores, as_ragas_dataset, evaluate_ragas_repeated
    from ef.evaluation._retrieval import RetrievalEvalReport
    from ef.evaluation._run import RunEvalReport, evaluate_run
    from ef.measures.answers import context_precision, context_recall, exact_match, token_f1
    from ef.measures.per_query import (
        Qrels,
        average_precision,
        dcg_at_k,
        ndcg_at_k,
        precision_at_k,
        recall_at_k,
        reciprocal_rank,
    )
    from ef.measures.registry import RETRIEVAL_METRICS

__all__ = [
    "RETRIEVAL_METRICS",
    "Qrels",
    "RagEvalReport",
    "RagSample",
    "RepeatedScores",
    "RetrievalEvalReport",
    "RunEvalReport",
    "as_ragas_dataset",
    "average_precision",
    "context_precision",
    "context_recall",
    "dcg_at_k",
    "evaluate_rag",
    "evaluate_ragas_repeated",
    "evaluate_retrieval",
    "evaluate_run",
    "exact_match",
    "ndcg_at_k",
    "precision_at_k",
    "read_beir",
    "recall_at_k",
    "reciprocal_rank",
    "token_f1",
    "write_beir",
]



__getattr__, __dir__ = lazy_names(globals(), __name__, _LAZY)
