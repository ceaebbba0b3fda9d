"""Benchmark retrievers and RAG pipelines: samples in, metric distributions out.

>>> from fastrag.benchmark import run_benchmark, EvalSample, QueryOutcome, BenchmarkResult
>>> from fastrag.benchmark.metrics.retrieval import Recall
>>> Recall().name
'recall@5'
"""

from fastrag.benchmark.compare import compare_results
from fastrag.benchmark.harness import Pipeline, PipelineResponse, Retriever, run_benchmark, run_benchmark_sync
from fastrag.benchmark.metrics import Metric
from fastrag.benchmark.result import BenchmarkResult
from fastrag.benchmark.samples import EvalSample, QueryOutcome, load_samples, read_outcomes, save_samples
from fastrag.benchmark.summary import DistributionSummary

__all__ = [
    "BenchmarkResult",
    "DistributionSummary",
    "EvalSample",
    "Metric",
    "Pipeline",
    "PipelineResponse",
    "QueryOutcome",
    "Retriever",
    "compare_results",
    "load_samples",
    "read_outcomes",
    "run_benchmark",
    "run_benchmark_sync",
    "save_samples",
]
