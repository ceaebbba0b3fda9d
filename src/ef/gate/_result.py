"""Per-query results a gate compares, with what a gate needs to refuse a bad comparison.

A :class:`Result` holds one system's per-query values of some measures, their directions and
the metadata that says what the values mean: ef's version, the schema, the dataset (name and
checksum), the qrels' hash, the options that change numbers (``missing``, ``relevance_level``,
``ignore_identical_ids``, ``judged_docs_only``, ``max_docs``) and the pipeline id. :func:`save_result` writes one as
JSON (schema :data:`RESULT_SCHEMA`); :func:`load_result` reads that, the JSON of ``ef eval
--json``, of an :func:`~ef.evaluation.evaluate_run` report's ``to_dict``, of ``ef trec-eval -q
--json``, a fastrag ``BenchmarkResult`` (object, ``to_dict`` JSON or ``save_jsonl`` file), an
in-memory report, or a TREC run scored against qrels.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from numbers import Integral, Real
from pathlib import Path
from typing import Any

from ef._validate import check_positive_int
from ef.io._source import decode_utf8
from ef.io.jsonl import iter_json_objects, json_type, loads, read_json

__all__ = [
    "OPTION_NAMES",
    "READABLE",
    "RESULT_SCHEMA",
    "Piped",
    "Result",
    "dataset_checksum",
    "load_result",
    "open_piped",
    "qrels_hash",
    "readable",
    "result_metadata",
    "save_result",
    "saved_kind",
]

RESULT_SCHEMA = "ef.result/1"
"""The schema of the JSON :func:`save_result` writes."""

OPTION_NAMES = ("missing", "relevance_level", "ignore_identical_ids", "judged_docs_only", "max_docs")
"""The options that change a result's numbers: two results gated together must agree on them."""


@dataclass(frozen=True)
class Result:
    """One system's per-query values, their directions and their metadata.

    ``per_query[query_id][measure]`` is a finite number for every query and every measure of
    ``measures``; ``higher_is_better[measure]`` its direction (``None``: not known here, given
    to the gate). ``metadata`` holds ``ef_version``, ``schema``, ``dataset`` (``{"name",
    "checksum"}`` or ``None``), ``qrels_hash``, ``options`` and ``pipeline_id``, each ``None``
    when unknown. ``source`` names where it came from, for messages.
    """

    per_query: Mapping[str, Mapping[str, float]]
    measures: tuple[str, ...]
    higher_is_better: Mapping[str, bool | None]
    metadata: Mapping[str, Any] = field(default_factory=dict)
    source: str = "result"
    lacked: int = 0
    """Judged queries a TREC run scored here had no ranking for (0 on every measure, missing="zero")."""

    def values(self, measure: str, queries: Sequence[str]) -> list[float]:
        """The values of `measure` for `queries`, in that order."""
        return [float(self.per_query[q][measure]) for q in queries]

    def mean(self, measure: str) -> float:
        """The mean of `measure` over every query."""
        return math.fsum(float(v[measure]) for v in self.per_query.values()) / len(self.per_query)

    def to_dict(self) -> dict[str, Any]:
        """The JSON :func:`save_result` writes: the metadata, the measures, the means and every query."""
        meta = dict(self.metadata)
        dataset = meta.get("dataset") or {}
        return {
            "schema": RESULT_SCHEMA,
            "ef_version": _version(),
            "dataset": dataset.get("name"),
            "dataset_checksum": dataset.get("checksum"),
            **({"split": dataset["split"]} if dataset.get("split") is not None else {}),
            "qrels_hash": meta.get("qrels_hash"),
            "options": meta.get("options"),
            "pipeline_id": meta.get("pipeline_id"),
            "measures": [{"name": m, "higher_is_better": self.higher_is_better.get(m)} for m in self.measures],
            "metrics": {m: self.mean(m) for m in self.measures},
            "n_queries": len(self.per_query),
            "per_query": {q: {m: float(v[m]) for m in self.measures} for q, v in self.per_query.items()},
        }


def _version() -> str:
    from ef import __version__

    return __version__


def _grade(value: object) -> str:
    number = float(value)  # type: ignore[arg-type]
    return str(int(number)) if number.is_integer() else repr(number)


