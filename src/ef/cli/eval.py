"""``ef eval``: index a BEIR dataset, retrieve for every judged query, print the metrics.

Without a dataset directory it runs on the small demo dataset shipped inside the package.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import ef
from ef.cli import _output
from ef.cli._inputs import check_split, qrels_file
from ef.cli._types import k_values, relevance_level
from ef.datasets import demo_dataset

__all__ = ["DEMO_DATASET", "add_parser", "json_took_an_argument", "run"]

DEMO_DATASET = Path(demo_dataset())
_DEFAULT_METRICS = ("ndcg", "recall", "precision", "mrr", "map")


def _metrics(text: str) -> tuple[str, ...]:
    from ef.evaluation import RETRIEVAL_METRICS
    from ef.measures import cutoff_metric

    names = tuple(part.strip() for part in text.split(","))
    unknown = [name for name in names if name not in RETRIEVAL_METRICS and not cutoff_metric(name)]
    if unknown or not all(names):
        raise argparse.ArgumentTypeError(
            f"unknown metric name(s) {unknown or [text]}; choose from {','.join(sorted(RETRIEVAL_METRICS))} "
            "or a ranking measure of ef.measures with a cutoff (hit_rate, err, judged ...)"
        )
    return names


def _measures(text: str) -> list[tuple[str, int | None]]:
    """``-m``: comma-separated ``NAME`` (at every cutoff) or ``NAME@K`` -> [(NAME, K or None)].

    >>> _measures("ndcg@10,recall@100, map")
    [('ndcg', 10), ('recall', 100), ('map', None)]
    """
    out: list[tuple[str, int | None]] = []
    for piece in (part.strip() for part in text.split(",")):
        name, at, cutoff = piece.rpartition("@") if "@" in piece else (piece, "", "")
        try:
            k = int(cutoff) if at else None
        except ValueError:
            k = 0
        try:
            _metrics(name)
        except argparse.ArgumentTypeError:
            k = 0
        if k is not None and k < 1:
            raise argparse.ArgumentTypeError(
                f"expected NAME or NAME@K such as ndcg@10,recall@100 (got {piece!r} in {text!r}); NAME is one of "
                f"{','.join(sorted(_retrieval_metrics()))} or a ranking measure of ef.measures with a cutoff "
                "(hit_rate, err, judged ...)"
            )
        out.append((name, k))
    return out


def _retrieval_metrics() -> tuple[str, ...]:
    from ef.evaluation import RETRIEVAL_METRICS

    return tuple(RETRIEVAL_METRICS)


def _grid(args: argparse.Namespace) -> None:
    """Set ``args.metrics`` and ``args.k`` from ``--metrics``, ``-k`` and ``-m`` (the report is a grid:
    each metric at each cutoff): ``-m NAME@K`` adds NAME and K; without ``-k``, the cutoffs ``-m``
    names are the only ones (else the defaults)."""
    named = [name for name, _ in args.measures or []]
    cutoffs = {k for _, k in args.measures or [] if k is not None}
    metrics = list(args.metrics if args.metrics is not None else ([] if named else _DEFAULT_METRICS))
    args.metrics = tuple(dict.fromkeys([*metrics, *named]))
    given = args.k if args.k is not None else (() if cutoffs else _DEFAULT_K)
    args.k = tuple(sorted({*given, *cutoffs}))


_DEFAULT_K = (1, 3, 5, 10, 100)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="evaluate retrieval on a BEIR dataset (default: the bundled demo dataset)",
        description=(
            "Index a BEIR dataset (corpus.jsonl, queries.jsonl, qrels/<split>.tsv), retrieve for every "
            "judged query and print NDCG, recall, precision, MRR and MAP at each cutoff, with the time "
            "each stage took. DATASET may be a name (ef datasets list); without it, runs on the small demo dataset."
        ),
    )
    parser.add_argument(
        "dataset", nargs="?", metavar="DATASET",
        help="a BEIR dataset folder or zip, or a name: beir/scifact, trec-dl-2019 ... (see: ef datasets list)",
    )
    parser.add_argument(
        "--embedder", default="bm25",
        help="bm25 (default), st:MODEL (a sentence-transformers model: all-MiniLM-L6-v2 or a local "
             "directory), hybrid or hybrid:st:MODEL (reciprocal rank fusion of bm25 and MODEL)",
    )
    parser.add_argument(
        "--split", default=None, help="the qrels split: reads qrels/SPLIT.tsv (default: test, or a dataset name's)"
    )
    parser.add_argument(
        "--k", type=k_values, default=None, metavar="K[,K...]",
        help=f"rank cutoffs, or -k K[,K...] as in ef compare (default: {','.join(map(str, _DEFAULT_K))}, "
             "or the K of -m NAME@K)",
    )
    # ef compare's short form; its own argument, so that an error still names --k as the user wrote it.
    parser.add_argument("-k", dest="k", type=k_values, help=argparse.SUPPRESS)
    parser.add_argument(
        "--metrics", type=_metrics, default=None, metavar="NAME[,NAME...]",
        help=f"metrics to report at every cutoff (default: {','.join(_DEFAULT_METRICS)}, or those of -m)",
    )
    parser.add_argument(
        "-m", "--measure", dest="measures", action="extend", type=_measures, metavar="MEASURE",
        help="a metric to report, as ef compare -m: NAME@K (ndcg@10) or NAME; repeatable or comma-separated. "
             "The table shows each metric at each cutoff (-m ndcg@10 -m recall@100: both at 10 and 100)",
    )
    parser.add_argument(
        "-l", "--level", type=relevance_level, default=None, metavar="LEVEL",
        help="lowest grade that counts as relevant in recall, precision, mrr and map, as ef trec-eval -l "
             "(default: a named dataset's, e.g. 2 for TREC DL; else every positive grade); ndcg uses the grades",
    )
    parser.add_argument(
        "--ignore-identical-ids", action="store_true",
        help="drop a hit whose doc id equals the query id (BEIR's option for ArguAna and Quora)",
    )
    parser.add_argument(
        "--index-dir", metavar="DIR",
        help="cache the index here: built and saved the first time, loaded afterwards",
    )
    parser.add_argument(
        "--run-out", metavar="RUN.trec", help="also write the rankings as a TREC run file ('-': standard output)"
    )
    parser.add_argument(
        "--json", nargs="?", const=_output.STDOUT, metavar="FILE",
        help="also write the report as JSON to FILE; bare --json or '-': standard output (the table goes to "
             "standard error)",
    )
    parser.add_argument(
        "--batch-size", type=int, default=None, metavar="N", help="dense encoding batch size (default: 32)"
    )
    parser.add_argument("--device", help="torch device of a dense model (default: sentence-transformers' choice)")
    from ef.cli._scale import add_scale_flags

    add_scale_flags(parser)  # --engine, --ray-address, --workers, --ann, --ann-param
    from ef.cli.sweep import add_pipeline_flags

    add_pipeline_flags(parser)  # --segment-size, --overlap, --bm25-k1, --bm25-b, --rerank, --rerank-depth
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bars")
    from ef.cli.report import add_output_flags

    add_output_flags(parser)  # --html, --png, --svg


class _TimedRetriever:
    """Hands evaluate_retrieval's batched search to the index, timing it apart from scoring."""

    def __init__(self, index: Any, show_progress: bool) -> None:
        self.index = index
        self.show_progress = show_progress
        self.seconds = 0.0
        # An index on Ray is searched block by block, its rankings streamed to a run file and scored from it.
        self.query_block: int | None = index.query_block

    def search_many(self, queries: Sequence[str], *, limit: int = 10) -> list[Any]:
        start = time.perf_counter()
        hits = self.index.search_many(queries, limit=limit, show_progress=self.show_progress)
        self.seconds += time.perf_counter() - start
        return hits  # type: ignore[no-any-return]


