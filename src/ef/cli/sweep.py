"""``ef sweep CONFIG``: run a grid of pipelines over one dataset, compare every cell, report.

CONFIG is a TOML, JSON or YAML file (see ``docs/sweep.md``): the grid, and optionally the
dataset, the output folder, the measures and the baseline; the flags override it.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from ef.cli import _output

if TYPE_CHECKING:
    from ef.pipeline import Pipeline

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "sweep",
        help="run a grid of pipelines (chunking x retriever x reranker x k) and compare them",
        description=(
            "Run every pipeline of CONFIG's grid over one BEIR dataset: each chunking is cut once and each "
            "(chunking, embedder) encoded once; each cell's run and per-query scores are saved in the output "
            "folder as it finishes, so a sweep run again resumes where it stopped. Prints a table (mean, CI, "
            "delta vs the baseline, corrected significance, latency, index size, build time) and which cells "
            "are indistinguishable from the best."
        ),
    )
    parser.add_argument("config", metavar="CONFIG", help="the sweep's configuration (.toml, .json, .yaml)")
    parser.add_argument(
        "--dataset", metavar="DATASET",
        help="a BEIR folder or zip, or a dataset name as ef eval takes (ef datasets list); default: CONFIG's 'dataset'",
    )
    parser.add_argument(
        "--split", metavar="SPLIT", help="the qrels split, as ef eval --split (default: CONFIG's 'split', else test)"
    )
    parser.add_argument("--out", metavar="DIR", help="the sweep folder: cells, runs, cache (default: CONFIG's 'out')")
    parser.add_argument(
        "-m", "--measure", action="append", metavar="MEASURE",
        help="a measure to score, repeatable; the first decides (default: CONFIG's, else ndcg@10)",
    )
    parser.add_argument("--baseline", metavar="CELL", help="compare with this cell (an id or label; default: the best)")
    parser.add_argument("--cache-dir", metavar="DIR", help="where dense vectors are kept (default: OUT/cache)")
    parser.add_argument("--no-resume", action="store_true", help="delete the cells OUT holds and score all again")
    # ef eval's model flags: a sweep's dense models and bi-encoder rerankers encode with them
    parser.add_argument(
        "--batch-size", type=int, default=None, metavar="N", help="dense encoding batch size (default: 32)"
    )
    parser.add_argument("--device", help="torch device of the dense models (default: sentence-transformers' choice)")
    parser.add_argument(
        "--json", nargs="?", const=_output.STDOUT, metavar="FILE",
        help="also write the result as JSON to FILE; bare --json or '-': standard output (the table goes to "
             "standard error)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    parser.add_argument(
        "--engine", choices=("local", "ray"), default="local",
        help="where cells run: here, one after another (default), or on a Ray cluster, one actor per chunking "
             "(pip install 'ef-eval[ray]'); each cell is saved as it finishes either way",
    )
    parser.add_argument(
        "--ray-address", metavar="ADDRESS",
        help="the Ray cluster, e.g. 127.0.0.1:6379 (default: RAY_ADDRESS, else a local cluster on 127.0.0.1)",
    )
    from ef.cli.report import add_output_flags

    add_output_flags(parser)  # --html, --png, --svg


def run(args: argparse.Namespace) -> int:
    """Run ``ef sweep`` for parsed `args`; returns the exit status."""
    from ef.cli.report import check_outputs, wants_report, write_outputs
    from ef.sweep import read_config, sweep

    if args.ray_address is not None and args.engine != "ray":
        raise ValueError("--ray-address needs --engine ray")
    from ef.cli._inputs import check_inputs

    if args.config == "-":  # its paths are relative to its folder: it must be a file
        raise ValueError("CONFIG is a file (.toml, .json, .yaml), not standard input ('-')")
    check_inputs(CONFIG=args.config)
    config = read_config(args.config)
    dataset = args.dataset or config.dataset
    if dataset is None:
        raise ValueError(f"no dataset: give --dataset DIR or 'dataset' in {args.config}")
    out = args.out or config.out
    if out is None:
        raise ValueError(f"no output folder: give --out DIR or 'out' in {args.config}")
    _output.check_writable_folder("--out" if args.out else f"{args.config}: 'out'", out)  # before any work
    _output.distinct_outputs({"--out" if args.out else f"{args.config}: 'out'": out, "--json": args.json,
                              "--html": args.html, "--png": args.png, "--svg": args.svg})
    from ef.cli.report import dataset_files

    # the config and the dataset are read: no output may replace them
    split = args.split or config.split or "test"
    if args.batch_size is not None and args.batch_size < 1:
        raise ValueError(f"--batch-size must be a positive integer (got {args.batch_size})")
    from pathlib import Path

    from ef.cli._inputs import check_split

    _output.check_output("--json", args.json, [args.config])  # the config is read whatever the dataset
    try:  # a folder without the split's qrels, said as ef eval says it, before any work
        check_split(Path(dataset), split)
    except FileNotFoundError as error:
        if args.split is None:  # the split came from CONFIG
            raise FileNotFoundError(str(error).replace("--split", f"{args.config}: 'split'", 1)) from None
        raise
    inputs = [args.config, *dataset_files(dataset, split)]
    _output.check_output("--json", args.json, inputs)
    check_outputs(args, inputs)
    human = sys.stderr if _output.is_stdout(args.json) else sys.stdout
    try:
        result = sweep(
            config.grid,
            dataset,
            out,
            measures=args.measure or config.measures,
            baseline=args.baseline if args.baseline is not None else config.baseline,
            split=split,
            device=args.device,
            batch_size=32 if args.batch_size is None else args.batch_size,
            cache_dir=args.cache_dir or config.cache,
            resume=not args.no_resume,
            show_progress=not args.quiet,
            engine=args.engine,
            ray_address=args.ray_address,
            **config.options,
        )
    except ValueError as error:  # sweep names its keywords: a flag given, the user typed the flag
        from ef.cli._inputs import flag_named

        if args.baseline is not None:
            error = flag_named(error, "baseline", "--baseline")
        elif config.baseline is not None and str(error).startswith("'baseline'"):  # named as the file's other keys
            error = ValueError(f"{args.config}: {error}")
        if args.measure:
            error = flag_named(error, "measures", "--measure")
        if args.device is not None and str(error).startswith("'device' "):  # as the model checks it, loading
            error = ValueError(str(flag_named(error, "device", "--device")).replace("pass device='cpu'",
                                                                                      "pass --device cpu"))
        raise error from None
    print(
        f"{result.dataset}: {len(result.cells)} cells ({len(result.scored)} scored, {len(result.loaded)} read back "
        f"from {out}), {result.n_queries} queries, {result.seconds:.1f} s",
        file=human,
    )
    print(result, file=human)
    if wants_report(args):
        write_outputs(args, result.report())
    if args.json is not None:
        _output.write("--json", args.json, json.dumps(result.to_dict(), indent=2, allow_nan=False).encode() + b"\n",
                      "result")
    return 0


def add_pipeline_flags(parser: argparse.ArgumentParser) -> None:
    """``ef eval``'s pipeline flags: chunking, BM25's k1 and b, and a reranker over the top N."""
    group = parser.add_argument_group("pipeline (chunking, BM25 parameters, reranking)")
    group.add_argument("--segment-size", type=int, metavar="WORDS", help="cut documents into windows of WORDS words")
    group.add_argument("--overlap", type=int, metavar="WORDS", help="words shared by consecutive windows (default 0)")
    group.add_argument("--bm25-k1", type=float, metavar="K1", help="BM25's k1 (default 1.2)")
    group.add_argument("--bm25-b", type=float, metavar="B", help="BM25's b (default 0.75)")
    group.add_argument(
        "--rerank", metavar="MODEL",
        help="rerank the top --rerank-depth chunks: minilm or bi:MODEL (bi-encoder cosine, offline), "
             "cross:DIR (a local sentence-transformers CrossEncoder)",
    )
    group.add_argument(
        "--rerank-depth", type=int, metavar="N", help="how many chunks the reranker orders (default 100)"
    )


def pipeline_from_args(args: argparse.Namespace) -> Pipeline | None:
    """The :class:`~ef.pipeline.Pipeline` ``ef eval``'s flags describe, or None without a pipeline flag.

    A pipeline runs in memory: ``--index-dir``, ``--engine ray`` and ``--ann`` are refused with it.
    """
    from ef.pipeline import Pipeline
    from ef.source_manager import parse_embedder

    flags = {"--segment-size": args.segment_size, "--overlap": args.overlap, "--bm25-k1": args.bm25_k1,
             "--bm25-b": args.bm25_b, "--rerank": args.rerank, "--rerank-depth": args.rerank_depth}
    given = [flag for flag, value in flags.items() if value is not None]
    if not given:
        return None
    for flag, value in (("--index-dir", args.index_dir), ("--engine ray", args.engine == "ray" or None),
                        ("--ann", None if getattr(args, "ann", "none") == "none" else args.ann)):
        if value is not None:
            raise ValueError(f"{given[0]} runs the pipeline in memory: it cannot be combined with {flag}")
    if args.rerank_depth is not None and args.rerank is None:
        raise ValueError("--rerank-depth needs --rerank MODEL")
    spec = parse_embedder(args.embedder)
    retriever = {"bm25": "bm25", "st": "dense", "hybrid": "hybrid"}[spec.kind]
    if retriever == "dense" and (args.bm25_k1 is not None or args.bm25_b is not None):
        raise ValueError(f"--bm25-k1 and --bm25-b apply to --embedder bm25 or hybrid, not {args.embedder!r}")
    # The rules between fields are said with the flags typed (Pipeline's own say its field names,
    # 'k' and 'size', which ef eval has not; k is the deepest cutoff, given or --k's default).
    if args.overlap is not None and args.segment_size is None:
        raise ValueError(f"--overlap needs --segment-size WORDS (got --overlap {args.overlap} alone)")
    if args.overlap is not None and args.segment_size is not None and args.overlap >= args.segment_size > 0:
        raise ValueError(f"--overlap must be smaller than --segment-size (got --overlap {args.overlap}, "
                         f"--segment-size {args.segment_size})")
    k = max(args.k)
    if args.rerank_depth is not None and 0 < args.rerank_depth < k:
        cutoffs = ",".join(map(str, args.k))
        raise ValueError(
            f"--rerank-depth {args.rerank_depth} is less than the deepest cutoff, {k} (--k {cutoffs}): the "
            f"reranker orders only its top {args.rerank_depth}; give cutoffs up to {args.rerank_depth} or a deeper "
            "--rerank-depth"
        )
    fields: dict[str, object] = {"retriever": retriever, "model": spec.model, "k": k}
    for name, value in (("size", args.segment_size), ("overlap", args.overlap), ("k1", args.bm25_k1),
                        ("b", args.bm25_b), ("rerank", args.rerank)):
        if value is not None:
            fields[name] = value
    if args.rerank is not None:
        fields["rerank_depth"] = args.rerank_depth if args.rerank_depth is not None else max(100, k)
    if retriever == "hybrid":  # each list to depth max(k, 100), as --embedder hybrid without these flags
        first_stage = fields.get("rerank_depth", k)
        if isinstance(first_stage, int) and first_stage > 100:
            fields["fusion_depth"] = first_stage
    try:
        return Pipeline(**fields)  # type: ignore[arg-type]  # checked by Pipeline itself
    except (TypeError, ValueError) as error:
        from ef.cli._inputs import flag_named

        for keyword, flag in _PIPELINE_FLAGS.items():  # the field's message, with the flag typed
            named = flag_named(ValueError(str(error)), keyword, flag)
            if str(named) != str(error):
                raise named from None
        raise ValueError(f"pipeline flags: {error}") from error


# Pipeline's fields and the ef eval flags that set them: its messages open with the field's name.
_PIPELINE_FLAGS = {"size": "--segment-size", "overlap": "--overlap", "k1": "--bm25-k1", "b": "--bm25-b",
                   "rerank": "--rerank", "rerank_depth": "--rerank-depth"}
