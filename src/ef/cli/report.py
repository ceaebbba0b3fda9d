"""``ef report RESULT.json --html report.html``: render a saved JSON report as one HTML file.

RESULT.json is what ``ef eval --json``, ``ef trec-eval -q --json``, ``ef compare --json`` or a
fastrag ``BenchmarkResult.to_json()`` wrote; its kind is read from its keys. ``--png DIR`` and
``--svg DIR`` write the same charts as images. The flags of this module are shared with
``ef eval`` and ``ef trec-eval`` (:func:`add_output_flags`, :func:`write_outputs`).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "add_output_flags",
    "add_parser",
    "check_outputs",
    "dataset_files",
    "read_result",
    "report_for",
    "report_kind",
    "run",
    "split_name",
    "wants_report",
    "write_comparison_report",
    "write_evaluation_report",
    "write_outputs",
    "write_run_report",
]


def add_output_flags(parser: argparse.ArgumentParser) -> None:
    """``--html FILE``, ``--png DIR`` and ``--svg DIR``."""
    group = parser.add_argument_group("report (needs the 'report' extra: pip install 'ef-eval[report]')")
    group.add_argument("--html", metavar="REPORT.html", help="write a self-contained HTML report with charts")
    group.add_argument("--png", metavar="DIR", help="write the report's charts as PNG images into DIR")
    group.add_argument("--svg", metavar="DIR", help="write the report's charts as SVG images into DIR")


def wants_report(args: argparse.Namespace) -> bool:
    """Whether any of the report flags was given."""
    return any(getattr(args, flag, None) is not None for flag in ("html", "png", "svg"))


def check_outputs(args: argparse.Namespace, inputs: Sequence[str | os.PathLike[str] | None] = ()) -> None:
    """Fail before any work if a report output cannot be written (and the extra is missing), or
    ``--html`` is the same file as one of `inputs`."""
    if not wants_report(args):
        return
    if args.html == "-":  # it made a file named '-' (ef gate says the same)
        raise ValueError("--html writes a file, not standard output ('-')")
    from ef.report import require_report_extra

    require_report_extra()
    from ef.cli._output import check_output, check_writable_folder

    check_output("--html", args.html, inputs)
    for flag in ("png", "svg"):
        folder = getattr(args, flag)
        if folder is None:
            continue
        check_writable_folder(f"--{flag}", folder)
        parent = os.path.dirname(os.path.abspath(folder))
        if not os.path.isdir(parent):  # as --html: the folder may be made, not the folders above it
            raise FileNotFoundError(f"--{flag} {folder}: directory {parent} does not exist")


def dataset_files(dataset: str | os.PathLike[str] | None, split: str) -> list[str]:
    """The files ``read_beir`` may read from `dataset` for `split` (to refuse outputs that name them)."""
    if dataset is None:
        return []
    if os.path.isfile(dataset):  # a BEIR zip: 'ef eval data.zip --json data.zip' replaced the dataset
        return [os.fspath(dataset)]
    names = ("corpus.jsonl", "queries.jsonl", f"qrels/{split}.tsv", "qrels.tsv")
    return [os.path.join(dataset, name + gz) for name in names for gz in ("", ".gz")]


def write_outputs(args: argparse.Namespace, report: Any) -> None:
    """Write `report` (an :class:`ef.report.Report`) where ``--html``/``--png``/``--svg`` say."""
    if args.html is not None:
        try:
            report.to_html(args.html)
        except OSError as error:
            raise OSError(f"--html {args.html}: cannot write the report ({error.strerror or error})") from error
    for flag in ("png", "svg"):
        folder = getattr(args, flag)
        if folder is not None:
            try:
                report.save_figures(folder, flag)
            except OSError as error:
                raise OSError(f"--{flag} {folder}: cannot write the charts ({error.strerror or error})") from error


def write_evaluation_report(
    args: argparse.Namespace,
    report: Any,
    *,
    corpus: Mapping[str, str],
    queries: Mapping[str, str],
    qrels: Mapping[str, Mapping[str, float]],
    facts: Mapping[str, str],
) -> None:
    """``ef eval``'s report outputs, the worst queries' rankings from the report's own run (as scored)."""
    from ef.report import evaluation_report

    page = evaluation_report(
        report,
        qrels=qrels,
        queries=queries,
        corpus=corpus,
        facts=facts,
        title=f"Retrieval evaluation: {facts.get('dataset', '')}".rstrip(": "),
    )
    write_outputs(args, page)


