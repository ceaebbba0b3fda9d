"""`ef trec-eval`. SKELETON: being written (issue 3)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence


def add_parser(subparsers: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    subparsers.add_parser("trec-eval", help="(not yet)")


def main(argv: Sequence[str]) -> int:
    raise NotImplementedError
