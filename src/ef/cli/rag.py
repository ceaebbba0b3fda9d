"""`ef rag`. SKELETON: being written."""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    subparsers.add_parser("rag", help="(not yet)")


def run(args: argparse.Namespace) -> int:
    raise NotImplementedError
