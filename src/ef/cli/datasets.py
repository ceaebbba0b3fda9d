"""``ef datasets list`` and ``ef datasets fetch NAME``: the datasets ef knows by name, and getting one.

``list`` reads nothing but file sizes: what each dataset is, its published checksum (or
``unknown``), and where copies are on this machine. ``fetch`` is the only command of ef that goes
online; it downloads into ef's own cache (see ``ef.datasets.fetch``).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ef.datasets import KnownDataset

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register ``ef datasets`` and its two actions."""
    parser = subparsers.add_parser(
        "datasets",
        help="list the datasets ef knows by name, and where they are; fetch one",
        description=(
            "Datasets by name (beir/scifact, trec-dl-2019, ir_datasets ids ...), read from the ir_datasets "
            "cache, the Hugging Face hub cache or ef's cache without going online. 'fetch' is the only "
            "command that downloads; see docs/datasets.md."
        ),
    )
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    listing = actions.add_parser("list", help="what is known, its checksum, and what is present where, with sizes")
    listing.add_argument("names", nargs="*", metavar="NAME", help="only these datasets (default: all)")
    listing.add_argument(
        "--json", nargs="?", const="-", default=None, metavar="FILE",
        help="print the table as JSON, or write it to FILE ('-': standard output)",
    )
    fetching = actions.add_parser(
        "fetch", help="download a dataset into ef's cache: resumable, checksum-verified, atomic"
    )
    fetching.add_argument("name", metavar="NAME", help="a name from 'ef datasets list' (or an ir_datasets id)")
    fetching.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    fetching.add_argument(
        "--timeout", type=float, default=60.0, metavar="SECONDS", help="network timeout (default: 60)"
    )


def _as_json(known: KnownDataset, present: list[str]) -> dict[str, Any]:
    return {
        "name": known.name, "splits": list(known.splits), "relevance_level": known.relevance_level,
        "query_ids_are_doc_ids": known.query_ids_are_doc_ids,
        "files": [{"url": d.url, "md5": d.md5, "size": d.size, "cache_path": d.cache_path} for d in known.downloads],
        "present": present, **({"note": known.note} if known.note else {}),
    }


def _list(names: list[str], json_out: str | None) -> int:
    from ef.datasets import KNOWN, ef_root, resolve_name, where_present
    from ef.tables import format_table

    chosen = []
    for name in names:
        resolved = resolve_name(name)
        if resolved is None:
            raise ValueError(f"unknown dataset {name!r}; run 'ef datasets list' for the names ef knows")
        chosen.append(resolved[0])
    rows = []
    documents = []
    for known in chosen or list(KNOWN.values()):
        present = where_present(known)
        documents.append(_as_json(known, present))
        files = known.downloads
        md5 = "unknown" if not files else files[0].md5 + (f" +{len(files) - 1} files" if len(files) > 1 else "")
        size = sum(d.size or 0 for d in files)
        rows.append([
            known.name, known.relevance_level, f"{size / 1e6:,.1f} MB" if size else "-", md5,
            ",".join(known.splits), "; ".join(present) or "-",
        ])
    if json_out is not None:
        from ef.cli import _output

        data = json.dumps({"ef_cache": str(ef_root()), "datasets": documents}, indent=2, allow_nan=False) + "\n"
        _output.write("--json", json_out, data.encode("utf-8"), "table")
        if _output.is_stdout(json_out):
            return 0
    print(format_table(["name", "level", "size", "md5", "splits", "present"], rows))
    print(f"\nef's cache: {ef_root()}; 'ef datasets fetch NAME' downloads a dataset there")
    return 0


def run(args: argparse.Namespace) -> int:
    """Run ``ef datasets ACTION``; returns the exit status."""
    if args.action == "list":
        from ef.cli import _output
        from ef.datasets import resolve_name

        names, json_out = list(args.names), args.json
        if json_out is not None and not _output.is_stdout(json_out) and resolve_name(json_out) is not None:
            # `--json beir/scifact`: argparse gave the flag the dataset's name; it means "print it as JSON"
            names, json_out = [json_out, *names], _output.STDOUT
        _output.check_output("--json", json_out)  # before looking through the caches
        return _list(names, json_out)
    from ef.datasets import fetch

    if args.timeout <= 0:
        raise ValueError(f"--timeout must be a positive number of seconds (got {args.timeout})")
    for path in fetch(args.name, show_progress=not args.quiet, timeout=args.timeout):
        print(f"{path}: md5 verified", file=sys.stdout)
    return 0