def _write_json(path: str, data: dict[str, Any]) -> None:
    """Write the report to `path` (``-``: standard output), atomically, naming `path` on error."""
    data = {**data, "ef_version": ef.__version__}  # which ef wrote it
    _output.write("--json", path, json.dumps(data, indent=2, allow_nan=False).encode("utf-8") + b"\n", "report")


def json_took_an_argument(args: argparse.Namespace) -> bool:
    """Whether ``--json WORD`` took the DATASET: no DATASET follows and WORD names one (a known name,
    or a folder holding corpus.jsonl or qrels/), so ``ef eval --json beir/scifact`` evaluates SciFact
    with the JSON on standard output, not the demo into a file called beir/scifact."""
    if args.dataset is not None or args.json is None or _output.is_stdout(args.json):
        return False
    from ef.datasets import resolve_name

    folder = Path(args.json)
    return (folder / "corpus.jsonl").is_file() or (folder / "qrels").is_dir() or resolve_name(args.json) is not None


def _check_index_dir(path: str) -> None:
    """Fail before any work if --index-dir holds no index and one could not be saved there."""
    from ef.source_manager.cache import check_cache_dir, is_saved_index

    if is_saved_index(path):
        return  # loaded, not written
    _output.check_writable_folder("--index-dir", path)
    check_cache_dir(path, name=f"--index-dir {Path(path)}")