def write_run_report(
    args: argparse.Namespace,
    measures: Sequence[Any],
    result: Any,
    run: Any,
    qrels: Mapping[str, Mapping[str, float]],
    run_id: str,
) -> None:
    """``ef trec-eval``'s report outputs, from its evaluation of every measure."""
    from ef.report import evaluation_report

    def typed(measure: Any, value: float) -> float:
        return int(value) if measure.spec.integer else value

    def numeric(value: object) -> bool:
        return isinstance(value, int | float) and not isinstance(value, bool)

    # trec_eval prints no per-query line for num_q and gm_map; relstring is text, not a number to draw.
    shown = [m for m in measures if not m.spec.summary_only]
    columns = {m: result.values[m].tolist() for m in shown}
    data = {
        "run_id": run_id,
        "n_queries": len(result.query_ids),
        "measures": {str(m): typed(m, result.summary[m]) for m in measures if numeric(result.summary.get(m))},
        "per_query": {
            q: {str(m): typed(m, columns[m][i]) for m in shown if numeric(columns[m][i])}
            for i, q in enumerate(result.query_ids)
        },
    }
    rankings = run if isinstance(run, Mapping) else run.to_dict()  # a tokenised run file (RunColumns)
    page = evaluation_report(
        data,
        run=rankings,
        qrels=qrels,
        facts={"qrels": str(args.qrels), "run file": str(args.run)},
        title=f"Run evaluation: {run_id or args.run}",
    )
    write_outputs(args, page)


def write_comparison_report(
    args: argparse.Namespace, report: Any, runs: Mapping[str, Any], *, dataset: Any = None, qrels: Any = None
) -> None:
    """``ef compare``'s report outputs; the largest losses show the runs' rankings side by side.

    With `dataset` (an ``ef.datasets.Dataset``, ``ef compare --dataset``) its qrels mark the
    rankings and its query texts and passages are shown: the passages of the documents the
    rankings show, read from its corpus block by block (never the whole corpus).
    """
    from ef.report import comparison_report
    from ef.trec import read_qrels, read_run

    # A run (or qrels) already read (standard input, which cannot be read twice) is taken as it is.
    rankings = {name: path if isinstance(path, Mapping) else read_run(path) for name, path in runs.items()}
    if dataset is None:
        judged = qrels if isinstance(qrels, Mapping) else read_qrels(args.qrels)
        qrels, queries, corpus, facts = judged, None, None, {"qrels": str(args.qrels)}
    else:
        import heapq

        def top(docs: Mapping[str, float]) -> list[tuple[str, float]]:  # as the page ranks them (trec_eval's order)
            return heapq.nlargest(_DEPTH, docs.items(), key=lambda item: (item[1], item[0].encode()))

        shown = {doc for run in rankings.values() for docs in run.values() for doc, _ in top(docs)}
        corpus = {doc: text for block in dataset.iter_corpus() for doc, text in block if doc in shown}
        qrels, queries, facts = dataset.qrels, dataset.queries, {"dataset": dataset.name, "split": dataset.split}
    page = comparison_report(
        report,
        runs=rankings,
        qrels=qrels,
        queries=queries,
        corpus=corpus,
        facts=facts,
        title=f"Comparison: {', '.join(runs)}",
        depth=_DEPTH,
    )
    write_outputs(args, page)


