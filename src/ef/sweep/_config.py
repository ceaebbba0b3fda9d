"""A sweep's configuration file (TOML, JSON or YAML): the grid, the dataset and the options.

>>> import tempfile, os
>>> path = os.path.join(tempfile.mkdtemp(), "sweep.toml")
>>> _ = open(path, "w").write('''
... dataset = "data/scifact"
... measures = ["ndcg@10", "recall@100"]
... [grid]
... retriever = ["bm25", "dense"]
... size = [100, "whole"]
... ''')
>>> config = read_config(path)
>>> config.dataset == os.path.join(os.path.dirname(path), "data/scifact"), config.measures
(True, ('ndcg@10', 'recall@100'))
>>> len(config.pipelines())
4
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ef.pipeline import Pipeline, expand_grid

__all__ = ["SweepConfig", "read_config"]

_KEYS = ("grid", "dataset", "out", "measures", "baseline", "split", "cache", "test", "correction", "alpha")


@dataclass(frozen=True)
class SweepConfig:
    """What a configuration file says; paths are resolved against the file's folder."""

    grid: Any
    dataset: str | None = None
    out: str | None = None
    measures: tuple[str, ...] = ("ndcg@10",)
    baseline: Any = None
    split: str = "test"
    cache: str | None = None
    options: Mapping[str, Any] = field(default_factory=dict)

    def pipelines(self) -> list[Pipeline]:
        return expand_grid(self.grid)


def _parse(path: Path, text: str) -> Any:
    suffix = path.suffix.lower()
    if suffix == ".toml":
        import tomllib

        try:
            return tomllib.loads(text)
        except tomllib.TOMLDecodeError as error:
            raise ValueError(f"{path}: not valid TOML ({error})") from error
    if suffix == ".json":
        try:
            return json.loads(text)
        except ValueError as error:
            raise ValueError(f"{path}: not valid JSON ({error})") from error
    if suffix in (".yaml", ".yml"):
        try:
            import yaml  # type: ignore[import-untyped,unused-ignore]
        except ImportError as error:
            raise ImportError(f"{path}: reading YAML needs PyYAML: pip install pyyaml (or write TOML)") from error
        try:
            return yaml.safe_load(text)
        except yaml.YAMLError as error:
            raise ValueError(f"{path}: not valid YAML ({error})") from error
    raise ValueError(f"{path}: a sweep configuration is a .toml, .json, .yaml or .yml file")


def read_config(path: str | os.PathLike[str]) -> SweepConfig:
    """Read a sweep configuration; every grid is checked (pipelines built) before any work.

    Raises
    ------
    ValueError
        For a file that does not parse, an unknown key (named), a missing ``grid`` or a bad pipeline.
    """
    file = Path(path)
    text = file.read_text(encoding="utf-8")
    data = _parse(file, text)
    if not isinstance(data, dict):
        raise ValueError(f"{file}: the configuration must be a table of keys ({', '.join(_KEYS)})")
    unknown = [key for key in data if key not in _KEYS]
    if unknown:
        raise ValueError(f"{file}: unknown key(s) {', '.join(map(repr, unknown))}; known: {', '.join(_KEYS)}")
    if "grid" not in data:
        raise ValueError(f"{file}: no 'grid' (a table of pipeline parameters, or a list of them)")
    folder = file.parent

    def where(value: object, key: str) -> str | None:
        if value is None:
            return None
        if not isinstance(value, str) or not value:
            raise ValueError(f"{file}: '{key}' must be a path (got {value!r})")
        return str(folder / Path(value).expanduser())

    measures = data.get("measures", ["ndcg@10"])
    if isinstance(measures, str):
        measures = [measures]
    if not isinstance(measures, list) or not measures or not all(isinstance(m, str) for m in measures):
        raise ValueError(f"{file}: 'measures' must be a list of measure names (got {measures!r})")
    config = SweepConfig(
        grid=data["grid"],
        dataset=where(data.get("dataset"), "dataset"),
        out=where(data.get("out"), "out"),
        measures=tuple(measures),
        baseline=data.get("baseline"),
        split=str(data.get("split", "test")),
        cache=where(data.get("cache"), "cache"),
        options={key: data[key] for key in ("test", "correction", "alpha") if key in data},
    )
    try:
        config.pipelines()
    except (TypeError, ValueError) as error:
        raise ValueError(f"{file}: {error}") from error
    return config
