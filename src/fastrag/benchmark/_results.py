"""The results file of ``run_benchmark``: recognising it, resuming from it, starting it.

A results file is ours when it starts with the header line ``{"fastrag_outcomes": …}`` (the
key ``dump_line`` writes first), or, as written before headers existed, with an outcome line.
Anything else — a config file, a samples file passed by mistake — is refused before a byte of it
changes; a torn last line (the write an interruption cut short) is dropped only from a file that
is ours, and only after every complete line was checked against this run.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import os
import stat
from collections.abc import Sequence
from typing import TextIO

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no lock, as before
    fcntl = None  # type: ignore[assignment]

from ef.io._atomic import atomic_writer
from fastrag.benchmark._jsonl import dump_line
from fastrag.benchmark.samples import _HEADER_KEY, EvalSample, OutcomesHeader, QueryOutcome, read_outcome_lines

__all__ = ["default_run_name", "open_results", "start_results"]

_HEADER_START = json.dumps({_HEADER_KEY: 0})[: len(_HEADER_KEY) + 3].encode("utf-8")  # b'{"fastrag_outcomes":'
_SCALARS = (str, int, float, bool, type(None))
_MAX_FIELD_CHARS = 80


def default_run_name(target: object) -> str:
    """What identifies `target` when the caller names no run: its class, plus what it exposes.

    The class's qualified name; an ``embedder`` or ``fingerprint`` string attribute of the target
    or of its fields (an ef index has both); and the short scalar fields (``k1=1.2``) of a
    dataclass target, or of any other target without a ``fingerprint`` the ``__init__``
    parameters it keeps as attributes of the same name. Settings held elsewhere (inside a client
    object, under another name) are not seen: name such runs (``run_name=``) to tell them apart.

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
        fields = [(field.name, getattr(target, field.name, None)) for field in dataclasses.fields(target)]
    elif isinstance(getattr(target, "fingerprint", None), str):
        fields = []  # an ef index names its corpus and model itself (below)
    else:
        fields = _init_settings(target)
    for name, value in fields:
        if isinstance(value, _SCALARS) and len(repr(value)) <= _MAX_FIELD_CHARS:
            parts.append(f"{name}={value!r}")
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


def _init_settings(target: object) -> list[tuple[str, object]]:
    """A plain class's settings: the parameters of its ``__init__`` kept as attributes of the same
    name (``BM25(k1=0.9)`` setting ``self.k1``), as scikit-learn's ``get_params`` reads them.
    Other attributes (a call counter, a cache) are state, not settings, and are left out."""
    try:
        parameters = inspect.signature(type(target).__init__).parameters
    except (TypeError, ValueError):  # a builtin's __init__
        return []
    attributes = getattr(target, "__dict__", {})
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    return [
        (name, attributes[name])
        for name, parameter in list(parameters.items())[1:]  # after self
        if parameter.kind in kinds and name in attributes and not name.startswith("_")
        and name not in ("embedder", "fingerprint")
    ]


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


def open_results(path: str | os.PathLike[str]) -> TextIO:
    """`path` opened for this run's appends (created if missing), locked against other runs.

    Only a regular file will do: a FIFO would block the run until something reads it, a device
    or a directory cannot hold outcomes. The lock (``flock``, where the system has it) is held
    until the stream is closed; a second run on the same file, in this process or another, is
    refused rather than interleaving its lines with this one's. Errors name `path`.
    """
    name = os.fspath(path)
    try:
        info: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        info = None
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise ValueError(f"{name}: results_path must be a regular file (it is {_file_kind(info.st_mode)})")
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):  # replaced between the two looks
            raise ValueError(f"{name}: results_path must be a regular file (it is {_file_kind(mode)})")
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise ValueError(
                    f"{name}: another run is writing this results file (it holds its lock); wait for it to end "
                    "or pass another results_path"
                ) from None
        return os.fdopen(fd, "a", encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise


def _file_kind(mode: int) -> str:
    for test, kind in ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
                       (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return kind
    return "not a file"


def _write_header(path: str | os.PathLike[str], header: OutcomesHeader, stream: TextIO | None) -> None:
    """Start `path` over with `header`: in place through the locked `stream` (replacing the file
    would leave the lock on the old one), else atomically."""
    if stream is not None:
        stream.flush()
        os.ftruncate(stream.fileno(), 0)
        stream.write(dump_line(header.to_dict()))
        stream.flush()
        return
    with atomic_writer(path) as out:
        out.write(dump_line(header.to_dict()).encode("utf-8"))


def start_results(
    path: str | os.PathLike[str],
    samples: Sequence[EvalSample],
    header: OutcomesHeader,
    *,
    resume: bool,
    stream: TextIO | None = None,
) -> dict[str, QueryOutcome]:
    """Make `path` ready for this run's appends; returns the successful outcomes to keep, by id.

    A missing or empty file, or any file of ours with ``resume=False``, is replaced by one holding
    `header`. With `resume`, every outcome must follow a header matching `header` (``top_k``, kind
    of target, ``run_name``) and answer one of `samples` with the same query; only then is a torn
    last line cut off. Errors are ``ValueError("<path>:<line>: …")`` and leave the file untouched.
    `stream` is the run's :func:`open_results` stream: the file is then changed through it, in place.
    """
    name = os.fspath(path)
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        _write_header(path, header, stream)
        return {}
    kind = _kind(data)
    if kind == "foreign":
        raise ValueError(
            f"{name}:1: not a fastrag results file (it does not start with a "
            f'{{"{_HEADER_KEY}": …}} header line); it was left as it is: pass another results_path'
        )
    if kind == "empty" or not resume:
        _write_header(path, header, stream)
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
        if stream is not None:
            stream.flush()
            os.ftruncate(stream.fileno(), end)
        else:
            os.truncate(path, end)
    if current is None:  # only a torn header (or blank lines): start it with this run's header
        if stream is not None:
            stream.write(dump_line(header.to_dict()))
            stream.flush()
        else:
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(dump_line(header.to_dict()))
    return done
