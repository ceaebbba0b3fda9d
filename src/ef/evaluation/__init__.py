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

from ef.evaluation._beir import _DEFAULT_QRELS_PATHS, read_beir, write_beir
from ef.evaluation._rag import (
    RagEvalReport,
    RagSample,
    context_precision,
    context_recall,
    evaluate_rag,
    exact_match,
    token_f1,
)
from ef.evaluation._ragas import as_ragas_dataset
from ef.evaluation._ranking import (
    RETRIEVAL_METRICS,
    Qrels,
    average_precision,
    dcg_at_k,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
)
from ef.evaluation._retrieval import RetrievalEvalReport, evaluate_retrieval
from ef.evaluation._run import RunEvalReport, evaluate_run

__all__ = [
    "RETRIEVAL_METRICS",
    "Qrels",
    "RagEvalReport",
    "RagSample",
    "RetrievalEvalReport",
    "RunEvalReport",
    "as_ragas_dataset",
    "average_precision",
    "context_precision",
    "context_recall",
    "dcg_at_k",
    "evaluate_rag",
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

_ = _DEFAULT_QRELS_PATHS  # re-exported for callers that tune the qrels search order
