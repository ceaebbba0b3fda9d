""":func:`benchmark_grid`: every pipeline of a grid through fastrag's harness, sharing one workspace."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ef.pipeline import Pipeline, expand_grid
from ef.pipeline_stages import PipelineRetriever, Workspace

__all__ = ["benchmark_grid"]


def benchmark_grid(
    grid: Mapping[str, Any] | Pipeline | Iterable[Mapping[str, Any] | Pipeline],
    corpus: Mapping[str, str],
    samples: Sequence[Any],
    metrics: Sequence[Any],
    *,
    workspace: Workspace | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Run each pipeline of `grid` with :func:`fastrag.benchmark.run_benchmark_sync`; ``{label: result}``.

    The pipelines share one :class:`~ef.pipeline_stages.Workspace` (a chunking is cut once, a
    (chunking, model) encoded once), and each runs through the async harness with its latency
    and cost metrics, so the results compare with :func:`fastrag.benchmark.compare_results`.
    `options` go to ``run_benchmark_sync`` (``concurrency``, ``timeout_s``, ``results_path`` ...);
    a ``results_path`` is used as a prefix: ``<results_path>.<pipeline id>.jsonl`` per pipeline.

    Examples
    --------
    >>> from fastrag.benchmark import EvalSample
    >>> from fastrag.benchmark.metrics import Recall
    >>> corpus = {"d1": "cats purr softly", "d2": "dogs bark loudly"}
    >>> results = benchmark_grid({"k1": [0.9, 1.2], "k": 1}, corpus, [EvalSample("q1", "barking dogs", ["d2"])],
    ...                          [Recall(k=1, key="source_uri")], show_progress=False)
    >>> {label: result.summary["recall@1[source_uri]"].mean for label, result in results.items()}
    {'bm25 k1=0.9 b=0.75 | whole docs | k=1': 1.0, 'bm25 k1=1.2 b=0.75 | whole docs | k=1': 1.0}
    """
    from fastrag.benchmark import run_benchmark_sync

    pipelines = expand_grid(grid)
    if workspace is not None and not isinstance(workspace, Workspace):
        raise TypeError(f"'workspace' must be a Workspace or None (got {type(workspace).__name__})")
    if workspace is not None:
        workspace.check_corpus(corpus)  # once, not per pipeline
    shared = workspace if workspace is not None else Workspace(corpus)
    prefix = options.pop("results_path", None)
    results: dict[str, Any] = {}
    for pipeline in pipelines:
        retriever = PipelineRetriever(pipeline, shared.corpus, workspace=shared)  # checked above
        retriever.build()  # the index is built before the harness times any query
        path = None if prefix is None else f"{prefix}.{pipeline.id}.jsonl"
        results[pipeline.label] = run_benchmark_sync(
            retriever, samples, metrics, results_path=path, run_name=pipeline.label, **options
        )
    return results
