"""The files a command reads, checked before any work: an error names the argument and the path.

Without this, a missing file surfaced wherever it was first opened, as Python words it
(``[Errno 2] No such file or directory: 'qrels.txt'``), naming no argument, and sometimes after
other inputs were read.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

__all__ = ["check_inputs"]


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
