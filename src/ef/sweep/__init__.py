"""Sweeps: which chunking, retriever, reranker and k is best, with the evidence.

:func:`sweep` runs every :class:`~ef.pipeline.Pipeline` of a grid over one dataset. Each
chunking is cut once and each (chunking, embedder) encoded once (:class:`ef.pipeline_stages.Workspace`);
each cell's run and per-query scores are saved as it finishes, so an interrupted sweep resumes
where it stopped; the result (:class:`SweepResult`) compares every cell with a baseline or the
best cell (paired tests, corrected over the family), says which cells are indistinguishable from
the best, and renders as a table, JSON and an HTML report with figures. ``ef sweep CONFIG`` is
the command line (:func:`read_config` reads the TOML, JSON or YAML file). :func:`benchmark_grid`
runs a grid through fastrag's async harness instead, with its latency and cost metrics.

``import ef.sweep`` makes the module callable: ``ef.sweep(grid, dataset, ...)`` is :func:`sweep`.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from ef.sweep._benchmark import benchmark_grid
from ef.sweep._config import SweepConfig, read_config
from ef.sweep._report import SweepResult
from ef.sweep._result import CellResult
from ef.sweep._sweep import sweep

__all__ = ["CellResult", "SweepConfig", "SweepResult", "benchmark_grid", "read_config", "sweep"]


class _CallableModule(types.ModuleType):
    """``ef.sweep(...)``: the module called is :func:`sweep`."""

    def __call__(self, *args: Any, **kwargs: Any) -> SweepResult:
        return sweep(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