def qrels_hash(qrels: Mapping[str, Mapping[str, float]] | str | os.PathLike[str]) -> str:
    """``sha256:<hex>`` of the judgements, whatever their file's layout, order or grade spelling.

    The hash is over the sorted lines ``query_id TAB doc_id TAB grade`` (a whole grade as an
    integer), so a TREC qrels file and the BEIR TSV of the same judgements hash the same.

    >>> qrels_hash({"q1": {"d1": 1, "d2": 0}}) == qrels_hash({"q1": {"d2": 0.0, "d1": 1.0}})
    True
    >>> qrels_hash({"q1": {"d1": 1}}) == qrels_hash({"q1": {"d1": 2}})
    False
    """
    if isinstance(qrels, str | os.PathLike):
        from ef.trec import read_qrels

        qrels = read_qrels(qrels)
    if not isinstance(qrels, Mapping):  # sorted() of None or a number named no argument
        raise TypeError(
            f"'qrels' must be a mapping query -> {{doc: grade}} or a qrels path (got {type(qrels).__name__})"
        )
    digest = hashlib.sha256()
    for query_id in sorted(qrels):
        judged = qrels[query_id]
        if not isinstance(query_id, str) or not isinstance(judged, Mapping):
            raise TypeError(f"'qrels' must map str query ids to {{doc: grade}} mappings (got {query_id!r}: "
                            f"{type(judged).__name__})")
        for doc_id in sorted(judged):
            grade: object = judged[doc_id]  # typed float, but a caller's may be anything
            # a NaN was hashed as 'nan' and a str grade as its number: neither is a judgement
            if isinstance(grade, bool) or not isinstance(grade, Real) or not math.isfinite(grade):
                raise ValueError(f"'qrels'[{query_id!r}][{doc_id!r}] must be a finite number (got {grade!r:.80})")
            digest.update(f"{query_id}\t{doc_id}\t{_grade(grade)}\n".encode())
    return f"sha256:{digest.hexdigest()}"