_DEPTH = 10  # documents shown of each ranking of a largest loss


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``ef report`` and its flags."""
    parser = subparsers.add_parser(
        "report",
        help="render a saved JSON report (ef eval/trec-eval/compare, fastrag) as HTML with charts",
        description=(
            "Render RESULT.json (from ef eval --json, ef trec-eval -q --json, ef compare --json or fastrag's "
            "BenchmarkResult.to_json()) as one self-contained HTML file. For an evaluation, --run, --qrels and "
            "--dataset add the worst queries' results, relevance marks, texts and snippets."
        ),
    )
    parser.add_argument("result", metavar="RESULT.json", help="a JSON report")
    add_output_flags(parser)
    parser.add_argument("--title", help="the page title")
    parser.add_argument(
        "--run",
        metavar="RUN",
        action="append",
        help="the TREC run that was scored; for a comparison NAME=PATH, repeatable (shows the rankings "
        "of the largest losses side by side)",
    )
    parser.add_argument("--qrels", metavar="QRELS", help="evaluation: the qrels (default: the dataset's, if given)")
    parser.add_argument(
        "--dataset",
        metavar="DATASET",
        help="a BEIR dataset folder or zip, or a name (beir/scifact ...: ef datasets list), as ef eval takes it: "
             "query texts, document snippets and the qrels",
    )
    parser.add_argument("--split", default=None, help="qrels split of --dataset (default: the report's, or test)")
    parser.add_argument(
        "--worst",
        type=int,
        default=10,
        metavar="N",
        help="how many worst queries (evaluation, default 10) or largest losses (comparison) to show",
    )


def read_result(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON object in `path` (``-``: standard input); ``ValueError`` naming the file if it is not one."""
    from ef.io.jsonl import json_type, read_json
    from ef.report.saved import check_finite

    # ef.io's reader: malformed JSON, a key given twice (which value was meant cannot be told) and
    # bytes that are not UTF-8 name the file; NaN or an infinity (ef writes neither) its field.
    try:
        data = read_json(path, constants=True)
    except ValueError:
        from ef.cli._inputs import check_qrels_not_run

        # A run given for the report said only "malformed JSON: Extra data (column 3)".
        check_qrels_not_run(
            "RESULT.json", os.fspath(path), "ef report renders a saved JSON report; score the run first "
            "(ef trec-eval --json FILE QRELS RUN, or ef compare QRELS RUN... --html PAGE)",
        )
        raise
    name = "<stdin>" if os.fspath(path) == "-" else os.fspath(path)
    if not isinstance(data, dict):
        raise ValueError(f"{name}: expected a JSON object, got {json_type(data)}")
    check_finite(data, name)
    return data


def report_kind(data: Mapping[str, Any]) -> str:
    """``"benchmark"``, ``"comparison"`` or ``"evaluation"``, from the keys of a saved report."""
    if "samples" in data and "summary" in data:
        return "benchmark"
    if "comparisons" in data:
        return "comparison"
    if "metrics" in data or "measures" in data:
        return "evaluation"
    raise ValueError(
        "not a report ef can render: expected the JSON of ef eval / ef trec-eval (a 'metrics' or 'measures' "
        f"object), ef compare, or a fastrag BenchmarkResult (got keys {sorted(data)[:8]})"
    )


def split_name(dataset: str | os.PathLike[str], split: object, name: str) -> str:
    """`split` if ``qrels/<split>.tsv`` is a file of the `dataset` folder, else ``ValueError`` naming `name`.

    A split read from a saved report is data: ``"../../x"`` or a symlink out of the folder must
    not make the report read (and show) a file that is not part of the dataset.

    >>> split_name("ds", "dev", "--split")
    'dev'
    >>> split_name("ds", "../secret", "--split")
    Traceback (most recent call last):
    ...
    ValueError: --split must name a file of ds/qrels (got '../secret')
    """
    from pathlib import Path, PurePath

    qrels = Path(dataset) / "qrels"
    parts = PurePath(split).parts if isinstance(split, str) else ()
    if len(parts) != 1 or parts[0] in (".", "..") or split != parts[0] or "\x00" in split:
        raise ValueError(f"{name} must name a file of {qrels} (got {split!r})")
    top = Path(dataset).resolve()
    for suffix in (".tsv", ".tsv.gz"):
        path = qrels / f"{split}{suffix}"
        if path.exists() and not path.resolve().is_relative_to(top):
            raise ValueError(f"{name} {split!r} reads {path}, a symbolic link out of the dataset folder {dataset}")
    return str(split)