def _load_named(args: argparse.Namespace, *, stream: bool = False) -> Any:
    """Load a dataset by name (or zip) with ef.datasets, and take its facts as the defaults.

    With `stream` its corpus is not read now: the index reads it block by block (``iter_corpus``).
    """
    from ef.datasets import load

    loaded = load(args.dataset, split=args.split, corpus=not stream)
    args.split = loaded.split
    if loaded.facts.query_ids_are_doc_ids and not args.ignore_identical_ids:
        args.ignore_identical_ids = True
        print(f"ef eval: note: {loaded.name}'s queries are documents of its corpus; each query's own document "
              "is dropped from its ranking (--ignore-identical-ids)", file=sys.stderr)
    level = loaded.facts.relevance_level
    if args.level is None:
        args.level = level
        if level > 1:
            print(f"ef eval: note: {loaded.name}'s official binary measures count grade >= {level} as relevant, "
                  f"so recall, precision, mrr and map here do too (-l {level}, the dataset's default; "
                  "-l 1 counts every positive grade)", file=sys.stderr)
    elif args.level != level:
        print(f"ef eval: note: -l {args.level}: recall, precision, mrr and map count grade >= {args.level}; "
              f"{loaded.name}'s official binary measures count grade >= {level} (its default, -l {level})",
              file=sys.stderr)
    return loaded


def _index(args: argparse.Namespace, corpus: Mapping[str, str] | Iterable[tuple[str, str]],
           show: bool) -> tuple[Any, str]:
    """Load the cached index from --index-dir, or build it (and save it there)."""
    from ef.cli import _scale
    from ef.source_manager.cache import cached_index

    cache = None if args.index_dir is None else Path(args.index_dir)
    return cached_index(
        corpus,
        cache,
        load={
            "embedder": args.embedder, "device": args.device, "batch_size": args.batch_size, "show_progress": show,
            "engine": args.engine, "ray_address": args.ray_address, "workers": args.workers,
        },
        build={
            "embedder": args.embedder, "batch_size": args.batch_size, "device": args.device, "show_progress": show,
            **_scale.scale_options(args, cache),
        },
        check=lambda index: _scale.check_loaded(index, args, Path(args.index_dir)),
        name=f"--index-dir {cache}",
        corpus_name=args.dataset or "the demo dataset",
    )


def run(args: argparse.Namespace) -> int:
    """Run ``ef eval`` for parsed `args`; returns the exit status."""
    from ef.cli._scale import check_scale_flags, ray_scope

    _grid(args)  # --metrics, -k and -m -> the metrics and the cutoffs
    check_scale_flags(args)
    with ray_scope(args):  # one Ray session for building and retrieving
        try:
            return _run(args)
        except ValueError as error:  # the model checks its keyword 'device' as it loads; here --device was typed
            if args.device is None or not str(error).startswith("'device' "):
                raise
            from ef.cli._inputs import flag_named

            named = str(flag_named(error, "device", "--device")).replace("pass device='cpu'", "pass --device cpu")
            raise ValueError(named) from None