def dataset_checksum(path: str | os.PathLike[str]) -> str:
    """``sha256:<hex>`` of a dataset: a file's bytes, or a BEIR folder's files (their names and bytes).

    A folder's ``corpus.jsonl``, ``queries.jsonl`` (or their ``.gz``) and every file under
    ``qrels/`` count, in sorted order; other files (an index, a cache) do not.
    """
    if not isinstance(path, str | os.PathLike):  # Path(None)'s own message names no argument
        raise TypeError(f"'path' must be a str or os.PathLike path (got {type(path).__name__})")
    root = Path(path)
    digest = hashlib.sha256()
    if root.is_dir():
        files = [root / n for n in ("corpus.jsonl", "corpus.jsonl.gz", "queries.jsonl", "queries.jsonl.gz")]
        files = [f for f in files if f.is_file()]
        if (root / "qrels").is_dir():
            files += sorted(f for f in (root / "qrels").iterdir() if f.is_file())
        if not files:
            raise FileNotFoundError(f"{root}: no corpus.jsonl, queries.jsonl or qrels/ to take a checksum of")
    elif root.is_file():
        files = [root]
    else:
        raise FileNotFoundError(f"{root}: no such file or directory")
    for file in files:
        digest.update(f"{file.relative_to(root) if file != root else file.name}\n".encode())
        with open(file, "rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
    return f"sha256:{digest.hexdigest()}"


def _check_metadata(
    dataset: object, dataset_name: object, missing: object, relevance_level: object,
    ignore_identical_ids: object, max_docs: object, pipeline_id: object, judged_docs_only: object = None,
) -> tuple[float | None, int | None]:
    """What a saved result records, each of its type: missing='bogus' or pipeline_id=3 were written
    as given, and a gate then compared results on them (or refused them for a difference of spelling).

    Returns `relevance_level` and `max_docs` as Python numbers: a numpy integer is one (``evaluate_run``
    takes it), but JSON cannot hold it (``np.int64(1)`` failed in the writer, after the scoring).
    """
    if dataset is not None and not isinstance(dataset, str | os.PathLike):
        raise TypeError(f"'dataset' must be a path (str or os.PathLike) or None (got {type(dataset).__name__})")
    for name, value in (("dataset_name", dataset_name), ("pipeline_id", pipeline_id)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"{name!r} must be a non-empty str or None (got {value!r:.80})")
        if value == "":
            raise ValueError(f"{name!r} must be a non-empty str or None (got '')")
    if missing is not None and missing not in ("zero", "skip"):
        raise ValueError(f"'missing' must be 'zero', 'skip' or None (got {missing!r:.80})")
    if relevance_level is not None and (
        isinstance(relevance_level, bool) or not isinstance(relevance_level, Real) or not math.isfinite(relevance_level)
    ):
        raise TypeError(f"'relevance_level' must be a finite number or None (got {relevance_level!r:.80})")
    if relevance_level is not None and relevance_level <= 0:  # save_result scored a run with 1 for a 0
        raise ValueError(f"'relevance_level' must be a finite number > 0 or None (got {relevance_level!r:.80})")
    for name, flag in (("ignore_identical_ids", ignore_identical_ids), ("judged_docs_only", judged_docs_only)):
        if flag is not None and not isinstance(flag, bool):
            raise TypeError(f"{name!r} must be a bool or None (got {flag!r:.80})")
    depth = None if max_docs is None else check_positive_int(max_docs, "max_docs", what="a positive integer or None")
    level = None if relevance_level is None else (
        int(relevance_level) if isinstance(relevance_level, Integral) else float(relevance_level)
    )
    return level, depth


def result_metadata(
    *,
    qrels: Mapping[str, Mapping[str, float]] | str | os.PathLike[str] | None = None,
    dataset: str | os.PathLike[str] | None = None,
    dataset_name: str | None = None,
    missing: str | None = None,
    relevance_level: float | None = None,
    ignore_identical_ids: bool | None = None,
    max_docs: int | None = None,
    pipeline_id: str | None = None,
    judged_docs_only: bool | None = None,
) -> dict[str, Any]:
    """The metadata a saved result carries (``None`` where unknown), as the top-level keys of its
    JSON (``ef eval --json`` can merge them into its own): ``schema``, ``ef_version``,
    ``dataset`` (the name: `dataset_name`, else the folder's or file's name), ``dataset_checksum``
    (of the file or BEIR folder `dataset`), ``qrels_hash``, ``options`` and ``pipeline_id``.

    >>> meta = result_metadata(qrels={"q1": {"d1": 1}}, missing="zero", relevance_level=1)
    >>> meta["schema"], meta["qrels_hash"][:7]
    ('ef.result/1', 'sha256:')
    >>> meta["options"]
    {'missing': 'zero', 'relevance_level': 1, 'ignore_identical_ids': None, 'judged_docs_only': None, 'max_docs': None}
    """
    relevance_level, max_docs = _check_metadata(
        dataset, dataset_name, missing, relevance_level, ignore_identical_ids, max_docs, pipeline_id, judged_docs_only
    )
    name = dataset_name if dataset_name is not None else None if dataset is None else Path(dataset).name
    return {
        "schema": RESULT_SCHEMA,
        "ef_version": _version(),
        "dataset": name,
        "dataset_checksum": None if dataset is None else dataset_checksum(dataset),
        "qrels_hash": None if qrels is None else qrels_hash(qrels),
        "options": {
            "missing": missing,
            "relevance_level": relevance_level,
            "ignore_identical_ids": ignore_identical_ids,
            "judged_docs_only": judged_docs_only,
            "max_docs": max_docs,
        },
        "pipeline_id": pipeline_id,
    }


def _direction(name: str) -> bool | None:
    from ef.measures import resolve

    try:
        pairs = resolve([name], rankings=False)
    except ValueError:
        return None
    if len(pairs) != 1:
        return None
    return pairs[0][1].spec.higher_is_better


def _finite(where: str, value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{where} is not a finite number (got {value!r})")
    return float(value)


def _per_query(
    source: str, per_query: object, measures: Sequence[str] | None
) -> tuple[dict[str, dict[str, float]], tuple[str, ...]]:
    """Checked ``{query: {measure: value}}`` of the measures every query has (or of `measures`)."""
    if not isinstance(per_query, Mapping) or not per_query:
        raise ValueError(f"{source}: 'per_query' must be a non-empty object of query id -> values")
    rows = list(per_query.items())
    for query_id, values in rows:
        if not isinstance(query_id, str):  # str(1) == "1": an int id was paired with a str one, or merged
            raise ValueError(f"{source}: 'per_query' must have str query ids (got {query_id!r:.80})")
        if not isinstance(values, Mapping):
            raise ValueError(f"{source}: 'per_query'[{query_id!r}] must be an object of measure -> value")
    if measures is None:
        first = rows[0][1]
        names = tuple(m for m in first if all(m in v for _, v in rows))
        if not names:
            raise ValueError(f"{source}: its queries share no measure")
    else:
        names = tuple(measures)
    # A measure asked for in another spelling than the result's key (-m ndcg_cut_10 or nDCG@10 of
    # ef eval's ndcg@10) is read from that key: ef.measures resolves both to the same measure.
    first = rows[0][1]
    keys = {m: m if m in first else _same_measure(m, first) or m for m in names}
    out: dict[str, dict[str, float]] = {}
    for query_id, values in rows:
        row = {}
        for m in names:
            key = keys[m]
            if key not in values:
                has = ", ".join(map(repr, values)) or "none"
                raise ValueError(f"{source}: query {query_id!r} has no value for {m!r} (it has {has})")
            row[m] = _finite(f"{source}: {key!r} of query {query_id!r}", values[key])
        out[str(query_id)] = row
    return out, names


def _same_measure(name: str, keys: Iterable[object]) -> str | None:
    """The one key of `keys` that ef.measures reads as the measure `name` names, else ``None``."""
    from ef.measures import resolve

    def measure(label: object) -> object:
        if not isinstance(label, str):
            return None
        try:
            pairs = resolve([label], rankings=False)
        except ValueError:  # not a measure ef knows (a fastrag metric, a custom key)
            return None
        return pairs[0][1] if len(pairs) == 1 else None

    wanted = measure(name)
    if wanted is None:
        return None
    found = [key for key in keys if isinstance(key, str) and measure(key) == wanted]
    return found[0] if len(found) == 1 else None


def _from_mapping(data: Mapping[str, Any], source: str, measures: Sequence[str] | None) -> Result:
    if data.get("schema") == "ef.compare/1":
        raise ValueError(f"{source}: a comparison report (ef compare --json), not one system's result")
    if "samples" in data and "per_query" not in data:  # BenchmarkResult.to_dict
        samples = data["samples"]
        if not isinstance(samples, list):
            raise ValueError(f"{source}: 'samples' must be a list")
        return _from_samples(samples, source, measures, data.get("higher_is_better") or {})
    if "per_query" not in data:
        raise ValueError(
            f"{source}: no 'per_query' values (save results with ef.gate.save_result, ef eval --json, "
            "or ef trec-eval -q --json)"
        )
    per_query, names = _per_query(source, data["per_query"], measures)
    directions: dict[str, bool | None] = {m: _direction(m) for m in names}
    recorded = data.get("measures")
    if isinstance(recorded, list):
        for item in recorded:
            known = isinstance(item, Mapping) and isinstance(item.get("higher_is_better"), bool)
            if known and item.get("name") in directions:
                directions[item["name"]] = item["higher_is_better"]
    return Result(per_query, names, directions, _metadata(data, source), source)


def _metadata(data: Mapping[str, Any], source: str) -> dict[str, Any]:
    """The metadata keys of a saved result (``ef eval --json``'s ``dataset`` is the folder it read,
    its ``pipeline`` object holds the pipeline's ``id``)."""
    dataset: dict[str, Any] = {}
    for key, field_name in (("dataset", "name"), ("dataset_checksum", "checksum"), ("split", "split")):
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{source}: field {key!r} must be a string (got {value!r})")
        if value is not None:
            dataset[field_name] = Path(value).name if key == "dataset" else value
    options = data.get("options")
    if options is not None and not isinstance(options, Mapping):
        raise ValueError(f"{source}: field 'options' must be an object (got {options!r})")
    pipeline_id = data.get("pipeline_id")
    pipeline = data.get("pipeline")
    if pipeline_id is None and isinstance(pipeline, Mapping):
        pipeline_id = pipeline.get("id")
    return {
        "schema": data.get("schema"),
        "ef_version": data.get("ef_version"),
        "dataset": dataset or None,
        "qrels_hash": data.get("qrels_hash"),
        "options": options,
        "pipeline_id": pipeline_id,
    }


def _from_lines(samples: Sequence[Mapping[str, Any]], source: str, measures: Sequence[str] | None) -> Result:
    """A ``BenchmarkResult.save_jsonl`` file's records."""
    # save_jsonl records the directions on every line (older files: not at all)
    directions = next((r.get("higher_is_better") for r in samples), None)
    return _from_samples(samples, source, measures, directions if isinstance(directions, Mapping) else {})


def _from_samples(
    samples: Sequence[Any], source: str, measures: Sequence[str] | None, directions: Mapping[str, Any]
) -> Result:
    per_query: dict[str, dict[str, Any]] = {}
    for i, record in enumerate(samples):
        if not isinstance(record, Mapping) or not isinstance(record.get("sample_id"), str):
            raise ValueError(f"{source}: sample {i + 1} has no 'sample_id'")
        scores = record.get("scores")
        if not isinstance(scores, Mapping):
            raise ValueError(f"{source}: sample {record['sample_id']!r} has no 'scores'")
        if record["sample_id"] in per_query:
            raise ValueError(f"{source}: sample {record['sample_id']!r} appears twice")
        per_query[record["sample_id"]] = dict(scores)
    for sample_id, scores in per_query.items():
        for m, v in scores.items():
            if v is None and (measures is None or m in measures):
                raise ValueError(
                    f"{source}: sample {sample_id!r} has no score for {m!r} (its call failed?): "
                    "a gate pairs every sample"
                )
    checked, names = _per_query(source, per_query, measures)
    direction = {m: directions[m] if isinstance(directions.get(m), bool) else _direction(m) for m in names}
    return Result(checked, names, direction, {}, source)


READABLE = (
    "a path (str or os.PathLike) of a saved result or a TREC run, a mapping, a report with per_query, "
    "a fastrag BenchmarkResult or an ef.gate.Result"
)
"""What :func:`load_result` reads, said in its TypeError (and ``ef.gate.gate``'s, which names its side)."""


def _shown(value: object) -> str:
    """``None`` or the type's name: a wrong object's repr can be long, and says less than its type."""
    return "None" if value is None else type(value).__name__


def readable(source: object) -> bool:
    """Whether `source` is of a kind :func:`load_result` reads (its content is checked there)."""
    if isinstance(source, Result | Piped | Mapping | str | os.PathLike):
        return True
    if hasattr(source, "outcomes") and hasattr(source, "scores"):
        return True
    return isinstance(getattr(source, "per_query", None), Mapping)


def load_result(
    source: Any,
    *,
    qrels: Mapping[str, Mapping[str, float]] | str | os.PathLike[str] | None = None,
    measures: Sequence[str] | None = None,
    missing: str = "zero",
    relevance_level: float = 1,
    max_docs: int | None = None,
    ignore_identical_ids: bool = False,
) -> Result:
    """Read one system's per-query result from whatever holds it.

    `source` is a :class:`Result`; a report with ``per_query`` (:func:`~ef.evaluation.evaluate_run`'s,
    :func:`~ef.evaluation.evaluate_retrieval`'s); a fastrag ``BenchmarkResult``; a mapping or a
    ``.json`` file as :func:`save_result`, ``ef eval --json``, a report's ``to_dict`` or ``ef
    trec-eval -q --json`` write it; a ``.jsonl`` file of ``BenchmarkResult.save_jsonl``; or a
    TREC run (a path, ``-`` for standard input, a pipe, or ``{query: {doc: score}}``), scored
    against `qrels` with `measures` and the options (then its metadata records the qrels' hash and
    the options; `ignore_identical_ids` drops a document whose id is its query's, as ``ef eval`` does
    for ArguAna and Quora). The ``.json``/``.jsonl`` names are told in any case, and may end ``.gz``.
    Standard input or a pipe whose first byte that is not white space is ``{`` is a saved
    result's JSON (read once, kept to be read again).
    `measures` ``None`` keeps every measure all queries have. With `qrels`, a result that records
    no qrels hash gets theirs: it is taken to be judged with them.
    """
    if not isinstance(ignore_identical_ids, bool):
        raise TypeError(f"'ignore_identical_ids' must be a bool (got {ignore_identical_ids!r:.80})")
    loaded = _load(source, qrels, measures, missing, relevance_level, max_docs, ignore_identical_ids)
    if qrels is not None and loaded.metadata.get("qrels_hash") is None:
        # A report scored elsewhere, said to be judged with `qrels`: record their hash for the check.
        loaded = Result(loaded.per_query, loaded.measures, loaded.higher_is_better,
                        {**loaded.metadata, "qrels_hash": qrels_hash(qrels)}, loaded.source)
    return loaded


def _load(
    source: Any,
    qrels: Mapping[str, Mapping[str, float]] | str | os.PathLike[str] | None,
    measures: Sequence[str] | None,
    missing: str,
    relevance_level: float,
    max_docs: int | None,
    ignore_identical_ids: bool,
) -> Result:
    if isinstance(source, Result):
        return source
    if hasattr(source, "outcomes") and hasattr(source, "scores"):  # fastrag BenchmarkResult
        samples = [
            {"sample_id": o.sample_id, "scores": {m: source.scores[m][i] for m in source.scores}}
            for i, o in enumerate(source.outcomes)
        ]
        return _from_samples(samples, "BenchmarkResult", measures, dict(source.higher_is_better))
    per_query = getattr(source, "per_query", None)
    if not isinstance(source, Mapping | str | os.PathLike) and isinstance(per_query, Mapping):
        checked, names = _per_query(type(source).__name__, per_query, measures)
        return Result(checked, names, {m: _direction(m) for m in names}, {}, type(source).__name__)
    if isinstance(source, Mapping):
        if "per_query" in source or "samples" in source or "schema" in source:
            return _from_mapping(source, "result", measures)
        return _from_run(source, "run", qrels, measures, missing, relevance_level, max_docs, ignore_identical_ids)
    if not isinstance(source, str | os.PathLike | Piped):
        raise TypeError(f"'source' must be a result: {READABLE} (got {_shown(source)})")
    if not isinstance(source, Piped):
        piped = open_piped(source)
        if piped is None:
            path = Path(source)
            saved = _saved_at(path, measures)
            if saved is not None:
                return saved
            return _from_run(str(path), str(path), qrels, measures, missing, relevance_level, max_docs,
                             ignore_identical_ids)
        source = piped
    if isinstance(source.saved, list):
        return _from_lines(source.saved, source.name, measures)
    if source.saved is not None:
        return _from_mapping(source.saved, source.name, measures)
    return _from_run(source.run, source.name, qrels, measures, missing, relevance_level, max_docs, ignore_identical_ids)


def _saved_at(path: Path, measures: Sequence[str] | None) -> Result | None:
    """The saved result at `path` (named ``.json`` or ``.jsonl``), or ``None`` for a TREC run."""
    if path.is_dir():
        raise IsADirectoryError(f"{path}: a folder, not a result")
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    kind = saved_kind(path)
    if kind == ".json":
        data = read_json(path)  # ef.io's strict reader: NaN, 1e400 or a key given twice is named
        if not isinstance(data, Mapping):
            raise ValueError(f"{path}: expected a JSON object, got {json_type(data)}")
        return _from_mapping(data, str(path), measures)
    if kind == ".jsonl":
        samples = [value for _, value in iter_json_objects(path)]  # a line of another type: file:line
        return _from_lines(samples, str(path), measures)
    return None


def saved_kind(source: str | os.PathLike[str]) -> str | None:
    """``".json"`` or ``".jsonl"`` when `source` is named as a saved result is, in any case and maybe
    gzip-compressed (``BASE.JSON``, ``base.json.gz``: the readers tell gzip by its bytes); else ``None``.

    >>> saved_kind("BASE.JSON"), saved_kind("b.jsonl.gz"), saved_kind("run.trec")
    ('.json', '.jsonl', None)
    """
    name = os.fspath(source).lower().removesuffix(".gz")
    return next((kind for kind in (".jsonl", ".json") if name.endswith(kind)), None)


@dataclass(frozen=True)
class Piped:
    """Standard input or a pipe, opened: a saved result's JSON object or JSON Lines records (`saved`),
    else a TREC run whose bytes are kept as read (`run`, a ``RunBytes``), so that what it is is known
    before it is scored."""

    name: str
    saved: Mapping[str, Any] | list[dict[str, Any]] | None
    run: Any = None


def open_piped(source: str | os.PathLike[str]) -> Piped | None:
    """`source` read as a saved result when it is standard input (``-``) or a pipe (<(ef eval --json -),
    <(sort run)) whose first byte that is not white space is ``{``, else opened as a TREC run (read
    once, kept); ``None`` for a path that is no pipe."""
    path = Path(source)
    if os.fspath(source) != "-" and not (path.exists() and not path.is_file() and not path.is_dir()):
        return None
    from ef.evaluation._hits import RunBytes, open_run

    run = open_run(os.fspath(source))  # a pipe: its bytes kept as read (RunBytes)
    if not isinstance(run, RunBytes):  # a file put there since the check above: named, not held
        return None
    if _first_byte(run.pipe.reader()) != b"{":
        return Piped(run.name, None, run)
    # '{' first: a JSON object, JSON Lines (save_jsonl's: a first line that is a whole object, and
    # more), or malformed JSON that loads names (<stdin>:LINE: ...)
    data = run.pipe.whole()
    text = decode_utf8(data, run.name)
    lines = text.strip().split("\n")
    if len(lines) > 1 and _one_object(lines[0]):
        return Piped(run.name, [value for _, value in iter_json_objects(data, run.name)])
    return Piped(run.name, loads(text, run.name))


def _one_object(line: str) -> bool:
    """Whether `line` alone is a JSON object (the first line of JSON Lines, not of an indented object)."""
    try:
        return isinstance(loads(line, ""), dict)
    except ValueError:
        return False


def _first_byte(read: Callable[[int], bytes]) -> bytes:
    """The first byte that is not white space of what `read(n)` gives, ``b""`` for none."""
    while chunk := read(4096):
        if stripped := chunk.lstrip():
            return stripped[:1]
    return b""


def _from_run(
    run: Any,
    source: str,
    qrels: Mapping[str, Mapping[str, float]] | str | os.PathLike[str] | None,
    measures: Sequence[str] | None,
    missing: str,
    relevance_level: float,
    max_docs: int | None,
    ignore_identical_ids: bool,
) -> Result:
    if qrels is None:
        raise ValueError(f"{source}: a TREC run is gated against qrels: give them (--qrels)")
    from ef.evaluation import evaluate_run
    from ef.evaluation._inputs import warn_unreached_level
    from ef.evaluation._run import DEFAULT_MEASURES, _load_qrels

    if isinstance(qrels, str | os.PathLike):
        qrels = _load_qrels(qrels)  # read as evaluate_run reads it: a file with no judgement is named
    names = list(measures) if measures is not None else list(DEFAULT_MEASURES)
    if ignore_identical_ids:  # as ef eval and ef trec-eval --ignore-identical-ids drop a self-match
        from ef.evaluation._run import _load_run

        loaded = _load_run(run)
        plain = loaded.to_dict() if hasattr(loaded, "to_dict") else loaded
        run = {query: {doc: s for doc, s in docs.items() if doc != query} for query, docs in plain.items()}
    # Scored with missing="skip" first, to count the judged queries the run lacks (the gate warns, as
    # ef compare does: a run of the wrong queries or ids was a silent FAIL); with "zero" they get
    # what evaluate_run gives an empty ranking, as evaluate_run(missing="zero") gives them.
    try:
        with warnings.catch_warnings():
            if missing == "zero":  # said below of every judged query, not of the run's alone
                warnings.filterwarnings("ignore", message="relevance_level=", category=UserWarning)
            report = evaluate_run(run, qrels, names, missing="skip", relevance_level=relevance_level,
                                  max_docs=max_docs)
        per_query = dict(report.per_query)
    except ValueError as error:
        if missing != "zero" or not str(error).startswith("no query to evaluate: no query of the run"):
            raise
        per_query = {}
    if missing == "zero":
        # As evaluate_run(missing="zero") says it: of the highest grade of every judged query. The
        # run's queries alone said "-l 2: no judgement reaches it (the highest grade is 1)" of qrels
        # that hold a 2 where the run lacked that query.
        grades = [float(g) for judged in qrels.values() for g in judged.values()]
        warn_unreached_level(max(grades) if grades else None, relevance_level, stacklevel=4)
    # A query whose judgements are empty ({'q2': {}}, as qrels filtered to grade > 0 give) is judged by
    # nothing: evaluate_run leaves it out (c939d8e), so it is not lacked, and has no zeros to take.
    lacking = [q for q in qrels if len(qrels[q]) and q not in per_query]
    if lacking and missing == "zero":
        with warnings.catch_warnings():  # said above, of every judged query, if no grade reaches the level
            warnings.filterwarnings("ignore", message="relevance_level=", category=UserWarning)
            zeros = evaluate_run({q: {} for q in lacking}, {q: qrels[q] for q in lacking}, names,
                                 relevance_level=relevance_level, max_docs=max_docs)
        per_query = {q: per_query[q] if q in per_query else zeros.per_query[q]
                     for q in sorted(qrels) if len(qrels[q])}
    checked, labels = _per_query(source, per_query, None)
    metadata = _metadata(
        # Scored here: every retrieved doc counts (no trec_eval -J; a self-match only as asked), so a
        # result saved another way is refused, not compared with this one.
        result_metadata(qrels=qrels, missing=missing, relevance_level=relevance_level, max_docs=max_docs,
                        ignore_identical_ids=ignore_identical_ids, judged_docs_only=False), source
    )
    return Result(checked, labels, {m: _direction(m) for m in labels}, metadata, source,
                  lacked=len(lacking) if missing == "zero" else 0)


def save_result(
    result: Any,
    path: str | os.PathLike[str],
    *,
    qrels: Mapping[str, Mapping[str, float]] | str | os.PathLike[str] | None = None,
    dataset: str | os.PathLike[str] | None = None,
    dataset_name: str | None = None,
    missing: str | None = None,
    relevance_level: float | None = None,
    ignore_identical_ids: bool | None = None,
    max_docs: int | None = None,
    pipeline_id: str | None = None,
    measures: Sequence[str] | None = None,
) -> Path:
    """Write `result` (anything :func:`load_result` reads) as JSON with its metadata, atomically.

    The metadata given here fills what the result does not record itself (`qrels` are hashed,
    `dataset` checksummed); a TREC run is scored against `qrels` first. Returns the path.
    """
    if not isinstance(path, str | os.PathLike):  # checked before a TREC run is scored
        raise TypeError(f"'path' must be a str or os.PathLike path (got {type(path).__name__})")
    relevance_level, max_docs = _check_metadata(
        dataset, dataset_name, missing, relevance_level, ignore_identical_ids, max_docs, pipeline_id
    )
    loaded = load_result(
        result, qrels=qrels, measures=measures, missing=missing or "zero", relevance_level=relevance_level or 1,
        max_docs=max_docs, ignore_identical_ids=bool(ignore_identical_ids),
    )
    given = result_metadata(
        qrels=qrels, dataset=dataset, dataset_name=dataset_name, missing=missing, relevance_level=relevance_level,
        ignore_identical_ids=ignore_identical_ids, max_docs=max_docs, pipeline_id=pipeline_id,
    )
    merged = dict(loaded.metadata)
    for key in ("qrels_hash", "pipeline_id"):
        if given[key] is not None:
            merged[key] = given[key]
    if given["dataset"] is not None:
        merged["dataset"] = {**(merged.get("dataset") or {}), "name": given["dataset"],
                             "checksum": given["dataset_checksum"]}
    options = dict(merged.get("options") or {})
    for key, value in given["options"].items():
        if value is not None:
            options[key] = value
    merged["options"] = {key: options.get(key) for key in OPTION_NAMES}
    data = Result(loaded.per_query, loaded.measures, loaded.higher_is_better, merged, loaded.source).to_dict()
    from ef.io._atomic import atomic_writer

    target = Path(path)
    with atomic_writer(target) as stream:
        stream.write((json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8"))
    return target