def report_for(data: Mapping[str, Any], args: argparse.Namespace, *, where: str) -> Any:
    """The :class:`ef.report.Report` for a saved report's JSON and the flags of ``ef report``."""
    from ef import report as reports
    from ef.report.saved import check_saved_benchmark, check_saved_comparison

    if data.get("schema") == "ef.gate/1":  # its 'measures' (a list of verdicts) made it read as an evaluation
        raise ValueError(
            f"{where}: an ef gate report (schema 'ef.gate/1'), which ef report does not render: "
            "ef gate --html FILE writes its page"
        )
    kind = report_kind(data)
    if kind == "benchmark":
        check_saved_benchmark(data, where)
        extra = [flag for flag in ("run", "qrels", "dataset") if getattr(args, flag, None)]
        if extra:  # a benchmark's page has no rankings to mark: they would be ignored
            raise ValueError(f"--{extra[0]}: {where} is a fastrag benchmark, whose page shows no rankings "
                             "(--run, --qrels and --dataset are for an evaluation or a comparison)")
        return reports.benchmark_report(data, title=args.title)
    if kind == "comparison":
        check_saved_comparison(data, where)
    corpus = queries = qrels = None
    if args.dataset is not None and not os.path.isdir(args.dataset):
        # a name or a zip, as ef eval and ef compare take them: ef.datasets finds and checks it
        from ef.datasets import load

        corpus, queries, qrels = load(args.dataset, split=args.split or data.get("split"))
    elif args.dataset is not None:
        from ef.evaluation import read_beir

        if args.split is not None:
            split = split_name(args.dataset, args.split, "--split")
        else:
            split = split_name(args.dataset, data.get("split") or "test", f"{where}: field 'split'")
        corpus, queries, qrels = read_beir(args.dataset, qrels=f"qrels/{split}.tsv")
    if args.qrels is not None:
        from ef.trec import read_qrels

        qrels = read_qrels(args.qrels)
    from ef.cli._runs import run_names
    from ef.trec import read_run

    runs = {name: read_run(path) for name, path in run_names(args.run or []).items()}
    empty = [path for name, path in run_names(args.run or []).items() if not runs[name]]
    if empty:  # its rankings would show nothing, as evaluate_run and trec_eval refuse such a run
        raise ValueError(f"--run {empty[0]}: the run holds no ranking line (it has no ranking to show)")
    if kind == "evaluation" and len(runs) > 1:
        raise ValueError(f"--run: an evaluation has one run (got {len(runs)})")
    if kind == "comparison":
        systems = list(data.get("systems", ()))
        unknown = [name for name in runs if name not in systems]
        if unknown:
            raise ValueError(f"--run {unknown[0]}=...: the comparison has no system {unknown[0]!r} (it has {systems})")
    try:
        if kind == "comparison":
            return reports.comparison_report(
                data,
                runs=runs or None,
                qrels=qrels,
                queries=queries,
                corpus=corpus,
                title=args.title,
                losses=args.worst,
            )
        run = next(iter(runs.values()), None)
        return reports.evaluation_report(
            data, run=run, qrels=qrels, queries=queries, corpus=corpus, title=args.title, worst=args.worst
        )
    except (TypeError, ValueError) as error:
        raise ValueError(f"{where}: {error}") from None


def run(args: argparse.Namespace) -> int:
    """Run ``ef report``; returns the exit status."""
    if not wants_report(args):
        raise ValueError("nothing to write: give --html REPORT.html, --png DIR or --svg DIR")
    if args.worst < 0:
        raise ValueError(f"--worst must be a non-negative integer (got {args.worst})")
    inputs = [args.result, args.qrels, *dataset_files(args.dataset, args.split or "test")]
    if args.dataset is not None and os.path.isfile(args.dataset):  # a zip: --html must not replace it
        inputs.append(args.dataset)
    from ef.cli._runs import run_names

    inputs += run_names(args.run or []).values()
    from ef.cli._inputs import check_inputs

    given = {"RESULT.json": args.result, "--run": list(run_names(args.run or []).values()), "--qrels": args.qrels}
    check_inputs(**given)
    if args.split is not None and args.dataset is None:  # it would be ignored
        raise ValueError("--split needs --dataset DIR (the qrels split of that folder)")
    from ef.cli._runs import check_one_stdin

    check_one_stdin(**given)
    from ef.cli._output import distinct_outputs

    distinct_outputs({"--html": args.html, "--png": args.png, "--svg": args.svg})
    check_outputs(args, inputs)
    data = read_result(args.result)
    write_outputs(args, report_for(data, args, where="<stdin>" if args.result == "-" else args.result))
    return 0
