"""``ef compare QRELS RUN [RUN ...]``: paired significance tests between TREC runs.

Each RUN is a TREC run file named by its file stem (``runs/bm25.trec`` is ``bm25``) or
``NAME=PATH``. The report is :func:`ef.compare.compare`'s, printed as a table (default),
Markdown, LaTeX, CSV or JSON, to standard output or, atomically, to ``--output PATH``.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ef.cli._output import check_output
from ef.compare import CORRECTIONS, TESTS

__all__ = ["add_parser", "run", "run_names"]

_FORMATS = ("table", "markdown", "latex", "csv", "json")


def _measure_names(value: str) -> list[str]:
    names = [name.strip() for name in value.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"expected measure names separated by commas (got {value!r})")
    return names


def _probability(value: str) -> float:
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not 0.0 < number < 1.0:
        raise argparse.ArgumentTypeError(f"expected a number between 0 and 1, exclusive (got {value!r})")
    return number


def _natural(value: str, minimum: int) -> int:
    try:
        number = int(value)
    except ValueError:
        number = minimum - 1
    if number < minimum:
        raise argparse.ArgumentTypeError(f"expected an integer >= {minimum} (got {value!r})")
    return number


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
    parser.add_argument("qrels", metavar="QRELS", help="the TREC qrels file (or a BEIR qrels TSV)")
    parser.add_argument("runs", metavar="RUN", nargs="+", help="two or more TREC run files: PATH or NAME=PATH")
    parser.add_argument("--baseline", metavar="NAME", help="compare every other run with this one (default: all pairs)")
    parser.add_argument(
        "-m", "--measure", dest="measures", action="extend", type=_measure_names, metavar="MEASURE",
        help="a measure, as ef trec-eval / evaluate_run spell them (ndcg@10, P_5, map ...); repeatable "
             "or comma-separated (default: ndcg@10, recall@100, map, mrr)",
    )
    parser.add_argument("--test", choices=tuple(TESTS), default="t", help="the paired test (default: t)")
    parser.add_argument(
        "--correction", choices=tuple(CORRECTIONS), default="holm",
        help="multiple-testing correction over all comparisons (default: holm)",
    )
    parser.add_argument("--alpha", type=_probability, default=0.05, metavar="A", help="significance level (0.05)")
    parser.add_argument(
        "--confidence", type=_probability, default=0.95, metavar="C", help="confidence interval level (0.95)"
    )
    parser.add_argument(
        "--resamples", type=lambda v: _natural(v, 1), default=10_000, metavar="B",
        help="resamples of the randomization / bootstrap tests and intervals (10000)",
    )
    parser.add_argument("--seed", type=lambda v: _natural(v, 0), default=0, metavar="S", help="random seed (0)")
    parser.add_argument(
        "--missing", choices=("zero", "skip"), default="zero",
        help="a judged query a run lacks: score it 0 (default, trec_eval -c) or skip it for every run",
    )
    parser.add_argument("--format", choices=_FORMATS, default="table", help="output format (default: table)")
    parser.add_argument("--output", "-o", default="-", metavar="PATH", help="where to write: - (stdout) or a file")
    from ef.cli.report import add_output_flags

    add_output_flags(parser)  # --html, --png, --svg: the comparison with charts and the largest losses


def _stem(path: str) -> str:
    name = Path(path).name
    if name.endswith(".gz"):
        name = name[:-3]
    return Path(name).stem or name


def run_names(arguments: list[str]) -> dict[str, str]:
    """``RUN`` arguments -> {name: path}; an existing file is a path even if it holds ``=``.

    >>> run_names(["runs/bm25.trec", "stem=runs/other.trec.gz"])
    {'bm25': 'runs/bm25.trec', 'stem': 'runs/other.trec.gz'}
    """
    out: dict[str, str] = {}
    for argument in arguments:
        if "=" in argument and not os.path.exists(argument):
            name, path = argument.split("=", 1)
            if not name or not path:
                raise ValueError(f"run {argument!r}: expected PATH or NAME=PATH")
        else:
            name, path = _stem(argument), argument
        if name in out:
            raise ValueError(f"two runs are named {name!r} ({out[name]} and {path}): name them with NAME=PATH")
        out[name] = path
    return out


def _render(report: object, form: str) -> str:
    if form == "json":
        return report.to_json(indent=2) + "\n"  # type: ignore[attr-defined, no-any-return]
    if form == "markdown":
        return report.to_markdown()  # type: ignore[attr-defined, no-any-return]
    if form == "latex":
        return report.to_latex()  # type: ignore[attr-defined, no-any-return]
    if form == "csv":
        return report.to_csv()  # type: ignore[attr-defined, no-any-return]
    return str(report) + "\n"


def run(args: argparse.Namespace) -> int:
    """Run ``ef compare``: write the report, return the exit status."""
    from ef.compare import compare
    from ef.io.atomic import atomic_writer

    names = run_names(args.runs)
    if len(names) < 2:
        raise ValueError(f"give at least 2 runs to compare (got {len(names)})")
    output = None if args.output == "-" else args.output
    inputs = [args.qrels, *names.values()]
    check_output("--output", output, inputs)
    from ef.cli.report import check_outputs, wants_report, write_comparison_report

    check_outputs(args, inputs)
    for path in (args.qrels, *names.values()):
        if not os.path.exists(path):  # a pipe or <(zcat run.gz) exists too
            raise FileNotFoundError(f"{path}: no such file")
    report = compare(
        names,
        args.qrels,
        args.measures,
        baseline=args.baseline,
        test=args.test,
        correction=args.correction,
        alpha=args.alpha,
        confidence=args.confidence,
        resamples=args.resamples,
        seed=args.seed,
        missing=args.missing,
    )
    if wants_report(args):
        write_comparison_report(args, report, names)
    text = _render(report, args.format)
    if output is None:
        print(text, end="")
    else:
        try:
            with atomic_writer(output) as stream:
                stream.write(text.encode("utf-8"))
        except OSError as error:
            raise OSError(f"--output {output}: cannot write the report ({error.strerror or error})") from error
    return 0
