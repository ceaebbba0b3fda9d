"""``ef trec-eval``: a drop-in for trec_eval, with its flags and its output format.

``ef trec-eval [-q] [-c] [-n] [-J] [-l LEVEL] [-M MAX] [-N NUM] [-D LEVEL[.QID]] [-Z FILE]
[-m MEASURE[.PARAMS]]... QRELS RUN`` prints lines ``measure<TAB>query<TAB>value``, the measure name
left-justified to 22 characters, values with 4 decimals and counts as integers, ``all`` for the
summary, exactly as trec_eval 10.0 does; or JSON (``--json``) or CSV (``--csv``). Every flag of
trec_eval 10.0 that applies to standard qrels is taken with trec_eval's meaning, by its letter or its
long name (``--nosummary``, ``--Judged_docs_only`` ...); ``-R`` and ``-T`` name the standard formats
only (the others feed measures ef does not compute, and are refused by name).

A judged query missing from the run is left out, and one line on stderr says so, with both counts
(trec_eval 10.0 stops with exit 4 instead): ``-c`` (or ``--missing zero``) counts it as 0, as
:func:`~ef.evaluation.evaluate_run` does by default, and that line says so too. ``-`` for QRELS or
RUN reads standard input.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from collections.abc import Mapping, Sequence

import ef
from ef.cli._types import natural, relevance_level
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
    parser.add_argument("-q", "--query_eval_wanted", dest="per_query", action="store_true",
                        help="also print each query's values")
    parser.add_argument(
        "-c",
        "--complete_rel_info_wanted",
        dest="complete",
        action="store_true",
        help="average over every judged query, counting queries missing from the run as 0 (--missing zero)",
    )
    parser.add_argument(
        "--missing",
        choices=("skip", "zero"),
        default=None,
        help="a judged query the run lacks: left out (skip, the default) or counted as 0 (zero, as -c)",
    )
    parser.add_argument("-n", "--nosummary", dest="no_summary", action="store_true",
                        help="print no summary ('all') lines")
    parser.add_argument(
        "-J",
        "--Judged_docs_only",
        dest="judged_only",
        action="store_true",
        help="remove every unjudged document from the rankings first (after -M), as trec_eval -J",
    )
    parser.add_argument(
        "-N",
        "--Number_docs_in_coll",
        dest="docs_in_coll",
        type=lambda v: natural(v, 0),
        default=0,
        metavar="NUM",
        help="documents in the collection, for utility's fourth parameter (default 0)",
    )
    parser.add_argument(
        "-D",
        "--Debug_level",
        dest="debug",
        type=_debug,
        default=(0, None),
        metavar="LEVEL[.QID]",
        help="trec_eval's debug level (its printing is not reproduced); .QID evaluates that query alone",
    )
    parser.add_argument("-R", "--Rel_info_format", dest="rel_format", default="qrels", metavar="FORMAT",
                        help="the qrels format: qrels (the only one ef reads)")
    parser.add_argument("-T", "--Results_format", dest="results_format", default="trec_results", metavar="FORMAT",
                        help="the run format: trec_results (trec_eval's only one)")
    parser.add_argument("-Z", "--Zscore", dest="zscore", metavar="FILE",
                        help="print z-scores against the means and deviations of FILE (qid measure mean stddev)")
    parser.add_argument("-o", dest="old_format", action="store_true", help=argparse.SUPPRESS)  # ignored, as trec_eval
    parser.add_argument("--Output_old_results_format", metavar="X", help=argparse.SUPPRESS)
    parser.add_argument("-v", "--version", action="version", version=_version())
    parser.add_argument("--quiet", action="store_true", help="no notes on standard error (errors still print)")
    parser.add_argument("--ignore-identical-ids", action="store_true",
                        help="drop a document whose id is its query's id first (BEIR's and MTEB's default)")
    parser.add_argument(
        "-l",
        "--level_for_rel",
        dest="level",
        type=relevance_level,
        default=1,
        metavar="LEVEL",
        help="lowest grade that counts as relevant, an integer (default 1)",
    )
    parser.add_argument(
        "-M",
        "--Max_retrieved_per_topic",
        dest="max_docs",
        type=lambda v: natural(v, 1),
        default=None,
        metavar="MAX",
        help="evaluate only the top MAX documents of each query",
    )
    parser.add_argument(
        "-m",
        "--measure",
        dest="measures",
        action="append",
        default=None,
        metavar="MEASURE",
        help="measure to print, repeatable: P.5,10 / ndcg_cut / recip_rank / all_trec / ndcg@10 ...",
    )
    output = parser.add_mutually_exclusive_group()
    # --json alone prints; --json=FILE writes FILE ('-': standard output), and so does --json FILE
    # when the words after it hold QRELS and RUN besides (see _parse).
    output.add_argument("--json", nargs="?", const="-", metavar="FILE",
                        help="print one JSON object instead, or write it to FILE ('-': standard output)")
    output.add_argument("--csv", nargs="?", const="-", metavar="FILE",
                        help="print CSV rows measure,query,value instead, or write them to FILE")
    from ef.cli.report import add_output_flags

    add_output_flags(parser)  # --html, --png, --svg: a report with charts, besides the printed lines
    return parser


def _version() -> str:
    return f"ef trec-eval (ef-eval {ef.__version__}): the numbers of trec_eval 10.0"


def _debug(text: str) -> tuple[int, str | None]:
    # trec_eval's -D num[.qid]: the level, and the one query to evaluate when .qid is given.
    level, dot, query = text.partition(".")
    if not (level.isascii() and level.isdigit()) or (dot and not query):
        raise argparse.ArgumentTypeError(f"must be LEVEL or LEVEL.QID, LEVEL an integer >= 0 (got {text!r})")
    return int(level), query if dot else None


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
    from ef.cli import Parser  # no prefix-guessing, a did-you-mean for a near flag

    return _build(
        Parser(
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


def _outputs_in(argv: Sequence[str], *, take_next: bool = False) -> list[str]:
    """`argv` with a bare ``--json``/``--csv`` spelled ``--json=-`` (it prints), or, with `take_next`,
    spelled ``--json=WORD`` when a word that is not a flag follows it (it writes WORD).

    >>> _outputs_in(["--json", "qrels", "run"]), _outputs_in(["--csv=out.csv", "q", "r"])
    (['--json=-', 'qrels', 'run'], ['--csv=out.csv', 'q', 'r'])
    >>> _outputs_in(["--json", "out.json", "q", "r"], take_next=True), _outputs_in(["q", "r", "--csv"], take_next=True)
    (['--json=out.json', 'q', 'r'], ['q', 'r', '--csv=-'])
    """
    out: list[str] = []
    words = iter(argv)
    for word in words:
        if word not in ("--json", "--csv"):
            out.append(word)
            continue
        following = next(words, None)
        if following is not None and take_next and (following == "-" or not following.startswith("-")):
            out.append(f"{word}={following}")
            continue
        out.append(f"{word}=-")
        if following is not None:
            out.append(following)
    return out


def _parse(argv: Sequence[str]) -> argparse.Namespace:
    """`argv` read with a bare ``--json``/``--csv`` printing, which keeps ``--json QRELS RUN`` (and
    ``- RUN``: QRELS from standard input) as trec_eval's two inputs; only when that leaves a word
    over (``--json out.json QRELS RUN``) is the word after the flag its FILE, as ``ef rag`` reads it."""
    parser = _parser()
    args, extra = parser.parse_known_args(_outputs_in(argv))
    if extra:
        taking, left = parser.parse_known_args(_outputs_in(argv, take_next=True))
        if left:
            parser.error(f"unrecognized arguments: {' '.join(extra)}")
        args = taking
    if args.qrels == "-" and args.run == "-":
        raise ValueError("QRELS and RUN are both '-': standard input can be only one of them")
    return args


_REL_FORMATS = ("qrels", "prefs", "qrels_prefs", "qrels_jg")  # trec_eval 10.0's -R formats
MISSING_ZSCORE = -1000000.0  # trec_eval's MISSING_ZSCORE_VALUE


def _check_formats(args: argparse.Namespace) -> None:
    if args.rel_format not in _REL_FORMATS:
        raise ValueError(f"-R {args.rel_format}: trec_eval has no rel_info format {args.rel_format!r} "
                         f"(it has {', '.join(_REL_FORMATS)})")
    if args.rel_format != "qrels":
        raise ValueError(f"-R {args.rel_format}: ef reads standard qrels only (trec_eval's prefs, qrels_prefs and "
                         "qrels_jg formats feed its preference and judgement-group measures, which ef does not "
                         "compute)")
    if args.results_format != "trec_results":
        raise ValueError(f"-T {args.results_format}: trec_eval has no results format {args.results_format!r} "
                         "(it has trec_results)")


def _missing(args: argparse.Namespace) -> str:
    if args.complete and args.missing == "skip":
        raise ValueError("-c means --missing zero, not --missing skip")
    return "zero" if args.complete else (args.missing or "skip")


def _judged_only(
    run: Mapping[str, Mapping[str, float]], qrels: Mapping[str, Mapping[str, float]], max_docs: int | None,
    missing: str,
) -> dict[str, dict[str, float]]:
    """trec_eval's -J: each ranking cut at -M (in trec_eval's order: score, then doc id, descending),
    then every document without a grade >= 0 in the query's qrels removed. A judged query the run
    lacks is, with -c, an empty ranking: trec_eval's stand-in document is unjudged, so -J removes it."""
    out: dict[str, dict[str, float]] = {}
    if missing == "zero":
        out.update((query, {}) for query in qrels if query not in run)
    for query, docs in run.items():
        judged = qrels.get(query, {})
        ranked = list(docs.items())
        if max_docs is not None and len(docs) > max_docs:
            ranked = sorted(ranked, key=lambda item: (item[1], item[0].encode()), reverse=True)[:max_docs]
        out[query] = {doc: score for doc, score in ranked if judged.get(doc, -1) >= 0}
    return out


