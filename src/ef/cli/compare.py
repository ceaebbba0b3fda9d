"""``ef compare QRELS RUN [RUN ...]``: paired significance tests between TREC runs.

QRELS may be a dataset (``ef compare beir/scifact a.trec b.trec``, or ``ef compare --dataset
beir/scifact a.trec b.trec``): its qrels judge the runs, its relevance level is ``-l``'s default
and ``--html`` shows its query texts and passages.

Each RUN is a TREC run file named by its file stem (``runs/bm25.trec`` is ``bm25``) or
``NAME=PATH``; a NAME given several times is one system run several times (seeds, averaged per
query, or folds, joined). ``--fail-on worse`` exits 1 when a comparison is significantly worse
than its baseline. The report is :func:`ef.compare.compare`'s, printed as a table (default),
Markdown, LaTeX, CSV or JSON, to standard output or, atomically, to ``--output PATH``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import zipfile
from typing import Any

import ef
from ef.cli import _output
from ef.cli._output import check_output, distinct_outputs
from ef.cli._runs import STDIN, check_one_stdin, is_pipe, run_groups
from ef.cli._types import k_values, measure_names, natural, probability, relevance_level
from ef.compare import CORRECTIONS, TESTS

__all__ = ["add_parser", "json_took_an_argument", "run"]

_FORMATS = ("table", "markdown", "latex", "csv", "json")


def _cutoff_names(text: str) -> list[str]:
    from ef.measures import cutoff_metric

    names = [part.strip() for part in text.split(",")]
    bad = [name for name in names if not cutoff_metric(name)]
    if bad or not all(names):
        raise argparse.ArgumentTypeError(
            f"expected ranking measures that take a cutoff, as ef eval --metrics (ndcg, recall, precision, mrr, "
            f"map, hit_rate ...) (got {text!r})"
        )
    return names


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``ef compare`` and its flags."""
    parser = subparsers.add_parser(
        "compare",
        help="compare runs with paired significance tests, corrected, with effect sizes",
        description=(
            "Score every RUN on the queries judged in QRELS and compare them: paired tests per "
            "(system, measure), p-values corrected over every comparison, mean differences with "
            "bootstrap confidence intervals, Cohen's d and per-query wins/ties/losses. "
            "RUN is a TREC run file, named by its file stem, or NAME=PATH."
        ),
    )
    parser.add_argument(
        "qrels", metavar="QRELS",
        help="the TREC qrels file (or a BEIR qrels TSV), or a dataset: a name (beir/scifact, trec-dl-2019 ...: "
             "ef datasets list), a BEIR folder or zip, as --dataset",
    )
    parser.add_argument("runs", metavar="RUN", nargs="+", help="two or more TREC run files: PATH or NAME=PATH")
    parser.add_argument(
        "--dataset", metavar="NAME",
        help="judge the runs with this dataset's qrels (a name, a BEIR folder or zip; every positional argument is "
             "then a RUN): its relevance level is -l's default, and --html shows its query texts and passages",
    )
    parser.add_argument("--split", help="the dataset's qrels split (default: its own: test for BEIR)")
    parser.add_argument(
        "--baseline", metavar="NAME", action="append",
        help="compare every other run with this one; repeatable: every other run against each (default: all pairs)",
    )
    parser.add_argument(
        "-m", "--measure", dest="measures", action="extend", type=measure_names, metavar="MEASURE",
        help="a measure in any spelling ef trec-eval reads (ndcg@10, P_5, P.5,10, ndcg_cut.10, P, official ...); "
             "repeatable or comma-separated (default: ndcg@10, recall@100, map, mrr)",
    )
    parser.add_argument(
        "--metrics", type=_cutoff_names, metavar="NAMES",
        help="as ef eval: ranking measures to take at every cutoff of -k (ndcg,recall ...); adds NAME@K to -m",
    )
    parser.add_argument(
        "-k", "--k", dest="k", type=k_values, metavar="K[,K...]",
        help="the cutoffs of --metrics, as ef eval --k (default: 10); without --metrics, ndcg at each "
             "(-m, --metrics and --k each replace the default measures)",
    )
    parser.add_argument(
        "-l", "--level", dest="level", type=relevance_level, default=None, metavar="LEVEL",
        help="lowest grade that counts as relevant, as ef trec-eval -l (default: the dataset's, e.g. 2 for "
             "TREC DL; else 1)",
    )
    parser.add_argument(
        "-M", "--max-docs", dest="max_docs", type=lambda v: natural(v, 1), default=None, metavar="MAX",
        help="evaluate only the top MAX documents of each query, as ef trec-eval -M",
    )
    parser.add_argument("--test", choices=tuple(TESTS), default="t", help="the paired test (default: t)")
    parser.add_argument(
        "--correction", choices=tuple(CORRECTIONS), default="holm",
        help="multiple-testing correction over all comparisons (default: holm)",
    )
    parser.add_argument("--alpha", type=probability, default=0.05, metavar="A", help="significance level (0.05)")
    parser.add_argument(
        "--confidence", type=probability, default=0.95, metavar="C", help="confidence interval level (0.95)"
    )
    parser.add_argument(
        "--resamples", type=lambda v: natural(v, 1), default=10_000, metavar="B",
        help="resamples of the randomization / bootstrap tests and intervals (10000)",
    )
    parser.add_argument("--seed", type=lambda v: natural(v, 0), default=0, metavar="S", help="random seed (0)")
    parser.add_argument(
        "--missing", choices=("zero", "skip"), default="zero",
        help="a judged query a run lacks: score it 0 (default, trec_eval -c) or skip it for every run",
    )
    parser.add_argument("--format", choices=_FORMATS, default="table", help="output format (default: table)")
    parser.add_argument(
        "--layout", choices=("comparisons", "systems"), default="comparisons",
        help="one row per comparison (default), or systems x measures with significance superscripts "
             "(table, markdown and latex formats)",
    )
    parser.add_argument(
        "--fail-on", choices=("worse", "different"), default=None,
        help="exit 1 when a comparison is significantly worse (or different either way) than its baseline",
    )
    parser.add_argument(
        "--output", "-o", default=None, metavar="PATH",
        help="where to write --format's text: - (stdout, default) or a file",
    )
    parser.add_argument(
        "--json", nargs="?", const=_output.STDOUT, metavar="FILE",
        help="also write the report as JSON to FILE, as --format json does; bare --json or '-': standard output "
             "(the table then goes to standard error), as ef eval, gate, sweep and rag --json",
    )
    from ef.cli.report import add_output_flags

    add_output_flags(parser)  # --html, --png, --svg: the comparison with charts and the largest losses


