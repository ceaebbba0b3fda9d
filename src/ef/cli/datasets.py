"""``ef datasets list`` and ``ef datasets fetch NAME``: the datasets ef knows by name, and getting one.

``list`` reads nothing but file sizes: what each dataset is, its published checksum (or
``unknown``), and where copies are on this machine. ``fetch`` is the only command of ef that goes
online; it downloads into ef's own cache (see ``ef.datasets.fetch``).
"""

from __future__ import annotations

import argparse
import sys

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
    fetching = actions.add_parser(
        "fetch", help="download a dataset into ef's cache: resumable, checksum-verified, atomic"
    )
    fetching.add_argument("name", metavar="NAME", help="a name from 'ef datasets list' (or an ir_datasets id)")
    fetching.add_argument("-q", "--quiet", action="store_true", help="no progress bar")
    fetching.add_argument(
        "--timeout", type=float, default=60.0, metavar="SECONDS", help="network timeout (default: 60)"
    )


def _list(names: list[str]) -> int:
    from ef.console import format_table
    from ef.datasets import KNOWN, ef_root, resolve_name, where_present

    chosen = []
    for name in names:
        resolved = resolve_name(name)
        if resolved is None:
            raise ValueError(f"unknown dataset {name!r}; run 'ef datasets list' for the names ef knows")
        chosen.append(resolved[0])
    rows = []
    for known in chosen or list(KNOWN.values()):
        files = known.downloads
        md5 = "unknown" if not files else files[0].md5 + (f" +{len(files) - 1} files" if len(files) > 1 else "")
        size = sum(d.size or 0 for d in files)
        rows.append([
            known.name, known.relevance_level, f"{size / 1e6:,.1f} MB" if size else "-", md5,
            ",".join(known.splits), "; ".join(where_present(known)) or "-",
        ])
    print(format_table(["name", "level", "size", "md5", "splits", "present"], rows))
    print(f"\nef's cache: {ef_root()}; 'ef datasets fetch NAME' downloads a dataset there")
    return 0


def run(args: argparse.Namespace) -> int:
    """Run ``ef datasets ACTION``; returns the exit status."""
    if args.action == "list":
        return _list(args.names)
    from ef.datasets import fetch

    if args.timeout <= 0:
        raise ValueError(f"--timeout must be a positive number of seconds (got {args.timeout})")
    for path in fetch(args.name, show_progress=not args.quiet, timeout=args.timeout):
        print(f"{path}: md5 verified", file=sys.stdout)
    return 0
