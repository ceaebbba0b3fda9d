"""``ef gate BASELINE CANDIDATE [CANDIDATE ...]``: fail the build when the candidate is worse.

Both sides are per-query results (a saved ``ef.gate.save_result`` / ``ef eval --json`` /
``ef trec-eval -q --json`` file, a fastrag ``save_jsonl`` file) or TREC runs with ``--qrels``.
Several CANDIDATEs (or ``--baseline-seed``) are one system's seeds, averaged per query. Each
measure gets a non-inferiority verdict; the exit status is the outcome: pass 0, fail 1, usage
errors 2, inconclusive 3.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ef.cli._runs import is_pipe

__all__ = ["add_parser", "run"]


def _margin(text: str) -> tuple[str, str]:
    """``0.01``, ``2%``, ``NAME=0.01`` or ``NAME=2%`` -> (name or ``*``, margin text)."""
    name, equals, value = text.rpartition("=")
    from ef.gate import parse_margin

    try:
        parse_margin(value)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return (name if equals else "*"), value


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``ef gate`` and its flags."""
    from ef.cli._types import measure_names, natural, probability, relevance_level

    parser = subparsers.add_parser(
        "gate",
        help="fail a build when the candidate is worse than the baseline by more than a margin",
        description=(
            "Gate CANDIDATE against BASELINE: per measure, a non-inferiority test with a stated margin "
            "(paired randomization p-value, paired bootstrap bound, Holm across measures). Exit status: "
            "pass 0, fail 1, usage errors 2, inconclusive 3 (the query set cannot tell; the output says "
            "what it can detect and how many queries would settle it)."
        ),
    )
    parser.add_argument("baseline", metavar="BASELINE", help="the baseline's result (.json/.jsonl) or TREC run")
    parser.add_argument(
        "candidates", metavar="CANDIDATE", nargs="+",
        help="the candidate's result or TREC run; several are seeds of one system, averaged per query",
    )
    parser.add_argument(
        "--baseline-seed", action="append", default=[], metavar="PATH",
        help="another seed of the baseline (repeatable): averaged per query with BASELINE",
    )
    parser.add_argument("--qrels", metavar="QRELS", help="qrels to score a TREC run with (and hash)")
    parser.add_argument(
        "-m", "--measure", dest="measures", action="extend", type=measure_names, metavar="MEASURE",
        help="a gated measure in any spelling ef trec-eval reads; repeatable or comma-separated "
             "(default: every measure of the baseline)",
    )
    parser.add_argument(
        "--margin", action="append", type=_margin, default=[], metavar="[NAME=]MARGIN",
        help="how much worse the candidate may be: 0.01 (absolute) or 2%% (of the baseline mean), for "
             "every measure or NAME=...; repeatable (default: 2%%)",
    )
    parser.add_argument("--alpha", type=probability, default=0.05, metavar="A", help="one-sided level (0.05)")
    parser.add_argument(
        "--resamples", type=lambda v: natural(v, 1), default=10_000, metavar="B",
        help="randomization and bootstrap resamples (10000)",
    )
    parser.add_argument("--seed", type=lambda v: natural(v, 0), default=0, metavar="S", help="random seed (0)")
    parser.add_argument(
        "--lower-is-better", action="append", default=[], metavar="NAME",
        help="a measure where lower is better that neither ef nor the result knows (latency_ms ...)",
    )
    parser.add_argument(
        "--higher-is-better", action="append", default=[], metavar="NAME",
        help="a measure where higher is better that neither ef nor the result knows",
    )
    parser.add_argument(
        "-l", "--level", dest="level", type=relevance_level, default=1, metavar="LEVEL",
        help="for TREC runs: lowest grade that counts as relevant (1)",
    )
    parser.add_argument(
        "-M", "--max-docs", dest="max_docs", type=lambda v: natural(v, 1), default=None, metavar="MAX",
        help="for TREC runs: evaluate only the top MAX documents of each query",
    )
    parser.add_argument(
        "--missing", choices=("zero", "skip"), default="zero",
        help="for TREC runs: a judged query a run lacks scores 0 (default) or is left out",
    )
    parser.add_argument(
        "--ignore-identical-ids", action="store_true",
        help="for TREC runs: drop a document whose id is its query's id first, as ef eval does for ArguAna and "
             "Quora (ef trec-eval's flag)",
    )
    parser.add_argument("--markdown", metavar="FILE", help="write the Markdown summary ('-': standard output)")
    parser.add_argument("--junit", metavar="FILE", help="write JUnit XML ('-': standard output)")
    parser.add_argument(
        "--json", nargs="?", const="-", metavar="FILE",
        help="write the verdicts as JSON to FILE; bare --json or '-': standard output (the verdict lines go to "
             "standard error)",
    )
    parser.add_argument("--html", metavar="FILE", help="write a self-contained HTML page")
    parser.add_argument("-q", "--quiet", action="store_true", help="print no verdict lines")