def _render(report: object, form: str, layout: str = "comparisons") -> str:
    if layout == "systems":
        if form not in ("table", "markdown", "latex"):
            raise ValueError(f"--layout systems prints a table, markdown or latex (got --format {form})")
        return report.to_systems_table("text" if form == "table" else form)  # type: ignore[attr-defined, no-any-return]
    if form == "json":  # with the version of ef that wrote it, as every saved JSON (issue 34)
        document = {**report.to_dict(), "ef_version": ef.__version__}  # type: ignore[attr-defined]
        return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    if form == "markdown":
        return report.to_markdown()  # type: ignore[attr-defined, no-any-return]
    if form == "latex":
        return report.to_latex()  # type: ignore[attr-defined, no-any-return]
    if form == "csv":
        return report.to_csv()  # type: ignore[attr-defined, no-any-return]
    return str(report) + "\n"


def _names_dataset(text: str) -> bool:
    """Whether QRELS names a dataset, not a qrels file: a BEIR folder or zip, or a name that is no path."""
    if text == STDIN:  # qrels on standard input
        return False
    if os.path.isdir(text):
        return True
    if os.path.isfile(text):
        return zipfile.is_zipfile(text)
    if os.path.exists(text):  # a pipe, <(zcat qrels.gz)
        return False
    from ef.datasets import resolve_name

    return resolve_name(text) is not None or text.startswith("beir/cqadupstack")


def _dataset(args: argparse.Namespace) -> Any:
    """The dataset that judges the runs (``--dataset``, or QRELS naming one), its judgements only; else None.

    With ``--dataset`` every positional argument is a run. The dataset's relevance level becomes
    -l's default (said on stderr when it is not 1).
    """
    if args.dataset is not None:
        args.runs, args.qrels = [args.qrels, *args.runs], None
        name = args.dataset
    elif _names_dataset(args.qrels):
        name = args.qrels
    else:
        if args.split is not None:
            raise ValueError("--split needs a dataset: --dataset NAME, or a dataset name as QRELS")
        args.level = 1 if args.level is None else args.level
        return None
    from ef.datasets import load

    dataset = load(name, split=args.split, corpus=False)  # the corpus is read only for --html's passages
    level = dataset.facts.relevance_level
    if args.level is None:
        args.level = level
        if level > 1 and not args.quiet:  # -q: no notes on standard error, as its help says
            print(f"ef compare: note: {dataset.name}'s official binary measures count grade >= {level} as relevant, "
                  f"so they do here (-l {level}, the dataset's default; -l 1 counts every positive grade)",
                  file=sys.stderr)
    return dataset


def json_took_an_argument(args: argparse.Namespace) -> bool:
    """Whether ``--json WORD`` left too few positional arguments: QRELS and two RUNs (with --dataset,
    two RUNs); ef's main then reads a bare ``--json``, printing, and WORD is the first of them."""
    return args.json is not None and 1 + len(args.runs) < (2 if args.dataset is not None else 3)


