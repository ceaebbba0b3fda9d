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
        from ef.io.jsonl import loads  # strict: a key given twice (the last one won) or NaN is refused

        try:
            return loads(text, str(path))
        except ValueError as error:
            raise ValueError(f"{path}: not valid JSON ({str(error).removeprefix(f'{path}: ')})") from error
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


def _check_options(file: Path, data: Mapping[str, Any], measures: list[str]) -> None:
    """What :func:`~ef.sweep.sweep` would refuse after the dataset is read, refused with the file's
    name now (a split of 3 was read as '3', a key given twice or a measure listed twice went on)."""
    from ef.compare import check_options
    from ef.measures import parse_measure

    split = data.get("split", "test")
    if not isinstance(split, str) or not split:
        raise ValueError(f"{file}: 'split' must be a split name such as 'test' (got {split!r})")
    baseline = data.get("baseline")
    if baseline is not None and not isinstance(baseline, str | Mapping):
        raise ValueError(f"{file}: 'baseline' must be a cell's id or label, or a table of its parameters "
                         f"(got {baseline!r})")
    for i, name in enumerate(measures):
        if name in measures[:i]:
            raise ValueError(f"{file}: 'measures' lists {name!r} twice")
        try:
            parse_measure(name)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{file}: 'measures': {error}") from error
    options = {"test": "t", "correction": "holm", "alpha": 0.05, **{k: data[k] for k in ("test", "correction",
                                                                                          "alpha") if k in data}}
    try:
        check_options(options["test"], options["correction"], options["alpha"], 0.95, 10_000, 0)
    except (TypeError, ValueError) as error:
        raise ValueError(f"{file}: {error}") from error


def _dataset(resolved: str | None, given: object) -> str | None:
    """A dataset name (``beir/scifact``) as it is, not read as a folder beside the file: a folder
    there by that name still wins, as ``ef eval NAME`` reads a folder of that name first."""
    if resolved is None or Path(resolved).exists() or not isinstance(given, str):
        return resolved
    from ef.datasets import resolve_name

    return given if resolve_name(given) is not None else resolved


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
    _check_options(file, data, measures)
    config = SweepConfig(
        grid=data["grid"],
        dataset=_dataset(where(data.get("dataset"), "dataset"), data.get("dataset")),
        out=where(data.get("out"), "out"),
        measures=tuple(measures),
        baseline=data.get("baseline"),
        split=data.get("split", "test"),
        cache=where(data.get("cache"), "cache"),
        options={key: data[key] for key in ("test", "correction", "alpha") if key in data},
    )
    try:
        config.pipelines()
    except (TypeError, ValueError) as error:
        raise ValueError(f"{file}: {error}") from error
    return config