def _read_zscores(path: str) -> dict[tuple[str, str], tuple[float, float]]:
    """trec_eval's -Z file: lines ``qid measure mean stddev``, keyed by (qid, measure)."""
    out: dict[tuple[str, str], tuple[float, float]] = {}
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            fields = line.split()
            if not fields:
                continue
            try:
                if len(fields) != 4:
                    raise ValueError
                out[(fields[0], fields[1])] = (float(fields[2]), float(fields[3]))
            except ValueError:
                got = line.strip()
                raise ValueError(f"{path}:{number}: expected 'qid measure mean stddev' (got {got!r})") from None
    return out


def _zscore(value: float, reference: tuple[float, float] | None) -> float:
    # trec_eval's te_convert_to_zscore: no reference, or a zero deviation the value misses, gives -1000000.
    if reference is None:
        return MISSING_ZSCORE
    mean, deviation = reference
    if deviation:
        return (value - mean) / deviation
    return 0.0 if value == mean else MISSING_ZSCORE


def _note(args: argparse.Namespace, text: str) -> None:
    if not args.quiet:
        print(f"ef trec-eval: {text}", file=sys.stderr)


def _convention(absent: int, evaluated: int) -> str:
    """The stderr line saying that the judged queries the run lacks were left out, with both counts."""
    return (
        f"{absent} of {evaluated + absent} judged queries {'is' if absent == 1 else 'are'} not in the run: left "
        f"out, the summary is over {evaluated} (trec_eval 10.0 stops here; -c, like evaluate_run's default "
        f"missing='zero', counts {'it' if absent == 1 else 'them'} as 0 over {evaluated + absent})"
    )