def run(args: argparse.Namespace) -> int:
    """Run ``ef compare``: write the report, return the exit status."""
    from ef.compare import compare

    dataset = _dataset(args)
    for argument in args.runs:  # `<(zcat bm25.trec.gz)` is /dev/fd/63: the table would call it '63'
        if re.match(r"/(dev|proc/(self|\d+))/fd/\d+$", argument):
            raise ValueError(f"RUN {argument} is a pipe with no name of its own (the table would call it "
                             f"'{argument.rsplit('/', 1)[1]}'): name it, as NAME=<(zcat run.gz)")
    groups = run_groups(args.runs)
    check_one_stdin(QRELS=args.qrels, RUN=[path for paths in groups.values() for path in paths])
    from ef.cli._inputs import check_qrels_not_run

    # before counting the runs: `ef compare A.trec B.trec` read A as QRELS, then said "got 1 run"
    check_qrels_not_run("QRELS", args.qrels, "ef compare takes QRELS first, then two or more RUNs")
    if len(groups) < 2:
        seeds = [(name, len(paths)) for name, paths in groups.items() if len(paths) > 1]
        detail = f": the {seeds[0][1]} runs named {seeds[0][0]!r} are one system's seeds or folds" if seeds else ""
        raise ValueError(f"give at least 2 runs to compare (got {len(groups)}{detail})")
    if args.layout == "systems" and args.format not in ("table", "markdown", "latex"):
        raise ValueError(f"--layout systems prints a table, markdown or latex (got --format {args.format})")
    measures = list(args.measures or [])
    if args.metrics is not None or args.k is not None:
        measures += [f"{m}@{k}" for m in (args.metrics or ["ndcg"]) for k in (args.k or [10])]
    _output.one_stdout(output=args.output, json=args.json)  # -o - and --json - together
    output = None if args.output in (None, "-") else args.output
    judges = [args.qrels] if dataset is None else [args.dataset or dataset.name]  # a folder or zip is read
    inputs = [*judges, *(p for paths in groups.values() for p in paths)]
    if dataset is not None and os.path.isdir(judges[0]):  # a BEIR folder: its files are read
        from ef.cli.report import dataset_files

        inputs += dataset_files(judges[0], dataset.split)
    distinct_outputs({"--output": output, "--json": args.json, "--html": args.html, "--png": args.png,
                      "--svg": args.svg})
    check_output("--output", output, inputs)
    check_output("--json", args.json, inputs)
    from ef.cli.report import check_outputs, wants_report, write_comparison_report

    check_outputs(args, inputs)
    from ef.cli._inputs import check_inputs

    runs_given = [path for paths in groups.values() for path in paths]
    check_inputs(QRELS=args.qrels if dataset is None else None, RUN=runs_given)  # a pipe passes
    runs: dict[str, list[Any]] = {name: list(paths) for name, paths in groups.items()}
    qrels: Any = args.qrels if dataset is None else dataset.qrels
    if wants_report(args):
        # The report reads the rankings (and qrels) again: standard input or another pipe is read
        # once, here, and both get what it held. Without a report, compare streams it as a file.
        from ef.trec import read_qrels, read_run

        runs = {name: [read_run(p) if is_pipe(p) else p for p in paths] for name, paths in runs.items()}
        qrels = read_qrels(qrels) if isinstance(qrels, str) and is_pipe(qrels) else qrels
    try:
        report = compare(
            {name: paths[0] if len(paths) == 1 else paths for name, paths in runs.items()},
            qrels,
            measures or None,
            baseline=args.baseline,
            test=args.test,
            correction=args.correction,
            alpha=args.alpha,
            confidence=args.confidence,
            resamples=args.resamples,
            seed=args.seed,
            missing=args.missing,
            relevance_level=args.level,
            max_docs=args.max_docs,
        )
    except ValueError as error:  # compare names its keyword 'baseline'; the user typed --baseline
        from ef.cli._inputs import flag_named

        raise flag_named(error, "baseline", "--baseline") from None
    if wants_report(args):
        shown = {name: paths[0] for name, paths in runs.items()}  # the HTML report shows the first of each
        write_comparison_report(args, report, shown, dataset=dataset, qrels=qrels)
    text = _render(report, args.format, args.layout)
    if args.json is not None and not _output.is_stdout(args.json):
        _output.write("--json", args.json, _render(report, "json").encode("utf-8"), "report")
    if output is None:
        # With --json - (and no -o -), standard output holds the JSON alone.
        print(text, end="", file=sys.stderr if _output.is_stdout(args.json) else sys.stdout)
    else:
        _output.write("--output", output, text.encode("utf-8"), "report")
    if _output.is_stdout(args.json):
        _output.write("--json", "-", _render(report, "json").encode("utf-8"), "report")
    if args.fail_on is not None:
        bad = [c for c in report.comparisons
               if c.verdict == "worse" or (args.fail_on == "different" and c.verdict == "better")]
        if bad:
            first = bad[0]
            print(
                f"ef compare: {len(bad)} comparison{'s' if len(bad) != 1 else ''} significantly "
                f"{'worse' if args.fail_on == 'worse' else 'different'} (--fail-on {args.fail_on}); first: "
                f"{first.system} vs {first.baseline} on {first.measure}: {first.diff:+.4f}, "
                f"p ({report.correction}) {first.p_adjusted:.4g}",
                file=sys.stderr,
            )
            return 1
    return 0
