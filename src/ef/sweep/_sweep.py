""":func:`sweep`: run a grid of pipelines over one dataset, save every cell, compare them all."""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ef._console import Progress
from ef._validate import check_bool, check_non_empty_str
from ef.pipeline import Pipeline, content_id, expand_grid
from ef.pipeline_stages import Workspace, fusion_method
from ef.sweep._cell import CellJob, score_cell
from ef.sweep._report import SweepResult
from ef.sweep._result import CellResult
from ef.sweep._store import SweepStore

__all__ = ["sweep"]

if TYPE_CHECKING:
    from ef.datasets import Dataset as LoadedDataset

Dataset = tuple[Mapping[str, str], Mapping[str, str], Mapping[str, Mapping[str, float]]]


@dataclass(frozen=True)
class _Scores:
    """Per-query values in the shape :func:`ef.compare.compare` reads from a report."""

    per_query: Mapping[str, Mapping[str, float]]


def _check_path(value: object, name: str) -> None:
    """A folder argument: a str or os.PathLike (``os.fspath``'s own error names no argument)."""
    if value is not None and (not isinstance(value, str | os.PathLike) or not isinstance(os.fspath(value), str)):
        raise TypeError(
            f"{name!r} must be a folder path (str or os.PathLike[str]) or None (got {type(value).__name__})"
        )
    if value is not None and not os.fspath(value):  # Path('') is the current folder
        raise ValueError(f"{name!r} must be a folder path, not an empty str")


def _check_triple(dataset: Dataset) -> None:
    """The queries and qrels of a ``(corpus, queries, qrels)`` tuple (the corpus is checked where it
    is indexed): a NaN grade failed at the end, in the cell's JSON, and a str grade inside a comparison."""
    _, queries, qrels = dataset
    if not isinstance(queries, Mapping):
        raise TypeError(f"'dataset' queries must be a mapping {{query_id: text}} (got {type(queries).__name__})")
    for query_id, text in queries.items():
        if not isinstance(query_id, str) or not isinstance(text, str):
            raise TypeError(f"'dataset' queries must map str ids to str texts (got {query_id!r}: {text!r:.80})")
    if not isinstance(qrels, Mapping):
        raise TypeError(
            f"'dataset' qrels must be a mapping {{query_id: {{doc_id: grade}}}} (got {type(qrels).__name__})"
        )
    for query_id, judged in qrels.items():
        if not isinstance(query_id, str):
            raise TypeError(f"'dataset' qrels must have str query ids (got {query_id!r})")
        if not isinstance(judged, Mapping):
            raise TypeError(f"'dataset' qrels[{query_id!r}] must be a mapping {{doc_id: grade}} "
                            f"(got {type(judged).__name__})")
        for doc_id, grade in judged.items():
            if not isinstance(doc_id, str):
                raise TypeError(f"'dataset' qrels[{query_id!r}] must have str doc ids (got {doc_id!r})")
            where = f"'dataset' qrels[{query_id!r}][{doc_id!r}]"
            if isinstance(grade, bool) or not isinstance(grade, int | float | np.integer | np.floating):
                raise TypeError(f"{where} must be a finite number (got {grade!r:.80})")
            if not np.isfinite(float(grade)):
                raise ValueError(f"{where} must be a finite number (got {grade!r})")


