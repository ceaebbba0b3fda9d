"""Scoring one sweep cell: the step both engines run (here, or in a Ray actor of :mod:`ef.sweep._ray`).

A cell's record and run depend only on the pipeline, the workspace's corpus, the queries and
qrels (:class:`CellJob`) and the depth its first stage retrieves at, so a cell scored in another
process gives the same numbers as one scored here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ef.pipeline import Pipeline
from ef.pipeline_stages import Workspace
from ef.sweep._store import CELL_SCHEMA

__all__ = ["CellJob", "score_cell"]


@dataclass(frozen=True)
class CellJob:
    """What scoring any cell of one sweep needs besides the workspace and the pipeline.

    ``query_ids`` are the judged queries with a text, sorted; ``texts`` their texts in that order;
    ``judged`` their qrels; ``measures`` what is scored (the first decides); ``level`` the
    smallest positive grade (relevant: grade > 0); ``fingerprint`` the dataset's hash.
    """

    query_ids: tuple[str, ...]
    texts: tuple[str, ...]
    judged: Mapping[str, Mapping[str, float]]
    measures: tuple[str, ...]
    level: float
    fingerprint: str


def score_cell(
    workspace: Workspace, pipeline: Pipeline, job: CellJob, depth: int
) -> tuple[dict[str, Any], dict[str, dict[str, float]]]:
    """Run `pipeline` (its first stage retrieving `depth` chunks) and score it: ``(record, run)``.

    The record is what ``OUT/cells/<id>.json`` holds; the run, the source documents scored.
    """
    from ef.evaluation import evaluate_run
    from ef.pipeline import collapse_to_sources

    texts = list(job.texts)
    names = list(job.measures)
    workspace.first_stage(pipeline, texts, depth=depth)
    output = workspace.run(pipeline, texts)
    segments = workspace.chunks(pipeline).segments
    chunk_run = {
        q: [(segments[p].source_id, float(s)) for p, s in zip(positions.tolist(), scores.tolist(), strict=True)]
        for q, (positions, scores) in zip(job.query_ids, output.rankings, strict=True)
    }
    # Each source at its best chunk (max score); then scored in the pipeline's order, as ef eval
    # scores a retriever: rank scores n, n-1, ... (trec_eval would break tied scores by doc id).
    collapsed = collapse_to_sources(chunk_run, lambda source: source)
    run = {q: {doc: float(len(docs) - i) for i, doc in enumerate(docs)} for q, docs in collapsed.items()}
    judged = {q: dict(docs) for q, docs in job.judged.items()}
    report = evaluate_run(run, judged, names, missing="zero", relevance_level=job.level)
    n = len(job.query_ids)
    record = {
        "schema": CELL_SCHEMA,
        "id": pipeline.id,
        "label": pipeline.label,
        "pipeline": pipeline.to_dict(),
        "dataset": job.fingerprint,
        "measures": names,
        "metrics": {m: float(report.metrics[m]) for m in names},
        "per_query": {q: [float(report.per_query[q][m]) for m in names] for q in job.query_ids},
        "retrieve_ms": output.retrieve_seconds / n * 1000.0,
        "rerank_ms": output.rerank_seconds / n * 1000.0,
        "index_bytes": output.index_bytes,
        "build_seconds": output.build_seconds,
    }
    return record, run
