"""``ef rag SAMPLES.jsonl``: score RAG samples with ef's deterministic metrics and print the report.

One :class:`~ef.evaluation.RagSample` per line (a JSON object with Ragas' ``SingleTurnSample``
field names; ``.gz`` is read transparently). The report is :func:`~ef.evaluation.evaluate_rag`'s:
a table by default, ``to_dict()`` as JSON with ``--json`` (on standard output; ``--json FILE``
writes FILE atomically, ``--json -`` is standard output again).
"""

from __future__ import annotations

import argparse
import json

import ef
from ef.cli import _output
from ef.evaluation import evaluate_rag
from ef.evaluation.samples import read_rag_samples
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
        "--json", nargs="?", const=_output.STDOUT, default=None, metavar="FILE",
        help="print the report as JSON, or write it to FILE ('-': standard output)",
    )


def _metric_names(value: str) -> list[str]:
    return [name.strip() for name in value.split(",") if name.strip()]


def run(args: argparse.Namespace) -> int:
    """Run ``ef rag``: print the report, return the exit status."""
    metrics = _DEFAULT_METRICS if args.metrics is None else args.metrics
    path, json_out = args.samples, args.json
    if path is None and json_out not in (None, _output.STDOUT):
        path, json_out = json_out, _output.STDOUT  # `--json SAMPLES.jsonl`: the one path is the samples
    if path is None:
        raise ValueError("the following arguments are required: SAMPLES.jsonl")
    _output.check_output("--json", json_out, [path])  # before the work
    samples = read_rag_samples(path)
    report = evaluate_rag(samples, metrics=metrics, checker=args.checker)
    if json_out is None:
        print(report)
    else:
        document = {**report.to_dict(), "ef_version": ef.__version__}  # which ef wrote it
        _output.write("--json", json_out, json.dumps(document, indent=2, allow_nan=False).encode() + b"\n", "report")
    return 0