def main(argv: Sequence[str]) -> int:
    """Run ``ef trec-eval`` with ``argv`` (the arguments after ``trec-eval``); return the exit status."""
    from ef.evaluation.scoring import load_run_and_qrels, score_run

    args = _parse(argv)
    _check_formats(args)
    missing = _missing(args)
    debug_level, debug_query = args.debug
    from ef.cli import _output

    inputs = [args.qrels, args.run, args.zscore]  # -Z FILE is read too
    _output.distinct_outputs({"--json": args.json, "--csv": args.csv, "--html": args.html, "--png": args.png,
                              "--svg": args.svg})
    _output.check_output("--json", args.json, inputs)  # before any reading
    _output.check_output("--csv", args.csv, inputs)
    from ef.cli.report import check_outputs, wants_report, write_run_report

    check_outputs(args, inputs)
    from ef.cli._inputs import check_qrels_not_run

    check_qrels_not_run("QRELS", args.qrels, "ef trec-eval takes QRELS first, then RUN")
    specs = args.measures or ["official"]
    labelled = _measures(specs)
    measures = [m for _, m in labelled]
    label = {m: name for name, m in labelled}
    if args.zscore is not None:
        for m in measures:
            if m.spec.aggregate != "mean":
                raise ValueError(f"-Z: ef converts averaged measures to z-scores, not {m}")
    zscores = _read_zscores(args.zscore) if args.zscore is not None else None
    if debug_level:
        _note(args, f"-D {debug_level}: trec_eval's debug printing is not reproduced; the numbers are the same")
    run, qrels = load_run_and_qrels(args.run, args.qrels)
    if debug_query is not None:  # trec_eval evaluates that query alone
        if debug_query not in qrels:
            raise ValueError(f"-D {debug_level}.{debug_query}: query {debug_query!r} is not in the qrels")
        qrels = {debug_query: qrels[debug_query]}
    max_docs = args.max_docs
    run_id = None
    absent_from: set[str] | None = None
    if args.judged_only or args.ignore_identical_ids:
        run_id = score_run(run, qrels, []).run_id  # the run id comes with the scores of the file
        plain = run.to_dict() if hasattr(run, "to_dict") else run
        if args.ignore_identical_ids:  # BEIR's default: a document that is the query itself is no answer
            plain = {query: {doc: s for doc, s in docs.items() if doc != query} for query, docs in plain.items()}
        run = plain
        if args.judged_only:
            absent_from = set(qrels) - set(plain)
            run, max_docs = _judged_only(plain, qrels, max_docs, missing), None
    # Which judged queries the run lacks, whichever convention scores them: num_ret is 0 only there.
    counted = [*measures, Measure("num_ret")] if Measure("num_ret") not in measures else measures
    result = score_run(run, qrels, counted, missing=missing, relevance_level=args.level, max_docs=max_docs)
    if run_id is None:
        run_id = result.run_id
    if missing == "skip":
        absent = result.skipped
    elif absent_from is not None:
        absent = len(absent_from)
    else:
        absent = int((result.values[Measure("num_ret")] == 0).sum())
    if absent and missing == "skip":  # -c chose its convention out loud; --json records it either way
        _note(args, _convention(absent, len(result.query_ids)))
    # trec_eval prints no per-query line for num_q, gm_map and gm_bpref, and no summary of relstring.
    per_query_measures = [m for m in measures if not m.spec.summary_only]
    summary_measures = [m for m in measures if m in result.summary]
    columns: dict[Measure, list] = {m: result.values[m].tolist() for m in measures if m in result.values}
    summary: dict[Measure, float | str] = {m: result.summary[m] for m in summary_measures}
    n = len(result.query_ids)
    for m in measures:
        if m.family != "utility":
            continue
        _, _, c, d = m.doubles  # a and b weigh what was retrieved: -N and -J leave their terms alone
        changed = False
        if args.docs_in_coll and d:
            # utility's d counts the non-relevant documents not retrieved: N - R - retrieved + relevant
            # retrieved; ef's kernel takes N as 0, so N * d is what -N adds, to every query.
            columns[m] = [value + args.docs_in_coll * d for value in columns[m]]
            changed = True
        if absent_from and missing == "zero":
            # -J -c: trec_eval's stand-in for a query the run lacks is removed too, so nothing is
            # retrieved there: c R + d (N - R), where ef's stand-in retrieves one document.
            for i, query in enumerate(result.query_ids):
                if query in absent_from:
                    relevant = sum(grade >= args.level for grade in qrels[query].values())
                    columns[m][i] = c * relevant + d * (args.docs_in_coll - relevant)
            changed = True
        if changed:
            summary[m] = sum(columns[m]) / n
    prefix = ""
    if zscores is not None:
        for m in measures:
            pairs = zip(result.query_ids, columns[m], strict=True)
            columns[m] = [_zscore(value, zscores.get((query, str(m)))) for query, value in pairs]
            summary[m] = sum(columns[m]) / n
        label = {m: f"Z{label[m]}" for m in measures}
        prefix = "Z"  # trec_eval prints Z before the name, then pads the name to 22

    if args.no_summary:
        summary_measures = []
    if wants_report(args):
        write_run_report(args, measures, result, run, qrels, run_id)

    if args.json:
        from ef.gate import result_metadata

        document: dict[str, object] = {
            "run_id": run_id,
            "n_queries": n,
            "missing": missing,  # the convention, and how many judged queries it applied to
            "queries_not_in_run": absent,
            # What ef gate checks before it compares this result with another: the qrels and the
            # options that change the numbers (the convention only where a judged query was absent).
            **result_metadata(qrels=qrels, missing=missing if absent else None, relevance_level=args.level,
                              ignore_identical_ids=args.ignore_identical_ids, max_docs=args.max_docs,
                              judged_docs_only=args.judged_only),
        }
        if summary_measures:
            document["measures"] = {label[m]: _typed(m, summary[m]) for m in summary_measures}
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
    if not args.no_summary and any(spec in _WITH_RUNID for spec in specs):
        rows.append(("runid", "all", run_id))
    rows.extend((str(m), "all", _value(m, summary[m])) for m in summary_measures)
    if args.csv:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(["measure", "query", "value"])
        writer.writerows((prefix + name, query, value.strip()) for name, query, value in rows)
        _output.write("--csv", args.csv, buffer.getvalue().encode(), "report")
    else:
        # Bytes, written to the end (_output.write): the text layer drops what a raw stdout does not take
        # (PYTHONUNBUFFERED), and ids are UTF-8 in the files read, so they are written back as such.
        text = "".join(f"{prefix}{name:<22}\t{query}\t{value}\n" for name, query, value in rows)
        _output.write("-q", "-", text.encode("utf-8"), "report")
    return 0


def _typed(measure: Measure, value: float | str) -> float | str:
    return int(value) if measure.spec.integer and not isinstance(value, str) else value
