"""``engine="ray"``: a sweep's cells run as Ray tasks, saved by the driver as each one finishes.

The cells of one chunking run in one Ray actor (a process holding one
:class:`~ef.pipeline_stages.Workspace`), one actor task per cell, in the sweep's order: the
chunking is cut once there, each (chunking, model) encoded once (or read from the shared vector
cache), and each first stage retrieves once at the depth the local engine would use. Different
chunkings run in parallel, one CPU each. The driver waits for whichever cell finishes first and
saves it (run, then record) before it waits for the next, so the guarantees of the local engine
hold: a sweep killed at any moment has lost at most the cells still running, a resumed sweep
scores only the cells not saved, and each cell's numbers are the local engine's (the same code,
the same inputs; tested). A cell that fails, or whose worker dies, stops the sweep as a local
failure would (the other actors are stopped too): the cells saved are kept for the next run.

The cluster is :func:`ef.source_manager.scale.ray_session`'s, as for ``ef eval --engine ray``: a
local one bound to 127.0.0.1 with no dashboard process and no usage statistics, or the one
`address` (or ``RAY_ADDRESS``) names. A remote cluster's workers must see the same ``cache_dir``
path for the vector cache to be shared.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ef.pipeline import Pipeline
from ef.pipeline_stages import Workspace
from ef.sweep._cell import CellJob, score_cell

__all__ = ["run_cells_on_ray"]

class _CellRunner:
    """A Ray actor: one workspace over the corpus, scoring the cells of one chunking."""

    def __init__(
        self, corpus: Mapping[str, str], cache_dir: str | None, device: str | None, batch_size: int
    ) -> None:
        self.workspace = Workspace(corpus, cache_dir=cache_dir, device=device, batch_size=batch_size)

    def score(
        self, pipeline: Pipeline, job: CellJob, depth: int
    ) -> tuple[dict[str, Any], dict[str, dict[str, float]]]:
        return score_cell(self.workspace, pipeline, job, depth)

    def counts(self) -> dict[str, Counter[Any]]:
        return self.workspace.counts


def run_cells_on_ray(
    pending: Sequence[Pipeline],
    depths: Mapping[str, int],
    job: CellJob,
    corpus: Mapping[str, str],
    *,
    cache_dir: str | os.PathLike[str] | None,
    device: str | None,
    batch_size: int,
    address: str | None,
    on_cell: Callable[[Pipeline, dict[str, Any], dict[str, dict[str, float]]], None],
) -> dict[str, Counter[Any]]:
    """Score `pending` on Ray, calling ``on_cell(pipeline, record, run)`` in this process as each finishes.

    `depths` maps a pipeline id to the depth its first stage retrieves at. Returns what the
    actors computed (their workspaces' ``counts``, summed).
    """
    from ef.source_manager.scale import ray_session

    groups: dict[tuple[Any, ...], list[Pipeline]] = {}
    for pipeline in pending:
        groups.setdefault(pipeline.chunking(), []).append(pipeline)
    counts: dict[str, Counter[Any]] = {}
    if not groups:
        return counts
    cache = None if cache_dir is None else str(Path(cache_dir).resolve())  # workers start elsewhere
    with ray_session(address) as ray:
        runner = ray.remote(num_cpus=1)(_CellRunner)  # held for the actor's life: one chunking per CPU
        corpus_ref = ray.put(dict(corpus))
        job_ref = ray.put(job)
        actors: dict[tuple[Any, ...], Any] = {}
        left: dict[tuple[Any, ...], int] = {}
        waiting: dict[Any, tuple[tuple[Any, ...], Pipeline]] = {}
        for key, cells in groups.items():
            actor = runner.remote(corpus_ref, cache, device, batch_size)
            actors[key], left[key] = actor, len(cells)
            for pipeline in cells:
                waiting[actor.score.remote(pipeline, job_ref, depths[pipeline.id])] = (key, pipeline)
        try:
            while waiting:
                ready, _ = ray.wait(list(waiting), num_returns=1)
                key, pipeline = waiting.pop(ready[0])
                record, run = ray.get(ready[0])
                on_cell(pipeline, record, run)
                left[key] -= 1
                if left[key] == 0:  # this chunking is done: its CPU goes to the next one
                    for name, counter in ray.get(actors[key].counts.remote()).items():
                        counts.setdefault(name, Counter()).update(counter)
                    ray.kill(actors.pop(key))
        finally:
            for actor in actors.values():  # a failed cell: the other actors stop too
                ray.kill(actor)
    return counts
