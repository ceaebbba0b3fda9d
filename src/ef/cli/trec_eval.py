"""``ef trec-eval``: a drop-in for trec_eval, with its flags and its output format.

``ef trec-eval [-q] [-c] [-l LEVEL] [-M MAX] [-m MEASURE[.PARAMS]]... QRELS RUN`` prints lines
``measure<TAB>query<TAB>value``, the measure name left-justified to 22 characters, values with
4 decimals and counts as integers, ``all`` for the summary, exactly as trec_eval 10.0 does; or
JSON (``--json``) or CSV (``--csv``). A judged query missing from the run is left out, with one
line on stderr counting them, unless ``-c`` is given (trec_eval 10.0 stops with exit 4 instead).
``-`` for QRELS or RUN reads standard input.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections.abc import Sequence

from ef.measures import MEASURES, NICKNAMES_WITH_RUNID, Measure, resolve, valid_forms

__all__ = ["add_parser", "main"]

_DESCRIPTION = (
    "Evaluate a TREC run against qrels with trec_eval's measures, flags and output format "
    "(the numbers of trec_eval 10.0)."
)


def _epilog() -> str:
    lines = [
        "measures (-m accepts a family for its default parameters, family.p1,p2 read as trec_eval reads "
        "them (docs/trec-eval.md), 'official' (the default), 'set' or 'all_trec'):"
    ]
    for family in MEASURES.values():
        if not family.scores_rankings:
            continue  # the RAG measures score samples (ef rag), not runs
        defaults = ",".join(f"{p:g}" for p in family.defaults)
        suffix = f" [default {family.name}.{defaults}]" if defaults else ""
        lines.append(f"  {family.name:<16} {family.description}{suffix}")
    lines.append(valid_forms())
    return "\n".join(lines)


def _build(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    parser.add_argument("qrels", metavar="QRELS", help="TREC qrels file (qid iter docid grade) or BEIR qrels TSV")
    parser.add_argument(
        "run", metavar="RUN", help="TREC run file (qid iter docid rank score run_id), plain or gzip; '-' for stdin"
    )
    parser.add_argument("-q", dest="per_query", action="store_true", help="also print each query's values")
    parser.add_argument(
        "-c",
        dest="complete",
        action="store_true",
        help="average over every judged query, counting queries missing from the run as 0",
    )
    parser.add_argument(
        "-l",
        dest="level",
        type=_level,
        default=1,
        metavar="LEVEL",
        help="lowest grade that counts as relevant, an integer (default 1)",
    )
    parser.add_argument(
        "-M",
        dest="max_docs",
        type=_positive,
        default=None,
        metavar="MAX",
        help="evaluate only the top MAX documents of each query",
    )
    parser.add_argument(
        "-m",
        dest="measures",
        action="append",
        default=None,
        metavar="MEASURE",
        help="measure to print, repeatable: P.5,10 / ndcg_cut / recip_rank / all_trec / ndcg@10 ...",
    )
    output = parser.add_mutually_exclusive_group()
    # --json alone prints; --json=FILE writes FILE ('-': standard output). Only the '=' form takes
    # a value (see _outputs_in), since '-' after the flag would also be QRELS read from stdin.
    output.add_argument("--json", nargs="?", const="-", metavar="FILE", help="print one JSON object instead")
    output.add_argument("--csv", nargs="?", const="-", metavar="FILE",
                        help="print CSV rows measure,query,value instead")
    from ef.cli.report import add_output_flags

    add_output_flags(parser)  # --html, --png, --svg: a report with charts, besides the printed lines
    return parser


def _level(text: str) -> int:
    # trec_eval reads -l with atol(): an integer (it would read 1.5 as 1).
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be an integer > 0, as trec_eval reads it (got {text!r})")
    return int(text)


def _positive(text: str) -> int:
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer (got {text!r})")
    return int(text)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``trec-eval`` for ``ef --help`` (its arguments are parsed by :func:`main`)."""
    _build(
        subparsers.add_parser(
            "trec-eval",
            help="trec_eval's numbers and output, fast",
            description=_DESCRIPTION,
            epilog=_epilog(),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
    )


def _parser() -> argparse.ArgumentParser:
    return _build(
        argparse.ArgumentParser(
            prog="ef trec-eval",
            description=_DESCRIPTION,
            epilog=_epilog(),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
    )


_WITH_RUNID = (*NICKNAMES_WITH_RUNID, "runid")


def _measures(specs: Sequence[str]) -> list[tuple[str, Measure]]:
    """Every requested measure once, in trec_eval's order, its parameters read as trec_eval reads them,
    each with the name it was asked by (the --json keys; the printed lines and --csv keep trec_eval's)."""
    return resolve(specs, trec_eval=True)


def _value(measure: Measure, value: float | str) -> str:
    if isinstance(value, str):  # relstring
        return f"'{value}'"
    return str(int(value)) if measure.spec.integer else f"{value:6.4f}"


def _outputs_in(argv: Sequence[str]) -> list[str]:
    """`argv` with a bare ``--json``/``--csv`` spelled ``--json=-``: never takes the next word.

    >>> _outputs_in(["--json", "qrels", "run"]), _outputs_in(["--csv=out.csv", "q", "r"])
    (['--json=-', 'qrels', 'run'], ['--csv=out.csv', 'q', 'r'])
    """
    return [f"{word}=-" if word in ("--json", "--csv") else word for word in argv]


def main(argv: Sequence[str]) -> int:
    """Run ``ef trec-eval`` with ``argv`` (the arguments after ``trec-eval``); return the exit status."""
    from ef.evaluation.scoring import load_run_and_qrels, score_run

    args = _parser().parse_args(_outputs_in(argv))
    from ef.cli import _output

    inputs = [args.qrels, args.run]
    _output.check_output("--json", args.json, inputs)  # before any reading
    _output.check_output("--csv", args.csv, inputs)
    from ef.cli.report import check_outputs, wants_report, write_run_report

    check_outputs(args, inputs)
    specs = args.measures or ["official"]
    labelled = _measures(specs)
    measures = [m for _, m in labelled]
    label = {m: name for name, m in labelled}
    run, qrels = load_run_and_qrels(args.run, args.qrels)
    result = score_run(
        run,
        qrels,
        measures,
        missing="zero" if args.complete else "skip",
        relevance_level=args.level,
        max_docs=args.max_docs,
    )
    run_id = result.run_id
    if result.skipped:
        # trec_eval 10.0 stops with exit 4 here; ef scores the rest and says so once, on stderr.
        print(
            f"ef trec-eval: {result.skipped} judged quer{'y is' if result.skipped == 1 else 'ies are'} not in the run "
            "and left out (-c counts them with zeros)",
            file=sys.stderr,
        )
    # trec_eval prints no per-query line for num_q, gm_map and gm_bpref, and no summary of relstring.
    per_query_measures = [m for m in measures if not m.spec.summary_only]
    summary_measures = [m for m in measures if m in result.summary]
    columns = {m: result.values[m].tolist() for m in per_query_measures}
    if wants_report(args):
        write_run_report(args, measures, result, run, qrels, run_id)

    if args.json:
        document: dict[str, object] = {
            "run_id": run_id,
            "n_queries": len(result.query_ids),
            "measures": {label[m]: _typed(m, result.summary[m]) for m in summary_measures},
        }
        if args.per_query:
            document["per_query"] = {
                q: {label[m]: _typed(m, columns[m][i]) for m in per_query_measures}
                for i, q in enumerate(result.query_ids)
            }
        _output.write("--json", args.json, (json.dumps(document, indent=2, allow_nan=False) + "\n").encode(), "report")
        return 0

    rows: list[tuple[str, str, str]] = []
    if args.per_query:
        for i, query_id in enumerate(result.query_ids):
            rows.extend((str(m), query_id, _value(m, columns[m][i])) for m in per_query_measures)
    if any(spec in _WITH_RUNID for spec in specs):
        rows.append(("runid", "all", run_id))
    rows.extend((str(m), "all", _value(m, result.summary[m])) for m in summary_measures)
    if args.csv:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["measure", "query", "value"])
        writer.writerows((name, query, value.strip()) for name, query, value in rows)
        _output.write("--csv", args.csv, buffer.getvalue().encode(), "report")
    else:
        sys.stdout.write("".join(f"{name:<22}\t{query}\t{value}\n" for name, query, value in rows))
    return 0


def _typed(measure: Measure, value: float | str) -> float | str:
    return int(value) if measure.spec.integer and not isinstance(value, str) else value