def _run(args: argparse.Namespace) -> int:
    from ef.cli._scale import StreamedCorpus, shown_documents
    from ef.evaluation import evaluate_retrieval, read_beir
    from ef.gate import result_metadata
    from ef.source_manager import parse_embedder
    from ef.tables import format_table

    started = time.perf_counter()
    try:
        parse_embedder(args.embedder)  # a bad name fails before any file is read
    except ValueError as error:  # parse_embedder names its keyword 'embedder'; the user typed --embedder
        from ef.cli._inputs import flag_named

        raise flag_named(error, "embedder", "--embedder") from None
    from ef.cli.sweep import pipeline_from_args

    pipeline = pipeline_from_args(args)  # None without a pipeline flag
    if args.batch_size is not None and args.batch_size < 1:
        raise ValueError(f"--batch-size must be a positive integer (got {args.batch_size})")
    encoder = [flag for flag, value in (("--device", args.device), ("--batch-size", args.batch_size)) if value]
    if encoder and args.embedder == "bm25" and args.rerank is None:  # it would be ignored
        raise ValueError(f"{encoder[0]} applies to a model (--embedder st:MODEL or hybrid, or --rerank); "
                         "--embedder bm25 has none")
    args.batch_size = 32 if args.batch_size is None else args.batch_size
    # Every output is checked before the work, not after it; with one of them on standard output,
    # the tables go to stderr so that stdout holds exactly that output.
    _output.one_stdout(json=args.json, run_out=args.run_out)
    _output.distinct_outputs({"--json": args.json, "--run-out": args.run_out, "--html": args.html,
                              "--png": args.png, "--svg": args.svg, "--index-dir": args.index_dir})
    from ef.cli.report import check_outputs, dataset_files, wants_report, write_evaluation_report

    dataset = Path(args.dataset) if args.dataset is not None else DEMO_DATASET
    named = args.dataset is not None and not dataset.is_dir()  # a name or a zip: ef.datasets finds and checks it
    # On Ray a dataset's corpus streams from disk into the index, block by block, never held as a dict.
    stream = args.engine == "ray" and args.dataset is not None and pipeline is None
    named = named or stream
    if not named:
        args.split = args.split or "test"
        check_split(dataset, args.split)
    inputs = dataset_files(dataset, args.split or "test")  # the dataset must not be written over
    _output.check_output("--json", args.json, inputs)
    _output.check_output("--run-out", args.run_out, inputs)
    if args.index_dir is not None:
        _check_index_dir(args.index_dir)
    human = sys.stderr if _output.is_stdout(args.json) or _output.is_stdout(args.run_out) else sys.stdout
    check_outputs(args, inputs)
    run_path = args.run_out  # the HTML report shows the worst queries' rankings from the report's run
    scratch = None
    if _output.is_stdout(args.run_out):  # written to a scratch file, then copied to stdout
        scratch = tempfile.TemporaryDirectory(prefix="ef-run-")
        run_path = os.path.join(scratch.name, "run.trec")
    show = not args.quiet
    timings: dict[str, float] = {}

    corpus: Mapping[str, str] | StreamedCorpus
    if stream:
        loaded = _load_named(args, stream=True)
        corpus, queries, qrels = StreamedCorpus(loaded), loaded.queries, loaded.qrels
    elif named:
        corpus, queries, qrels = _load_named(args)
    else:
        corpus, queries, qrels = read_beir(dataset, qrels=qrels_file(dataset, args.split))
    if not stream and not corpus:
        raise ValueError(f"{dataset / 'corpus.jsonl'} holds no documents")
    timings["read dataset"] = time.perf_counter() - started

    mark = time.perf_counter()
    if pipeline is None:
        index, how = _index(args, corpus, show)
    else:  # a pipeline runs in memory (ef.pipeline_stages)
        from ef.pipeline_stages import PipelineRetriever, Workspace

        # --device and --batch-size reach the pipeline's models too (they were left at the defaults)
        workspace = Workspace(dict(corpus), device=args.device, batch_size=args.batch_size, show_progress=show)
        index = PipelineRetriever(pipeline, workspace.corpus, workspace=workspace)  # never streamed
        how = "built in memory (pipeline)"
        index.build()
    timings["load index" if how.startswith("loaded") else "build index"] = time.perf_counter() - mark

    mark = time.perf_counter()
    retriever = _TimedRetriever(index, show)
    try:
        report = evaluate_retrieval(
            retriever, qrels, queries,
            k_values=args.k,
            metrics=args.metrics,
            limit=max(args.k),
            ignore_identical_ids=args.ignore_identical_ids,
            run_path=run_path,
            relevance_level=args.level,
        )
    except OSError as error:  # only the run file is written here; its writer names a temporary file
        if args.run_out is None:
            raise
        raise OSError(f"--run-out {args.run_out}: cannot write the run ({error.strerror or error})") from error
    except ValueError as error:  # the library names its parameter; here the flag was typed
        if args.run_out is None or not str(error).startswith("cannot write 'run_path'"):
            raise
        raise ValueError(str(error).replace("'run_path'", f"--run-out {args.run_out}", 1)) from error
    timings["retrieve"] = retriever.seconds
    timings["score"] = time.perf_counter() - mark - retriever.seconds
    from ef.cli._scale import ann_recall, format_ann_recall

    mark = time.perf_counter()
    timings.update(getattr(index, "stage_seconds", {}))  # a pipeline's first stage and reranker, within retrieve
    ann = None if pipeline is not None else ann_recall(index, queries, qrels, args.k, show_progress=show)
    if ann is not None:
        timings["ANN recall"] = time.perf_counter() - mark
    timings["total"] = time.perf_counter() - started

    name = "the demo dataset" if args.dataset is None else str(dataset)
    # Files first, standard output last: a reader that leaves early (`| head`) must not cost the files.
    document: dict[str, Any] = {
        "dataset": str(dataset),
        "split": args.split,
        "embedder": index.embedder,
        **({"pipeline": {"id": pipeline.id, **pipeline.to_dict()}} if pipeline is not None else {}),
        "n_documents": index.n_sources,
        "n_segments": len(index),
        "index": how,
        # what ef gate checks before it compares two saved results (a named dataset is checked by ef.datasets)
        **{key: value for key, value in result_metadata(
            qrels=qrels, dataset=dataset if dataset.is_dir() else None, relevance_level=args.level or 1,
            ignore_identical_ids=args.ignore_identical_ids, pipeline_id=None if pipeline is None else pipeline.id,
            judged_docs_only=False,
        ).items() if key != "dataset"},
        **report.to_dict(),
        **({"ann_recall": ann} if ann is not None else {}),
        "seconds": {stage: round(s, 4) for stage, s in timings.items()},
    }
    if wants_report(args):
        write_evaluation_report(
            args, report, queries=queries, qrels=qrels,
            # streamed: only the passages the page can show, read again block by block
            corpus=shown_documents(corpus, report.run, qrels, max(args.k))
            if isinstance(corpus, StreamedCorpus) else corpus,
            facts={"dataset": name, "split": args.split, "embedder": str(index.embedder),
                   "documents": str(index.n_sources)},
        )
    json_to_stdout = _output.writes_to_stdout(args.json)  # '-', /dev/stdout, the file stdout goes to
    if args.json is not None and not json_to_stdout:
        _write_json(args.json, document)
    print(
        f"{name}, split {args.split}: {index.n_sources} documents ({len(index)} segments), "
        f"{report.n_queries} queries scored; embedder {index.embedder}; index {how}",
        file=human,
    )
    print(report, file=human)
    if report.missing_texts:  # judged but not run: say so, the means are over fewer queries
        print(
            f"ef eval: warning: {_queries_have(len(report.missing_texts))} no text in "
            f"{dataset / 'queries.jsonl'} and {_were(len(report.missing_texts))} not scored "
            f"(first: {report.missing_texts[0]!r})",
            file=sys.stderr,
        )
    if ann is not None:
        print(format_ann_recall(ann), file=human)
    print(file=human)
    print(format_table(["stage", "seconds"], [[stage, f"{s:.2f}"] for stage, s in timings.items()]), file=human)
    if scratch is not None:
        with scratch:
            _output.copy_to_stdout(os.path.join(scratch.name, "run.trec"))
    if args.json is not None and json_to_stdout:
        _write_json(args.json, document)
    return 0


def _queries_have(n: int) -> str:
    return f"{n} judged query has" if n == 1 else f"{n} judged queries have"


def _were(n: int) -> str:
    return "was" if n == 1 else "were"
