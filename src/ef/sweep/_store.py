"""A sweep's folder: its manifest, one JSON file per scored cell and each cell's run.

``OUT/sweep.json`` names the dataset (a hash of its corpus, queries and qrels) and the measures;
``OUT/cells/<pipeline id>.json`` holds a cell's per-query scores, latency and index cost, written
atomically after ``OUT/runs/<pipeline id>.trec`` (the run scored: each query's source documents in
the pipeline's order, scored n, n-1, ..., 1). A cell is done when its JSON file is there: a
sweep killed at any moment (even ``kill -9``) has lost at most the cell it was scoring, and a
resumed sweep scores exactly the cells whose file is missing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ef.io._atomic import atomic_writer, remove_stale_temporaries
from ef.pipeline import Pipeline

__all__ = ["CELL_SCHEMA", "SCHEMA", "SweepStore"]

SCHEMA = "ef.sweep/1"
CELL_SCHEMA = "ef.sweep.cell/1"


def _write_json(path: Path, data: Mapping[str, Any]) -> None:
    with atomic_writer(path) as stream:
        stream.write(json.dumps(data, indent=1, allow_nan=False).encode("utf-8") + b"\n")


class SweepStore:
    """The folder of one sweep; see the module docstring."""

    def __init__(
        self, directory: str | os.PathLike[str], *, dataset: Mapping[str, Any], measures: Sequence[str], resume: bool
    ) -> None:
        self.directory = Path(directory)
        if self.directory.exists() and not self.directory.is_dir():
            raise NotADirectoryError(f"sweep folder {self.directory} exists and is not a directory")
        self.manifest = self.directory / "sweep.json"
        self.cells = self.directory / "cells"
        self.runs = self.directory / "runs"
        header: dict[str, Any] = {"schema": SCHEMA, "dataset": dict(dataset), "measures": list(measures)}
        if self.manifest.exists():
            try:
                found = json.loads(self.manifest.read_text(encoding="utf-8"))
            except (OSError, ValueError) as error:
                raise ValueError(f"{self.manifest}: not a sweep manifest ({error})") from error
            if not isinstance(found, dict) or found.get("schema") != SCHEMA:
                raise ValueError(f"{self.manifest}: not a sweep manifest of {SCHEMA}")
            # The dataset is its content's fingerprint: its name is the path as given, which changes with
            # the working folder ('../data' here, 'data' there) or a name for the same folder, and was
            # refused as "another dataset" though every cell would be read back the same.
            seen = found.get("dataset")
            fingerprint = seen.get("fingerprint") if isinstance(seen, dict) else None
            if resume and (fingerprint != dataset.get("fingerprint") or found.get("measures") != header["measures"]):
                raise ValueError(
                    f"{self.directory} holds a sweep of another dataset or other measures "
                    f"({found.get('dataset', {}).get('name')!r}, {found.get('measures')}); "
                    "use another folder, or resume=False (--no-resume) to start over"
                )
            if not resume:
                for folder in (self.cells, self.runs):
                    if folder.is_dir():
                        for path in folder.iterdir():
                            if path.suffix in (".json", ".trec"):
                                path.unlink()
        for folder in (self.cells, self.runs):
            folder.mkdir(parents=True, exist_ok=True)
            remove_stale_temporaries(folder)  # what a killed sweep was writing
        _write_json(self.manifest, header)
        self.header = header

    def cell_path(self, pipeline: Pipeline) -> Path:
        return self.cells / f"{pipeline.id}.json"

    def run_path(self, pipeline: Pipeline) -> Path:
        return self.runs / f"{pipeline.id}.trec"

    def load(self, pipeline: Pipeline) -> dict[str, Any] | None:
        """The cell's saved record, or None when it was not scored (or its file is not a complete record)."""
        path = self.cell_path(pipeline)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as error:
            raise ValueError(f"{path}: unreadable sweep cell ({error}); delete it to score the cell again") from error
        if (
            not isinstance(data, dict)
            or data.get("schema") != CELL_SCHEMA
            or data.get("id") != pipeline.id
            or data.get("dataset") != self.header["dataset"]["fingerprint"]
            or data.get("measures") != self.header["measures"]
        ):
            raise ValueError(
                f"{path}: a cell of another pipeline, dataset or measures; delete it to score the cell again"
            )
        return data

    def save(self, pipeline: Pipeline, record: Mapping[str, Any], run: Mapping[str, Mapping[str, float]]) -> None:
        """Write the cell's run, then its record (the record's presence marks the cell done).

        A cell that retrieved nothing for any query has no run file (a TREC run of no line is one
        trec_eval and ef refuse to score): :meth:`saved_run` is then ``None``.
        """
        from ef.io.trec import write_run

        retrieved = {q: docs for q, docs in run.items() if docs}
        path = self.run_path(pipeline)
        if retrieved:
            write_run(path, retrieved, run_id=pipeline.id)
        else:
            path.unlink(missing_ok=True)  # an older sweep's run of this cell is not this one's
        _write_json(self.cell_path(pipeline), record)

    def saved_run(self, pipeline: Pipeline) -> Path | None:
        """The cell's run file, or ``None`` when the cell retrieved nothing (see :meth:`save`)."""
        path = self.run_path(pipeline)
        return path if path.is_file() else None
