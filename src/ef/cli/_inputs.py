"""The files a command reads, checked before any work: an error names the argument and the path.

Without this, a missing file surfaced wherever it was first opened, as Python words it
(``[Errno 2] No such file or directory: 'qrels.txt'``), naming no argument, and sometimes after
other inputs were read.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["check_inputs", "check_qrels_not_run", "check_split", "flag_named", "qrels_file"]


def check_inputs(**arguments: str | Sequence[str | None] | None) -> None:
    """Refuse an input that is not there or is a folder; keyword: the argument as usage shows it
    (``RUN``, ``--qrels``), value: its path or paths. ``-`` (standard input) and ``None`` pass,
    and so does anything that exists and is no folder (a pipe, ``<(zcat run.gz)``, ``/dev/stdin``).

    >>> check_inputs(QRELS="-", RUN=["/no/such/run.trec"])
    Traceback (most recent call last):
    ...
    FileNotFoundError: RUN /no/such/run.trec: no such file
    >>> check_inputs(RUN=["/"])
    Traceback (most recent call last):
    ...
    IsADirectoryError: RUN /: is a directory, not a file
    """
    for name, value in arguments.items():
        for path in [value] if value is None or isinstance(value, str) else value:
            if path is None or path == "-":
                continue
            if os.path.isdir(path):
                raise IsADirectoryError(f"{name} {path}: is a directory, not a file")
            if not os.path.exists(path):
                raise FileNotFoundError(f"{name} {path}: no such file")


def check_qrels_not_run(flag: str, path: str | None, usage: str) -> None:
    """Refuse qrels whose first line has a TREC run's six columns: the arguments were given in the
    wrong order, or QRELS was left out (``ef compare A.trec B.trec`` read A as the qrels and then
    said "give at least 2 runs"). Only a regular file is looked at (a pipe is read once, later).

    >>> import os, tempfile
    >>> run = os.path.join(tempfile.mkdtemp(), "bm25.trec")
    >>> with open(run, "w") as f: _ = f.write("q1 Q0 d1 1 2.5 bm25\\n")
    >>> check_qrels_not_run("QRELS", run, "ef compare takes QRELS first, then two or more RUNs")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: QRELS .../bm25.trec looks like a TREC run (6 columns: 'q1 Q0 d1 1 2.5 bm25'): ef compare takes ...
    """
    if path is None or path == "-" or not os.path.isfile(path):
        return
    try:
        with open(path, "rb") as raw:
            head = raw.read(4)
        if head == b"PK\x03\x04":  # a BEIR dataset's zip (ef compare reads it as a dataset)
            return
        opener: Any = open
        if head[:2] == b"\x1f\x8b":
            import gzip  # only then: ef trec-eval's start-up does without it

            opener = gzip.open
        with opener(path, "rb") as stream:
            for number, line in enumerate(stream):
                words = line.split()
                if words and not line.startswith(b"#"):
                    break
                if number > 100:
                    return
            else:
                return
    except (OSError, EOFError):  # the reader says what is wrong with the file
        return
    if len(words) == 6:
        shown = b" ".join(words).decode("utf-8", "replace")
        raise ValueError(f"{flag} {path} looks like a TREC run (6 columns: {shown!r}): {usage}")


def flag_named(error: ValueError, keyword: str, flag: str) -> ValueError:
    """`error` saying `flag`, the argument the user typed, where the library's message opens with its
    own keyword (``'method' must be one of ...``: the Python API's name, which the command line has not);
    `error` itself when it opens otherwise. Each command names the one keyword it passes a flag to.

    >>> flag_named(ValueError("'method' must be one of 'rrf' (got 'x')"), "method", "--method")
    ValueError("--method must be one of 'rrf' (got 'x')")
    >>> flag_named(ValueError("'norm' must be ..."), "method", "--method")
    ValueError("'norm' must be ...")
    """
    text = str(error)
    opening = f"{keyword!r} "
    if not text.startswith(opening):
        return error
    return ValueError(f"{flag} {text[len(opening):]}")


def qrels_file(dataset: Path, split: str) -> str:
    """``qrels/SPLIT.tsv``; for split ``test`` also the flat ``qrels.tsv`` that write_beir writes."""
    nested = f"qrels/{split}.tsv"

    def present(name: str) -> bool:
        return any((dataset / f"{name}{gz}").exists() for gz in ("", ".gz"))

    return "qrels.tsv" if split == "test" and not present(nested) and present("qrels.tsv") else nested


def check_split(dataset: Path, split: str) -> None:
    """Fail before any work, naming --split and the splits there are, when a BEIR folder lacks the
    split's qrels (read_beir would say so only as a file it cannot find)."""
    if not dataset.is_dir():
        return  # read_beir names the folder
    name = qrels_file(dataset, split)
    if any((dataset / f"{name}{gz}").exists() for gz in ("", ".gz")):
        return
    there = sorted({p.name.removesuffix(".gz").removesuffix(".tsv") for p in (dataset / "qrels").glob("*.tsv*")})
    if (dataset / "qrels.tsv").exists() or (dataset / "qrels.tsv.gz").exists():
        there = sorted({*there, "test"})
    raise FileNotFoundError(
        f"--split {split}: {dataset} has no qrels/{split}.tsv (its splits: {', '.join(there) or 'none'})"
    )
