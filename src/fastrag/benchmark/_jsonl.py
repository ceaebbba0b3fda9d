"""JSONL reading and writing shared by samples, outcomes and results: errors say file:line."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

__all__ = ["dump_line", "read_jsonl", "write_jsonl"]

T = TypeVar("T")


def dump_line(record: dict[str, Any]) -> str:
    """One JSON line; NaN and infinities are refused rather than written as invalid JSON."""
    return json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n"


def read_jsonl(path: str | os.PathLike[str], parse: Callable[[Any], T]) -> Iterator[tuple[int, T]]:
    """Yield ``(line_number, parse(record))`` for every non-blank line of `path`.

    A line that is not JSON, or that `parse` rejects with ``ValueError``/``TypeError``/``KeyError``,
    raises ``ValueError("<path>:<line>: <reason>")``.
    """
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise ValueError(f"{os.fspath(path)}:{number}: not valid JSON ({error.msg})") from None
            try:
                yield number, parse(record)
            except (ValueError, TypeError, KeyError) as error:
                raise ValueError(f"{os.fspath(path)}:{number}: {error}") from None


def write_jsonl(path: str | os.PathLike[str], records: Iterable[dict[str, Any]]) -> None:
    """Write one JSON object per line to `path`, replacing it."""
    with open(path, "w", encoding="utf-8") as handle:
        for record in records:
            handle.write(dump_line(record))