def _load_dataset(dataset: str | os.PathLike[str] | Dataset | LoadedDataset, split: str) -> tuple[str, Dataset]:
    check_non_empty_str(split, "split")
    from ef.datasets import Dataset as Loaded

    if isinstance(dataset, str | os.PathLike):
        _check_path(dataset, "dataset")
        if not Path(dataset).is_dir():
            from ef.datasets import load

            # A zip or a name, as ef eval takes them (it said "dataset directory d.zip does not exist"
            # of a zip that did); ef.datasets finds, checks and reads it, or says where it looked.
            dataset = load(dataset, split=split)
    if isinstance(dataset, Loaded):  # what ef.datasets.load returns: the triple and its facts
        facts = dataset.facts
        if facts.query_ids_are_doc_ids or facts.relevance_level != 1:
            # Conventions a sweep does not apply: its numbers would silently not be the dataset's.
            convention = ("drop each query's own document from its ranking (ignore_identical_ids)"
                          if facts.query_ids_are_doc_ids else f"count grade >= {facts.relevance_level:g} as relevant")
            raise ValueError(f"{dataset.name}: its reference numbers {convention}, which a sweep does not do; "
                             "evaluate it with ef eval")
        return dataset.name, (dataset.corpus, dataset.queries, dataset.qrels)
    if isinstance(dataset, str | os.PathLike):
        from ef.evaluation import read_beir

        folder = Path(dataset)
        nested = folder / "qrels" / f"{split}.tsv"
        flat = folder / "qrels.tsv"
        qrels = f"qrels/{split}.tsv" if nested.exists() or not (split == "test" and flat.exists()) else "qrels.tsv"
        corpus, queries, judged = read_beir(folder, qrels=qrels)
        return str(folder), (corpus, queries, judged)
    if isinstance(dataset, tuple) and len(dataset) == 3:
        _check_triple(dataset)
        return "the given dataset", dataset
    raise TypeError(
        "'dataset' must be a BEIR folder or zip, a dataset name, an ef.datasets.Dataset or a "
        f"(corpus, queries, qrels) tuple (got {type(dataset).__name__})"
    )


def _mean_interval(values: np.ndarray, *, confidence: float, resamples: int, seed: int) -> tuple[float, float]:
    """The percentile bootstrap interval of the mean (ef.compare's resampling, on one column)."""
    from ef.comparison._stats import paired_statistics

    if len(values) < 2:
        mean = float(values.mean()) if len(values) else 0.0
        return mean, mean
    stats = paired_statistics(values[:, None], test="bootstrap", resamples=resamples, seed=seed, confidence=confidence)
    return float(stats.ci_low[0]), float(stats.ci_high[0])


def _resolve(key: object, cells: list[Pipeline]) -> str:
    """The id of the cell that `key` names: an id, a label, a Pipeline or a mapping of its fields."""
    given = key
    if isinstance(key, Pipeline | Mapping):
        try:
            wanted = key if isinstance(key, Pipeline) else Pipeline.from_dict(key)
        except (TypeError, ValueError) as error:  # the pipeline's own message named no 'baseline'
            raise type(error)(f"'baseline': {error}") from None
        key = wanted.id
    if not isinstance(key, str):
        raise TypeError(f"'baseline' must be a cell id, label, Pipeline or mapping (got {type(key).__name__})")
    for cell in cells:
        if key in (cell.id, cell.label):
            return cell.id
    shown = f"{key!r}" if given is key else f"{wanted.label!r} (id {key})"  # a mapping: say the cell it makes
    raise ValueError(f"'baseline' {shown} is not a cell of this sweep (give a cell's id or label)")


