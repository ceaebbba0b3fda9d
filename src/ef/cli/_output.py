"""Where the command line writes: ``-`` is standard output, any other path is written atomically.

Output paths are checked before any work (a typo must not cost an hour of indexing), and a
write error names the flag and the user's path.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Iterable, Mapping
from typing import BinaryIO

__all__ = [
    "STDOUT",
    "check_not_input",
    "check_output",
    "check_writable_folder",
    "copy_to_stdout",
    "distinct_outputs",
    "is_stdout",
    "one_stdout",
    "write",
    "write_all",
    "writes_to_stdout",
]

STDOUT = "-"


def is_stdout(path: str | None) -> bool:
    """Whether an output flag's value means standard output."""
    return path == STDOUT


def writes_to_stdout(path: str | None) -> bool:
    """Whether writing `path` writes to this process's standard output: ``-``, or a name for the
    same file or pipe (``/dev/stdout``, ``/dev/fd/1``, the file stdout is redirected to)."""
    if path is None:
        return False
    if is_stdout(path):
        return True
    try:
        return os.path.samestat(os.stat(path), os.fstat(sys.stdout.fileno()))
    except (OSError, ValueError, AttributeError):  # not there, or no real descriptor behind sys.stdout
        return False


def one_stdout(**flags: str | None) -> None:
    """Refuse two outputs sent to standard output at once (they would be interleaved).

    >>> one_stdout(json="-", run_out="-")
    Traceback (most recent call last):
    ...
    ValueError: --json and --run-out cannot both write to standard output ('-')
    """
    taken = [f"--{name.replace('_', '-')}" for name, value in flags.items() if is_stdout(value)]
    if len(taken) > 1:
        raise ValueError(f"{' and '.join(taken)} cannot both write to standard output ('-')")


def distinct_outputs(flags: Mapping[str, str | None]) -> None:
    """Refuse two output flags (flag -> path) that name one file or folder: the second written
    would replace the first, silently (``ef eval --json r.out --run-out r.out`` kept the JSON alone).
    Standard output (``-``) is :func:`one_stdout`'s to judge.

    >>> distinct_outputs({"--json": "r.out", "--run-out": "./r.out", "--html": None})
    Traceback (most recent call last):
    ...
    ValueError: --json and --run-out both name ./r.out: give each output its own path
    """
    seen: dict[str, str] = {}
    for flag, path in flags.items():
        if path is None or is_stdout(path):
            continue
        key = os.path.realpath(path)  # the same file by any spelling (or symlink)
        if key in seen:
            raise ValueError(f"{seen[key]} and {flag} both name {path}: give each output its own path")
        seen[key] = flag


def check_not_input(flag: str, path: str | None, inputs: Iterable[str | os.PathLike[str] | None]) -> None:
    """Refuse an output that is the same file as one of `inputs` (by path, symlink or hard link).

    Writing it would replace what the command reads, as ``gcc x.c -o x.c`` would; ``-`` and paths
    that do not exist yet are never the same file.

    >>> import tempfile, os
    >>> run = os.path.join(tempfile.mkdtemp(), "a.run"); open(run, "w").close()
    >>> check_not_input("--output", run, ["qrels.txt", run])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: --output ... is the same file as the input ...; it would be replaced: write elsewhere
    """
    if path is None or is_stdout(path):
        return
    try:
        written = os.stat(path)
    except (OSError, ValueError):  # not there yet (or a name no file can have): nothing to replace
        return
    for item in inputs:
        if item is None or is_stdout(os.fspath(item)):
            continue
        try:
            read = os.stat(item)
        except (OSError, ValueError):
            continue
        if os.path.samestat(written, read):
            raise ValueError(
                f"{flag} {path} is the same file as the input {os.fspath(item)}; it would be replaced: write elsewhere"
            )


def check_output(flag: str, path: str | None, inputs: Iterable[str | os.PathLike[str] | None] = ()) -> None:
    """Fail now, before any reading or indexing, if `path` cannot be written at the end, or is
    one of `inputs` (:func:`check_not_input`)."""
    if path is None or is_stdout(path):
        return
    check_not_input(flag, path, inputs)
    from pathlib import Path  # here: ef trec-eval starts ~5 ms sooner without it

    target = Path(path)
    parent = target.parent
    if target.is_dir():
        raise IsADirectoryError(f"{flag} {path} is a directory")
    if not parent.exists():
        raise FileNotFoundError(f"{flag} {path}: directory {parent} does not exist")
    if not parent.is_dir():
        raise NotADirectoryError(f"{flag} {path}: {parent} is not a directory")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise PermissionError(f"{flag} {path}: cannot create files in directory {parent}")


def check_writable_folder(flag: str, path: str) -> None:
    """Fail now if the folder `path` could not be created (or replaced) at the end.

    The nearest existing ancestor must be a writable folder; `path` itself, if it exists, must be
    a folder (its contents are the caller's to judge).
    """
    if is_stdout(path):
        raise ValueError(f"{flag} must be a folder, not standard output ('-')")
    from pathlib import Path

    target = Path(path)
    if target.exists() and not target.is_dir():
        raise NotADirectoryError(f"{flag} {path} exists and is not a directory")
    ancestor = target.absolute().parent
    while not ancestor.exists():
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise NotADirectoryError(f"{flag} {path}: {ancestor} is not a directory")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise PermissionError(f"{flag} {path}: cannot create files in directory {ancestor}")


def write(flag: str, path: str, data: bytes, what: str) -> None:
    """Write `data` to `path` (``-``: standard output); an error names `flag`, `path` and `what`.

    A closed pipe on standard output propagates as ``BrokenPipeError``, for the caller to end quietly.
    """
    if is_stdout(path):
        sys.stdout.flush()  # what was printed before comes first
        write_all(sys.stdout.buffer, data)
        sys.stdout.buffer.flush()
        return
    try:
        from ef.io import atomic_writer  # only a writer needs it (and its imports)

        with atomic_writer(path) as stream:
            stream.write(data)
    except BrokenPipeError:
        raise
    except OSError as error:
        raise OSError(f"{flag} {path}: cannot write the {what} ({error.strerror or error})") from error


def write_all(stream: BinaryIO | io.RawIOBase, data: bytes | memoryview) -> None:
    """Write every byte of `data` to `stream`.

    With ``PYTHONUNBUFFERED`` set (``python -u``, many container images) ``sys.stdout.buffer``
    is a raw file, whose ``write`` may take only part of the bytes and say so in its return value:
    to a pipe whose reader left, the first 64 KiB went and the rest was dropped without an error
    (``ef fuse -o - | head`` exited 0, not 141). Writing the rest raises ``BrokenPipeError`` there.

    >>> import io
    >>> class Slow(io.RawIOBase):  # takes at most 3 bytes a call, as a raw pipe may
    ...     def __init__(self): self.got = b""
    ...     def writable(self): return True
    ...     def write(self, b): self.got += bytes(b[:3]); return min(3, len(b))
    >>> out = Slow(); write_all(out, b"0123456789"); out.got
    b'0123456789'
    """
    view = memoryview(data).cast("B")
    while view:
        written = stream.write(view)
        if written is None:  # a non-blocking stream that took nothing: try again
            continue
        view = view[written:]


def copy_to_stdout(path: str) -> None:
    """Copy the file `path` to standard output."""
    sys.stdout.flush()
    with open(path, "rb") as source:
        while chunk := source.read(1 << 20):
            write_all(sys.stdout.buffer, chunk)
    sys.stdout.buffer.flush()
