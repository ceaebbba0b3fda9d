"""``ef rag SAMPLES.jsonl``: score RAG samples with ef's deterministic metrics and print the report.

One :class:`~ef.evaluation.RagSample` per line (a JSON object with Ragas' ``SingleTurnSample``
field names; ``.gz`` is read transparently). The report is :func:`~ef.evaluation.evaluate_rag`'s:
a table by default, ``to_dict()`` as JSON with ``--json`` (on standard output; ``--json FILE``
writes FILE atomically, ``--json -`` is standard output again).

``--from deepeval`` reads a file DeepEval's ``EvaluationDataset.save_as`` wrote instead (``.json``,
``.jsonl`` or ``.csv``: :func:`ef.io.deepeval.read_deepeval`), its fields mapped to Ragas' names
(``input`` -> ``user_input``, ``actual_output`` -> ``response`` ...). A flag, not a guess from the
content: what a file is read as shows on the command line, as trec_eval's ``-R``/``-T`` do, and a
DeepEval file given without it is refused with a hint.
"""

from __future__ import annotations

import argparse
import json
import os
import re

import ef
from ef.cli import _output
from ef.cli._inputs import flag_named
from ef.evaluation import evaluate_rag
from ef.evaluation.samples import read_rag_samples
from ef.io.deepeval import DEEPEVAL_FIELDS, read_deepeval
from ef.measures import RAG_MEASURES
from ef.measures.semantic import SEMANTIC_METRICS

__all__ = ["add_parser", "run"]

_DEFAULT_METRICS: tuple[str, ...] = tuple(RAG_MEASURES)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``ef rag`` and its flags."""
    metric_help = "; ".join(
        [f"{name}: {metric.description}" for name, metric in RAG_MEASURES.items()]
        + [f"{name}: {description} (not by default)" for name, (description, _) in SEMANTIC_METRICS.items()]
    )
    parser = subparsers.add_parser(
        "rag",
        help="score RAG samples (JSON Lines) with lexical metrics, no LLM",
        description=(
            "Score RAG samples with deterministic metrics: lexical ones by default, MiniLM similarities and a "
            "local checker model on request (no LLM, no network). "
            "SAMPLES is a JSON Lines file, one object per line with Ragas' SingleTurnSample "
            "field names: user_input, response, retrieved_contexts, reference, reference_contexts."
        ),
    )
    # Optional for argparse only: `ef rag --json SAMPLES.jsonl` must still mean "print JSON" (see run).
    parser.add_argument("samples", nargs="?", metavar="SAMPLES.jsonl", help="the samples, one JSON object per line")
    # One comma-separated value (repeatable) rather than nargs="+", which would swallow SAMPLES.
    parser.add_argument(
        "--metrics",
        action="extend",
        type=_metric_names,
        metavar="NAME[,NAME...]",
        help=f"metrics to compute (default: every lexical one). {metric_help}",
    )
    parser.add_argument(  # the spelling of ef eval, compare, gate, fuse and sweep
        "-m", "--measure", dest="metrics", action="extend", type=_metric_names, metavar="NAME",
        help="a metric to compute, as --metrics; repeatable or comma-separated",
    )
    parser.add_argument(
        "--checker", metavar="MODEL_DIR", default=None,
        help="judge claim support (claim_*, faithfulness, context_utilization, noise_sensitivity_*, "
        "hallucination) with this local NLI / cross-encoder model directory instead of the lexical rule; "
        "never downloads",
    )
    parser.add_argument(
        "--from", dest="source_format", choices=("ragas", "deepeval"), default="ragas",
        help="what SAMPLES holds: ragas (default), Ragas' field names, one JSON object per line; deepeval, a "
        "file DeepEval's EvaluationDataset.save_as wrote (json, jsonl or csv), its fields mapped to Ragas' "
        "(input: user_input, actual_output: response, retrieval_context: retrieved_contexts, "
        "expected_output: reference, context: reference_contexts)",
    )
    parser.add_argument(
        "--drop-unmapped", action="store_true",
        help="with --from deepeval: leave out the DeepEval fields ef has no place for (name, comments, "
        "tools_called, additional_metadata ...) rather than refuse a test case where one holds a value",
    )
    parser.add_argument(
        "--json", nargs="?", const=_output.STDOUT, default=None, metavar="FILE",
        help="print the report as JSON, or write it to FILE ('-': standard output)",
    )


def _metric_names(value: str) -> list[str]:
    return [name.strip() for name in value.split(",") if name.strip()]


def _read_ragas(path: str) -> list[dict[str, object]]:
    """The samples of `path`; a DeepEval key where a Ragas one belongs is refused with the flag that reads it."""
    try:
        return read_rag_samples(path)
    except ValueError as error:
        unknown = re.search(r"has unknown key '(\w+)'", str(error))
        if unknown is not None and unknown[1] in DEEPEVAL_FIELDS:
            raise ValueError(f"{error} ('{unknown[1]}' is DeepEval's: --from deepeval reads its files)") from None
        # an array over several lines (save_as's indent=4) is malformed JSON Lines; on one line, an array
        if re.search(r":1: (malformed JSON|expected a JSON object, got array)", str(error)) and os.path.isfile(path):
            with open(path, "rb") as stream:
                head = stream.read(256).lstrip()
            # DeepEval's save_as writes a JSON array (file_type="json") or a CSV with a header (file_type="csv")
            if head.startswith(b"[") or head.split(b",", 1)[0] in (b"input", b'"input"'):
                kind = "a JSON array" if head.startswith(b"[") else "a CSV file"
                raise ValueError(f"{error}: SAMPLES holds {kind}, not JSON Lines, as DeepEval's "
                                 "EvaluationDataset.save_as writes one: --from deepeval reads it") from None
        raise


def run(args: argparse.Namespace) -> int:
    """Run ``ef rag``: print the report, return the exit status."""
    metrics = _DEFAULT_METRICS if args.metrics is None else args.metrics
    path, json_out = args.samples, args.json
    if path is None and json_out not in (None, _output.STDOUT):
        path, json_out = json_out, _output.STDOUT  # `--json SAMPLES.jsonl`: the one path is the samples
    if path is None:
        raise ValueError("the following arguments are required: SAMPLES.jsonl")
    _output.check_output("--json", json_out, [path])  # before the work
    if args.drop_unmapped and args.source_format != "deepeval":
        raise ValueError("--drop-unmapped: only with --from deepeval (a Ragas sample has no field to drop)")
    if args.source_format == "deepeval":
        samples = read_deepeval(path, drop_unmapped=args.drop_unmapped)
    else:
        samples = _read_ragas(path)
    try:
        report = evaluate_rag(samples, metrics=metrics, checker=args.checker)
    except ValueError as error:  # evaluate_rag names its keywords; the user typed the flags
        raise flag_named(flag_named(error, "metrics", "--metrics"), "checker", "--checker") from None
    if json_out is None:
        print(report)
    else:
        document = {**report.to_dict(), "ef_version": ef.__version__}  # which ef wrote it
        _output.write("--json", json_out, json.dumps(document, indent=2, allow_nan=False).encode() + b"\n", "report")
    return 0
