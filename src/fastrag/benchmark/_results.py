"""The results file of ``run_benchmark``: recognising it, resuming from it, starting it.

A results file is ours when it starts with the header line ``{"fastrag_outcomes": …}`` (the
key ``dump_line`` writes first), or, as written before headers existed, with an outcome line.
Anything else — a config file, a samples file passed by mistake — is refused before a byte of it
changes; a torn last line (the write an interruption cut short) is dropped only from a file that
is ours, and only after every complete line was checked against this run.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Sequence

from ef.io.atomic import atomic_writer
from fastrag.benchmark._jsonl import dump_line
from fastrag.benchmark.samples import _HEADER_KEY, EvalSample, OutcomesHeader, QueryOutcome, read_outcome_lines

__all__ = ["default_run_name", "start_results"]

_HEADER_START = json.dumps({_HEADER_KEY: 0})[: len(_HEADER_KEY) + 3].encode("utf-8")  # b'{"fastrag_outcomes":'
_SCALARS = (str, int, float, bool, type(None))
_MAX_FIELD_CHARS = 80


def default_run_name(target: object) -> str:
    """What identifies `target` when the caller names no run: its class, plus what it exposes.

    The class's qualified name; an ``embedder`` or ``fingerprint`` string attribute of the target
    or of a dataclass target's fields (an ef index has both); and a dataclass target's short
    scalar fields (``k1=1.2``). Two differently configured instances of a plain class look the
    same: name the runs (``run_name=``) to tell them apart.

    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class BM25:
    ...     k1: float = 1.2
    ...     def retrieve(self, query, k): return []
    >>> default_run_name(BM25(k1=0.9)).split(" ", 1)[1]
    'k1=0.9'
    """
    cls = type(target)
    parts = [f"{cls.__module__}.{cls.__qualname__}"]
    inner: list[object] = [target]
    if dataclasses.is_dataclass(target) and not isinstance(target, type):
        for field in dataclasses.fields(target):
            value = getattr(target, field.name, None)
            if isinstance(value, _SCALARS) and len(repr(value)) <= _MAX_FIELD_CHARS:
                parts.append(f"{field.name}={value!r}")
            else:
                inner.append(value)
    for item in inner:
        for attribute in ("embedder", "fingerprint"):
            try:
                value = getattr(item, attribute, None)
            except Exception:  # a property that fails says nothing about the run
                continue
            if isinstance(value, str) and value:
                parts.append(f"{attribute}={value}")
    return " ".join(parts)


def _kind(data: bytes) -> str:
    """``"empty"``, ``"ours"`` (a header first), ``"old"`` (an outcome first) or ``"foreign"``."""
    text = data.lstrip()
    if not text:
        return "empty"
    if text.startswith(_HEADER_START):
        return "ours"
    first = text.split(b"\n", 1)[0]
    try:
        record = json.loads(first)
    except (ValueError, UnicodeDecodeError):
        return "foreign"
    return "old" if isinstance(record, dict) and {"sample_id", "query"} <= record.keys() else "foreign"


def _write_header(path: str | os.PathLike[str], header: OutcomesHeader) -> None:
    with atomic_writer(path) as stream:
        stream.write(dump_line(header.to_dict()).encode("utf-8"))


def start_results(
    path: str | os.PathLike[str], samples: Sequence[EvalSample], header: OutcomesHeader, *, resume: bool
) -> dict[str, QueryOutcome]:
    """Make `path` ready for this run's appends; returns the successful outcomes to keep, by id.

    A missing or empty file, or any file of ours with ``resume=False``, is replaced by one holding
    `header`. With `resume`, every outcome must follow a header matching `header` (``top_k``, kind
    of target, ``run_name``) and answer one of `samples` with the same query; only then is a torn
    last line cut off. Errors are ``ValueError("<path>:<line>: …")`` and leave the file untouched.
    """
    name = os.fspath(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        _write_header(path, header)
        return {}
    kind = _kind(data)
    if kind == "foreign":
        raise ValueError(
            f"{name}:1: not a fastrag results file (it does not start with a "
            f'{{"{_HEADER_KEY}": …}} header line); it was left as it is: pass another results_path'
        )
    if kind == "empty" or not resume:
        _write_header(path, header)
        return {}

    end = data.rfind(b"\n") + 1  # what follows the last newline is a write cut short
    torn_line = data.count(b"\n") + 1 if data[end:].strip() else None
    queries = {sample.id: sample.query for sample in samples}
    done: dict[str, QueryOutcome] = {}
    current: OutcomesHeader | None = None
    lines = read_outcome_lines(path)
    while True:
        try:
            number, record = next(lines)
        except StopIteration:
            break
        except ValueError as error:
            # read_jsonl names the line as "<path>:<line>:"; failing on the torn line is expected.
            if torn_line is not None and str(error).startswith(f"{name}:{torn_line}:"):
                break
            raise
        if number == torn_line:  # parseable, but unterminated: dropped like any torn line
            break
        if isinstance(record, OutcomesHeader):
            different = record.differences(header)
            if different is not None:
                raise ValueError(
                    f"{name}:{number}: written with {different[0]}, this run asks for {different[1]}; "
                    "use a new results_path or resume=False"
                )
            current = record
            continue
        outcome = record
        if current is None:
            raise ValueError(
                f"{name}:{number}: no header line says which top_k and target this outcome was run with "
                "(a file from an older fastrag?); use a new results_path or resume=False"
            )
        expected = queries.get(outcome.sample_id)
        if expected is None:
            raise ValueError(
                f"{name}:{number}: outcome for sample id {outcome.sample_id!r}, which is not "
                f"among 'samples'; pass resume=False to start over or another 'results_path'"
            )
        if outcome.query != expected:
            raise ValueError(
                f"{name}:{number}: sample {outcome.sample_id!r} was run with query "
                f"{outcome.query!r}, not {expected!r}; pass resume=False to start over"
            )
        if outcome.ok:  # a recorded failure is not kept: the sample runs again
            done[outcome.sample_id] = outcome
    del lines  # closes the file of a reader stopped early
    if torn_line is not None:
        os.truncate(path, end)
    if current is None:  # only a torn header (or blank lines): start it with this run's header
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(dump_line(header.to_dict()))
    return done
