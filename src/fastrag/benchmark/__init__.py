"""Benchmark retrievers and RAG pipelines: samples in, metric distributions out.

>>> from fastrag.benchmark import run_benchmark, EvalSample, QueryOutcome, BenchmarkResult
>>> from fastrag.benchmark.metrics.retrieval import Recall
>>> Recall().name
'recall@5'
"""

from typing import TYPE_CHECKING

from ef._lazy import lazy_names

# Each public name is imported from its module on first use (PEP 562): importing the package, or
# one metric module, does not load the harness, the comparison statistics or numpy.
_LAZY = {
    "compare_results": "fastrag.benchmark.compare",
    "Pipeline": "fastrag.benchmark.harness",
    "PipelineResponse": "fastrag.benchmark.harness",
    "Retriever": "fastrag.benchmark.harness",
    "run_benchmark": "fastrag.benchmark.harness",
    "run_benchmark_sync": "fastrag.benchmark.harness",
    "Metric": "fastrag.benchmark.metrics",
    "BenchmarkResult": "fastrag.benchmark.result",
    "EvalSample": "fastrag.benchmark.samples",
    "QueryOutcome": "fastrag.benchmark.samples",
    "load_samples": "fastrag.benchmark.samples",
    "read_outcomes": "fastrag.benchmark.samples",
    "save_samples": "fastrag.benchmark.samples",
    "DistributionSummary": "fastrag.benchmark.summary",
}

if TYPE_CHECKING:
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


__getattr__, __dir__ = lazy_names(globals(), __name__, _LAZY)
