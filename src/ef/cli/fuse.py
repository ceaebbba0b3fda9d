"""``ef fuse RUN [RUN ...] -o FILE|-``: fuse TREC runs into one, or tune the fusion held out.

Each RUN is a TREC run file, named by its file stem or ``NAME=PATH``. Without ``--tune`` the runs
are fused with ``--method``/``--norm``/``--weights``/``--param`` and written to ``-o`` (``-``:
standard output). With ``--tune QRELS`` the method's parameters are chosen by cross-validation
over query folds; the command prints the chosen settings and whether the held-out fused run
beat the best input (paired test, corrected), and writes the run fused with the setting best on
all queries to ``-o`` if given.
"""

from __future__ import annotations

import argparse
import re
import sys

from ef.cli._inputs import check_inputs, check_qrels_not_run, flag_named
from ef.cli._output import check_output, is_stdout, write
from ef.cli._runs import check_one_stdin, run_names
from ef.compare import CORRECTIONS

__all__ = ["add_parser", "run"]


def _floats(text: str) -> list[float]:
    try:
        return [float(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers such as 0.3,0.7 (got {text!r})") from None


def _param(text: str) -> tuple[str, float]:
    name, sep, value = text.partition("=")
    try:
        if not sep or not name:
            raise ValueError
        return name, float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected NAME=NUMBER such as k=60 (got {text!r})") from None


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _step(text: str) -> float:
    # Checked here so that 0 or NaN is a usage error naming --step (tune checks that it is 1 / n).
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not 0.0 < value <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in (0, 1] such as 0.1 or 0.05 (got {text!r})")
    return value


def _flag_named(error: ValueError) -> ValueError:
    """`error` from fuse or tune, saying the flag where it says the keyword the flag was passed to."""
    for keyword, flag in (("method", "--method"), ("norm", "--norm"), ("weights", "--weights"),
                          ("folds", "--folds"), ("step", "--step"), ("seed", "--seed"), ("depth", "--depth"),
                          ("measure", "-m"), ("relevance_level", "-l"), ("missing", "--missing-doc"),
                          ("qrels", "--qrels")):  # with --tune, 'qrels' are --tune's: renamed before this
        error = flag_named(error, keyword, flag)
    # A parameter's own message opens with 'params['k']': the user typed -p k=...
    found = re.match(r"'params\['(\w+)'\]' ", str(error))
    if found:
        return ValueError(f"-p {found.group(1)} {str(error)[found.end():]}")
    return flag_named(error, "params", "-p")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``ef fuse`` and its flags."""
    from ef.cli._types import natural, relevance_level
    from ef.fusion import METHODS, NORMS

    parser = subparsers.add_parser(
        "fuse",
        help="fuse TREC runs (RRF, CombSUM, Borda ...), or tune the fusion on held-out queries",
        description=(
            "Fuse every RUN (a TREC run file: PATH or NAME=PATH) into one run, written to -o. "
            "With --tune QRELS, choose the method's parameters by cross-validation over query folds "
            "and say whether the held-out fused run beat the best input (paired test, corrected)."
        ),
    )
    parser.add_argument("runs", metavar="RUN", nargs="+", help="TREC run files: PATH or NAME=PATH")
    parser.add_argument("-o", "--output", metavar="FILE", help="where to write the fused run ('-': standard output)")
    parser.add_argument(
        "--method", type=_names, default=["rrf"], metavar="NAME",
        help=f"the fusion method (default rrf; with --tune, comma-separated to sweep): {', '.join(METHODS)}",
    )
    parser.add_argument(
        "--norm", type=_names, default=None, metavar="NAME",
        help=f"the score normalisation (default: min-max for score methods, none for rank ones; with --tune, "
             f"comma-separated to sweep): {', '.join(NORMS)}",
    )
    parser.add_argument("--weights", type=_floats, metavar="W,...", help="one weight per run (weighted methods)")
    parser.add_argument(
        "-p", "--param", dest="params", type=_param, action="append", default=[], metavar="NAME=VALUE",
        help="a method parameter (k=60, gamma=1, sigma=0.01, phi=0.8, segments=10, w=2); repeatable",
    )
    parser.add_argument("--depth", type=lambda v: natural(v, 1), metavar="N",
                        help="fuse each run's top N documents per query only")
    # Not --missing: in ef compare, gate and trec-eval that is a judged query a run lacks.
    parser.add_argument(
        "--missing-doc", dest="missing", choices=("zero", "min"), default="zero",
        help="what a run gives a document it does not list, for score methods: zero (default) or the "
             "list's lowest normalised score (ef.fusion.fuse's missing=)",
    )
    parser.add_argument(
        "--qrels", metavar="QRELS", help="training qrels of a trained method (bayesfuse, posfuse ...)"
    )
    parser.add_argument(
        "-l", "--level", dest="level", type=relevance_level, metavar="LEVEL",
        help="the lowest grade that counts as relevant, in --tune's measure and a trained method's fit (default 1)",
    )
    parser.add_argument(
        "--run-id", default="fused", metavar="ID", help="the last column of the fused run (default fused)"
    )
    parser.add_argument("--tune", metavar="QRELS", help="choose the parameters by cross-validation on these qrels")
    # --tune's own options: None when not given, so that one given without --tune is refused, not ignored.
    parser.add_argument("-m", "--measure", metavar="MEASURE", help="what --tune maximises (ndcg@10)")
    parser.add_argument("--folds", type=lambda v: natural(v, 2), metavar="N", help="--tune's query folds (default 5)")
    parser.add_argument(
        "--seed", type=lambda v: natural(v, 0), metavar="SEED", help="--tune's fold shuffle seed (default 0)",
    )
    parser.add_argument("--step", type=_step, metavar="STEP", help="--tune's weight grid step (0.1)")
    parser.add_argument("--correction", choices=tuple(CORRECTIONS), help="--tune's correction (holm)")
    parser.add_argument("-q", "--quiet", action="store_true", help="no notes on standard error")


def run(args: argparse.Namespace) -> int:
    """Run ``ef fuse``: write the fused run and/or print the tuning verdict; return the exit status."""
    from ef.fusion import METHODS, fuse, tune
    from ef.io.ids import check_trec_id
    from ef.io.trec import run_lines
    from ef.trec import read_run, write_run

    check_trec_id(args.run_id, "--run-id")  # before the fusion, which it would follow
    runs = run_names(args.runs)
    check_inputs(RUN=list(runs.values()), **{"--tune": args.tune, "--qrels": args.qrels})
    check_one_stdin(RUN=list(runs.values()), **{"--tune": args.tune, "--qrels": args.qrels})
    for flag in ("--tune", "--qrels"):
        check_qrels_not_run(flag, getattr(args, flag[2:]), f"{flag} takes qrels; the runs to fuse are the RUNs")
    if len(runs) == 1 and args.tune is not None:
        raise ValueError(f"RUN: --tune needs at least 2 runs to fuse (got 1: {args.runs[0]})")
    if args.output is None and args.tune is None:
        raise ValueError("-o is required (a file, or '-' for standard output) unless --tune is given")
    check_output("-o", args.output, [*runs.values(), args.tune, args.qrels])  # the qrels are inputs too
    params = dict(args.params)
    norms = args.norm or [None]
    tuning = {"-m/--measure": (args.measure, "ndcg@10"), "--folds": (args.folds, 5), "--seed": (args.seed, 0),
              "--step": (args.step, 0.1), "--correction": (args.correction, "holm")}
    given = [flag for flag, (value, _) in tuning.items() if value is not None]
    if args.tune is None and given:
        raise ValueError(f"{given[0]} is an option of --tune (cross-validated tuning): give --tune QRELS, "
                         "or leave it out")
    args.measure, args.folds, args.seed, args.step, args.correction = (
        default if value is None else value for value, default in tuning.values()
    )
    if args.tune is None:
        if len(args.method) != 1 or len(norms) != 1:
            raise ValueError("--method and --norm take one name each without --tune (got a list)")
        spec = METHODS.get(args.method[0])
        if spec is not None and spec.kind == "trained" and args.qrels is None:
            raise ValueError(f"--method {args.method[0]} is trained: give its training qrels with --qrels QRELS")
        if spec is not None and spec.kind != "trained" and args.qrels is not None:  # it would be ignored
            trained = ", ".join(name for name, m in METHODS.items() if m.kind == "trained")
            raise ValueError(f"--qrels trains a trained method ({trained}); --method {args.method[0]} has nothing "
                             "to train: leave --qrels out")
        if args.level is not None and args.qrels is None:  # it would be ignored
            raise ValueError(f"-l sets the grades --tune's measure and a trained method's --qrels count as relevant; "
                             f"--method {args.method[0]} without --qrels reads no grade: leave -l out")
        try:
            fused = fuse(runs, method=args.method[0], norm=norms[0], weights=args.weights, params=params or None,
                         depth=args.depth, missing=args.missing, qrels=args.qrels, relevance_level=args.level or 1)
        except ValueError as error:  # fuse names its keywords ('method'); the user typed the flags
            raise _flag_named(error) from None
        if len(runs) == 1 and not args.quiet:  # a run left out, or a wish to re-score one run: say which it is
            print(f"ef fuse: warning: one RUN ({args.runs[0]}): the output is that run re-scored by {args.method[0]}"
                  f"{'' if args.norm is None else ' after ' + args.norm[0]}, not a fusion (-q: no warning)",
                  file=sys.stderr)
    else:
        if args.weights is not None or params:
            raise ValueError("--weights and --param are what --tune chooses: leave them out")
        if args.qrels is not None:  # tune fits a trained method on its folds of the --tune qrels
            raise ValueError("--qrels is not read with --tune (a trained method is fitted on the --tune qrels of "
                             "each fold): leave it out")
        # tune and then fuse take the runs: each is read once, here (standard input, a pipe or
        # a FIFO can be read only once, and a file need not be read twice).
        once = {name: read_run(path) for name, path in runs.items()}
        for name, path in runs.items():  # as fuse refuses it without --tune (tune sees a mapping, not the file)
            if not once[name]:
                shown = "<stdin>" if path == "-" else path
                raise ValueError(f"{shown}: the run holds no ranking line (runs[{name!r}])")
        if args.tune == "-":  # read by tune, and again by the final fusion of a trained method
            from ef.trec import read_qrels

            args.tune = read_qrels("-")
        try:
            report = tune(once, args.tune, method=args.method, norm=norms, measure=args.measure, folds=args.folds,
                          seed=args.seed, step=args.step, depth=args.depth, missing=args.missing,
                          correction=args.correction, relevance_level=args.level or 1)
        except ValueError as error:  # tune's 'qrels' are --tune's (--qrels is a trained method's)
            if str(error).startswith("'qrels' "):
                raise ValueError("--tune's qrels" + str(error)[len("'qrels'"):]) from None
            raise _flag_named(error) from None
        out = sys.stderr if is_stdout(args.output) else sys.stdout
        for f, candidate in enumerate(report.chosen, start=1):
            print(f"fold {f}: {candidate}", file=out)
        for (method, norm), mean in report.sweep.items():
            print(f"held-out {args.measure} {method} norm={norm}: {mean:.4f}", file=out)
        print(f"final (best on all queries): {report.final}", file=out)
        print(report.verdict(), file=out)
        if not args.quiet:  # as ef compare prints them: a judged query no run retrieved for counts as 0, say so
            for warning in report.comparison.warnings:
                print(f"ef fuse: warning: {warning}", file=sys.stderr)
        if args.output is None:
            return 0
        final = report.final
        fused = fuse(once, method=final.method, norm=final.norm, weights=final.weights,
                     params=dict(final.params) or None, depth=args.depth, missing=args.missing,
                     **({"qrels": args.tune, "relevance_level": args.level or 1}
                        if METHODS[final.method].kind == "trained" else {}))
    # The fused run's arrays go to text directly (no dicts made).
    if is_stdout(args.output):
        write("-o", "-", "".join(run_lines(fused, run_id=args.run_id)).encode(), "fused run")
    else:
        try:
            write_run(args.output, fused, run_id=args.run_id)
        except BrokenPipeError:  # a FIFO's reader left: the command ends quietly
            raise
        except OSError as error:  # as _output.write says it for every other command's output
            raise OSError(f"-o {args.output}: cannot write the fused run ({error.strerror or error})") from error
    return 0