def _flags_named(error: ValueError) -> ValueError:
    """`error` from ef.gate.gate, saying the flags where it says the keywords they were passed to."""
    from ef.cli._inputs import flag_named

    scoring = "'missing', 'relevance_level', 'max_docs' and 'ignore_identical_ids'"
    if str(error).startswith(scoring):
        return ValueError("--missing, -l, -M and --ignore-identical-ids" + str(error)[len(scoring):])
    error = ValueError(str(error).replace("ignore_identical_ids=True, ef gate --ignore-identical-ids",
                                          "--ignore-identical-ids").replace("missing='skip' (--missing skip)",
                                                                            "--missing skip"))
    error = flag_named(error, "margin", "--margin")
    return ValueError(str(error).replace("say it with higher_is_better", "say it with --higher-is-better or "
                                         "--lower-is-better"))


def run(args: argparse.Namespace) -> int:
    """Run ``ef gate``; the exit status is the outcome (pass 0, fail 1, inconclusive 3)."""
    from ef.cli import _output
    from ef.cli._runs import check_one_stdin
    from ef.gate import gate

    check_one_stdin(**{"BASELINE": args.baseline, "--baseline-seed": args.baseline_seed,
                       "CANDIDATE": args.candidates, "--qrels": args.qrels})
    from ef.cli._inputs import check_inputs, check_qrels_not_run

    check_inputs(**{"BASELINE": args.baseline, "--baseline-seed": args.baseline_seed,
                    "CANDIDATE": args.candidates, "--qrels": args.qrels})
    check_qrels_not_run("--qrels", args.qrels, "the runs are BASELINE and CANDIDATE, --qrels QRELS judges them")
    inputs = [args.baseline, *args.baseline_seed, *args.candidates, args.qrels]
    outputs = {"--markdown": args.markdown, "--junit": args.junit, "--json": args.json, "--html": args.html}
    _output.one_stdout(**{flag.lstrip("-"): path for flag, path in outputs.items() if flag != "--html"})
    _output.distinct_outputs(outputs)
    for flag, path in outputs.items():
        _output.check_output(flag, path, inputs)
    if args.html is not None and _output.is_stdout(args.html):
        raise ValueError("--html writes a file, not standard output ('-')")
    both = set(args.lower_is_better) & set(args.higher_is_better)
    if both:
        raise ValueError(f"{sorted(both)[0]!r} is given both --lower-is-better and --higher-is-better")
    directions = {**dict.fromkeys(args.higher_is_better, True), **dict.fromkeys(args.lower_is_better, False)}
    margins: dict[str, Any] = {}
    for name, value in args.margin:
        if name in margins:
            raise ValueError(f"--margin is given twice for {'every measure' if name == '*' else repr(name)}")
        margins[name] = value
    sides = {"baseline": [args.baseline, *args.baseline_seed], "candidate": list(args.candidates)}
    # Piped qrels are read once, here: gate reads the qrels path once for each side.
    if is_pipe(args.qrels):
        from ef.trec import read_qrels

        qrels: Any = read_qrels(args.qrels)
    else:
        qrels = args.qrels
    given = sides  # a pipe is read once by ef.gate (a saved result's JSON or a TREC run, told by its first byte)
    try:
        report = gate(
            given["baseline"] if len(given["baseline"]) > 1 else given["baseline"][0],
            given["candidate"] if len(given["candidate"]) > 1 else given["candidate"][0],
            args.measures,
            margin=margins or None,
            qrels=qrels,
            alpha=args.alpha,
            resamples=args.resamples,
            seed=args.seed,
            higher_is_better=directions,
            missing=args.missing,
            relevance_level=args.level,
            max_docs=args.max_docs,
            ignore_identical_ids=args.ignore_identical_ids,
        )
    except ValueError as error:  # gate names its keywords; the user typed the flags
        raise _flags_named(error) from None
    texts = {"--markdown": report.to_markdown, "--junit": report.to_junit, "--json": report.to_json}
    for flag, render in texts.items():
        path = outputs[flag]
        if path is not None:
            text = render() + ("\n" if flag == "--json" else "")
            _output.write(flag, path, text.encode("utf-8"), "gate report")
    if args.html is not None:
        _output.write("--html", args.html, report.to_html().encode("utf-8"), "gate report")
    on_stdout = any(_output.is_stdout(p) for p in outputs.values())
    if not args.quiet:
        print(str(report), file=sys.stderr if on_stdout else sys.stdout)
    return report.exit_code