def sweep(
    grid: Mapping[str, Any] | Pipeline | Iterable[Mapping[str, Any] | Pipeline],
    dataset: str | os.PathLike[str] | Dataset | LoadedDataset,
    out: str | os.PathLike[str] | None = None,
    *,
    measures: Iterable[str] = ("ndcg@10",),
    baseline: str | Pipeline | Mapping[str, Any] | None = None,
    split: str = "test",
    cache_dir: str | os.PathLike[str] | None = None,
    resume: bool = True,
    test: str = "t",
    correction: str = "holm",
    alpha: float = 0.05,
    confidence: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
    device: str | None = None,
    batch_size: int = 32,
    show_progress: bool = True,
    workspace: Workspace | None = None,
    engine: str = "local",
    ray_address: str | None = None,
) -> SweepResult:
    """Run every pipeline of `grid` over one dataset and decide which is best, with the evidence.

    Parameters
    ----------
    grid
        A grid (each :class:`~ef.pipeline.Pipeline` field a value or a list: their cartesian
        product), a list of grids and pipelines, or one pipeline; see :func:`ef.pipeline.expand_grid`.
    dataset
        A BEIR folder (``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``), a BEIR zip or a
        dataset name (``beir/scifact``: found and checked by :func:`ef.datasets.load`), a loaded
        :class:`ef.datasets.Dataset` or a ``(corpus, queries, qrels)`` tuple. A dataset whose
        reference numbers drop each query's own document (ArguAna, Quora) or count only grades
        above 1 as relevant (TREC DL) is refused: a sweep applies neither convention. The queries
        with a positive judgement and a text are scored, as ``ef eval`` scores them (a judged query
        without a text is warned of).
    out
        The sweep's folder: each cell's run and scores are saved there as it finishes, and a sweep
        run again with the same folder scores only the cells not saved yet (see ``resume``).
        ``None``: nothing is saved.
    measures
        What to score (ef's spelling: ``ndcg@10``, ``recall@100``, ``mrr`` ...); the first decides.
        Every cell's run is scored at the level of the qrels' ids: chunks collapse to their source
        documents, each at its best chunk's score (:func:`ef.pipeline.collapse_to_sources`), and
        the sources are scored in that order, as ``ef eval`` scores a retriever (the saved run
        holds rank scores n, n-1, ...: tied scores keep the pipeline's order, not trec_eval's).
    baseline
        The cell every other is compared with (an id, a label, a Pipeline or its fields);
        ``None``: the best cell.
    cache_dir
        Where dense vectors are kept across runs (default ``out/cache``; in memory without `out`).
    resume
        Keep the cells `out` already holds (the same dataset and measures, else an error);
        ``False`` deletes them and scores everything again.
    test, correction, alpha, confidence, resamples, seed
        As in :func:`ef.compare.compare`: the paired test, the correction over the family of
        comparisons, the significance level, and the bootstrap of each interval.
    device, batch_size
        Where and in what batches dense models encode.
    show_progress
        Show on stderr how many cells are scored, with an ETA, and the encoding bars: on a
        terminal a bar; off one (a log) a line when scoring starts, at most every 30 s, and when
        it ends, as every ``ef`` command does (:class:`ef._console.Progress`).
    workspace
        A :class:`~ef.pipeline_stages.Workspace` of the same corpus to reuse (and whose
        ``counts`` to read); by default a new one. With ``engine="ray"`` its corpus, cache folder,
        device and batch size are what the Ray actors use, and the actors' counts are added to it.
    engine
        ``"local"``: the cells run here, one after another. ``"ray"``: each chunking's cells run
        in a Ray actor of their own, chunkings in parallel (one CPU each), and each cell is saved
        here as it finishes: the same numbers, the same resuming (``pip install 'ef-eval[ray]'``).
    ray_address
        The Ray cluster (``"127.0.0.1:6379"``); ``None``: ``RAY_ADDRESS``, else a local cluster on
        127.0.0.1 started for the sweep and stopped after it, as ``ef eval --engine ray`` does.

    Returns
    -------
    SweepResult

    Raises
    ------
    ValueError
        For a bad grid, option or baseline, or a folder holding another dataset's sweep.
    ImportError
        For ``engine="ray"`` without Ray Data installed.

    Examples
    --------
    >>> from ef.datasets import demo_dataset
    >>> result = sweep({"k1": [0.5, 1.2], "size": [8, "whole"]}, demo_dataset(), show_progress=False)
    >>> [(row["label"], round(row["mean"], 4), row["verdict"])
    ...  for row in result.rows()]  # doctest: +NORMALIZE_WHITESPACE
    [('bm25 k1=0.5 b=0.75 | 8 words | k=100', 0.783, 'not significant'),
     ('bm25 k1=0.5 b=0.75 | whole docs | k=100', 0.8011, 'not significant'),
     ('bm25 k1=1.2 b=0.75 | 8 words | k=100', 0.7666, 'not significant'),
     ('bm25 k1=1.2 b=0.75 | whole docs | k=100', 0.8078, 'baseline')]
    >>> round(result.cell(result.best).metrics["ndcg@10"], 4)  # ef eval's NDCG@10 on the demo dataset
    0.8078
    """
    from ef.compare import check_options, compare
    from ef.measures import parse_measure

    started = time.perf_counter()
    pipelines = expand_grid(grid)
    if not isinstance(measures, str | Iterable):
        raise TypeError(f"'measures' must be a measure name or a list of them (got {type(measures).__name__})")
    names = [measures] if isinstance(measures, str) else list(measures)
    if not names:
        raise ValueError("'measures' is empty: name at least one, e.g. 'ndcg@10'")
    for name in names:
        spec = parse_measure(name).spec  # an unknown measure fails before any work
        if spec.aggregate != "mean":  # its "mean" would be a sum (num_ret: 226.0) beside a CI of means
            raise ValueError(
                f"'measures': {name!r} is summarised as a {spec.summary}, not a mean over queries; a sweep "
                "reports and compares per-query means, so pick a per-query score"
            )
    _check_path(out, "out")
    _check_path(cache_dir, "cache_dir")
    resume = check_bool(resume, "resume")
    show_progress = check_bool(show_progress, "show_progress")
    if workspace is not None and not isinstance(workspace, Workspace):
        raise TypeError(f"'workspace' must be an ef.pipeline_stages.Workspace or None (got {type(workspace).__name__})")
    check_options(test, correction, alpha, confidence, resamples, seed)
    if engine not in ("local", "ray"):
        raise ValueError(f"'engine' must be 'local' or 'ray' (got {engine!r})")
    if ray_address is not None and engine != "ray":
        raise ValueError("'ray_address' needs engine='ray'")
    if engine == "ray":
        from ef.source_manager.scale import require_ray

        require_ray()  # ImportError with the install command, before any work
    higher = parse_measure(names[0]).spec.higher_is_better
    baseline_id = None if baseline is None else _resolve(baseline, pipelines)
    labels: dict[str, str] = {}
    for p in pipelines:  # comparisons and tables name cells by label: two cells must not share one
        if labels.setdefault(p.label, p.id) != p.id:
            raise ValueError(f"two pipelines of the grid have the label {p.label!r} (ids {labels[p.label]}, {p.id})")

    name, (corpus, queries, qrels) = _load_dataset(dataset, split)
    # The queries ef eval scores (evaluate_retrieval): those with a positive judgement and a text. A
    # query judged only non-relevant was scored 0 here and counted in every mean, where ef eval skips it.
    relevant = [q for q in qrels if any(g > 0 for g in qrels[q].values())]
    query_ids = sorted(q for q in relevant if q in queries)
    if len(query_ids) < 1:
        raise ValueError(f"{name}: no query with a positive judgement has a text")
    missing = sorted(q for q in relevant if q not in queries)
    if missing:  # as ef eval says it: the means are over fewer queries than were judged
        warnings.warn(
            f"{len(missing)} judged {'query has' if len(missing) == 1 else 'queries have'} no text in {name} and "
            f"{'was' if len(missing) == 1 else 'were'} not scored (first: {missing[0]!r})",
            UserWarning, stacklevel=2,
        )
    # a numpy grade (checked, and taken, by _check_triple) as the Python number it is: the dataset's
    # id is of JSON, which holds no np.int64 (it failed there, after the corpus was read)
    judged = {q: {d: g.item() if isinstance(g, np.generic) else g for d, g in qrels[q].items()} for q in query_ids}
    texts = [queries[q] for q in query_ids]
    positive = [float(g) for docs in judged.values() for g in docs.values() if g > 0]
    level = min(positive) if positive else 1.0  # relevant: grade > 0, as ef eval scores

    if workspace is not None:
        workspace.check_corpus(corpus, "dataset")  # else another corpus was searched, with this one's qrels
    if workspace is None:
        cache = cache_dir if cache_dir is not None else (None if out is None else Path(out) / "cache")
        workspace = Workspace(
            corpus, cache_dir=cache, device=device, batch_size=batch_size, show_progress=show_progress
        )
    fingerprint = content_id(
        "ef.sweep.dataset/1",
        {"corpus": workspace.fingerprint, "queries": [[q, queries[q]] for q in query_ids],
         "qrels": [[q, sorted(judged[q].items())] for q in query_ids]},
    )
    store = None
    if out is not None:
        store = SweepStore(out, dataset={"name": name, "fingerprint": fingerprint}, measures=names, resume=resume)

    records: dict[str, dict[str, Any]] = {}
    loaded: list[str] = []
    if store is not None:
        for pipeline in pipelines:
            record = store.load(pipeline)
            if record is not None:
                records[pipeline.id] = record
                loaded.append(pipeline.id)
    pending = [p for p in pipelines if p.id not in records]
    # Each first stage retrieves once, at the deepest depth its pending cells need.
    deepest: dict[tuple[Any, ...], int] = {}
    for p in pending:
        group = (p.chunking(), p.first_stage())
        deepest[group] = max(deepest.get(group, 0), p.first_stage_depth)
    # The progress every command prints (ef._console): a start line, a line at most every 30 s
    # with the count and ETA, and an end line off a terminal; a bar on one. Cells read back
    # are not counted: the rate and ETA are those of the cells scored now.
    read_back = f" ({len(loaded)} read back)" if loaded else ""
    progress = Progress(len(pending), f"sweep cells{read_back}", enabled=show_progress and bool(pending))
    n = len(query_ids)
    job = CellJob(tuple(query_ids), tuple(texts), judged, tuple(names), level, fingerprint)

    def finished(pipeline: Pipeline, record: dict[str, Any], run: dict[str, dict[str, float]]) -> None:
        if store is not None:
            store.save(pipeline, record, run)
        records[pipeline.id] = record
        progress.update()

    with progress:
        if engine == "ray":
            from ef.sweep._ray import run_cells_on_ray

            computed = run_cells_on_ray(
                pending, {p.id: deepest[(p.chunking(), p.first_stage())] for p in pending}, job, workspace.corpus,
                cache_dir=workspace.cache_dir, device=workspace.device, batch_size=workspace.batch_size,
                address=ray_address, on_cell=finished,
            )
            for kind, counter in computed.items():
                workspace.counts[kind].update(counter)
        else:
            for pipeline in pending:
                depth = deepest[(pipeline.chunking(), pipeline.first_stage())]
                record, run = score_cell(workspace, pipeline, job, depth)
                finished(pipeline, record, run)

    cells = []
    for pipeline in pipelines:
        record = records[pipeline.id]
        per_query = {q: dict(zip(names, record["per_query"][q], strict=True)) for q in query_ids}
        column = np.array([per_query[q][names[0]] for q in query_ids], dtype=np.float64)
        low, high = _mean_interval(column, confidence=confidence, resamples=resamples, seed=seed)
        cells.append(CellResult(
            pipeline=pipeline,
            metrics=dict(record["metrics"]),
            per_query=per_query,
            ci_low=low,
            ci_high=high,
            retrieve_ms=float(record["retrieve_ms"]),
            rerank_ms=float(record["rerank_ms"]),
            index_bytes=int(record["index_bytes"]),
            build_seconds=float(record["build_seconds"]),
            run_path=None if store is None or store.saved_run(pipeline) is None else str(store.run_path(pipeline)),
            loaded=pipeline.id in loaded,
        ))

    means = [c.metrics[names[0]] for c in cells]
    best_index = int(np.argmax(means)) if higher else int(np.argmin(means))
    best = cells[best_index]
    base = cells[[c.id for c in cells].index(baseline_id)] if baseline_id is not None else best
    comparison = versus_best = None
    indistinguishable: tuple[str, ...] = ()
    if len(cells) > 1 and n >= 2:
        options = {"test": test, "correction": correction, "alpha": alpha, "confidence": confidence,
                   "resamples": resamples, "seed": seed}
        runs = {c.label: _Scores(c.per_query) for c in cells}
        comparison = compare(runs, None, [names[0]], baseline=base.label, **options)  # type: ignore[arg-type]
        versus_best = comparison if base is best else compare(runs, None, [names[0]], baseline=best.label, **options)  # type: ignore[arg-type]
        indistinguishable = tuple(
            c.id for c in cells if c is not best and not versus_best.get(c.label, names[0]).significant
        )
    return SweepResult(
        dataset=name,
        measures=tuple(names),
        higher_is_better=higher,
        cells=tuple(cells),
        best=best.id,
        baseline=base.id,
        comparison=comparison,
        versus_best=versus_best,
        indistinguishable=indistinguishable,
        n_queries=n,
        scored=tuple(p.id for p in pending),
        loaded=tuple(loaded),
        counts={k: {_key(c): v for c, v in counter.items()} for k, counter in workspace.counts.items()},
        settings={"test": test, "correction": correction, "alpha": alpha, "confidence": confidence,
                  "resamples": resamples, "seed": seed, "split": split, "fusion": fusion_method(),
                  "relevance_level": level},
        directory=None if store is None else str(store.directory),
        seconds=time.perf_counter() - started,
    )


def _key(value: object) -> str:
    """A count's key as text: ``words/200/40``, ``words/200/40/all-MiniLM-L6-v2`` ..."""
    if isinstance(value, tuple):
        return "/".join("whole" if v is None else _key(v) for v in value)
    return str(value)
