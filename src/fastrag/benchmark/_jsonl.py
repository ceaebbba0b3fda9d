"""JSONL reading and writing shared by samples, outcomes and results: errors say file:line."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from ef.io._atomic import atomic_writer
from ef.io._source import display_name
from ef.io.jsonl import iter_jsonl

__all__ = ["dump_line", "read_jsonl", "write_jsonl"]

T = TypeVar("T")


def dump_line(record: dict[str, Any]) -> str:
    """One JSON line; NaN and infinities are refused rather than written as invalid JSON."""
    return json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n"


def read_jsonl(path: str | os.PathLike[str], parse: Callable[[Any], T]) -> Iterator[tuple[int, T]]:
    """Yield ``(line_number, parse(record))`` for every non-blank line of `path` (plain, gzip or ``-``).

    Read through ef's one JSONL reader (:func:`ef.io.jsonl.iter_jsonl`): bytes that are not UTF-8,
    a line that is not JSON, a key twice in one object, or a record `parse` rejects with
    ``ValueError``/``TypeError``/``KeyError`` raise ``ValueError("<path>:<line>: <reason>")``.
    """
    name = display_name(path)
    for number, record in iter_jsonl(path):
        try:
            yield number, parse(record)
        except (ValueError, TypeError, KeyError) as error:
            raise ValueError(f"{name}:{number}: {error}") from None


def _describe(index: int, record: object) -> str:
    """``record 3 (sample 'q3')``: the position, plus the id when the record carries one."""
    label = f"record {index}"
    if isinstance(record, dict):
        for field in ("sample_id", "id"):
            if isinstance(record.get(field), str):
                return f"{label} (sample {record[field]!r})"
    return label


def write_jsonl(path: str | os.PathLike[str], records: Iterable[dict[str, Any]]) -> None:
    """Write one JSON object per line to `path`, replacing it atomically.

    Every record is serialised before the file is touched, so a record JSON cannot hold (NaN, an
    infinity, an object of no JSON type) raises ``ValueError("<path>: record <i> (sample '<id>'):
    <reason>")`` and leaves the old file as it was. The lines go to a temporary file in the same
    directory, which then replaces `path` in one ``os.replace``: a reader or a crash sees the old
    file or the new one, never half of either. A new file gets the permissions ``open()`` would
    give it (``0o666`` less the umask), an existing one keeps its own, a symlink's target is
    written (see :mod:`ef.io._atomic`).
    """
    lines: list[bytes] = []
    for index, record in enumerate(records):
        try:  # encoded here too: a lone surrogate has no UTF-8 form (UnicodeEncodeError is a ValueError)
            lines.append(dump_line(record).encode("utf-8"))
        except (ValueError, TypeError) as error:
            raise ValueError(f"{os.fspath(path)}: {_describe(index, record)}: {error}") from None
    with atomic_writer(path) as stream:
        stream.write(b"".join(lines))
