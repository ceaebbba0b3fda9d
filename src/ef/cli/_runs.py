"""Naming the runs given on the command line: ``PATH`` (named by its stem) or ``NAME=PATH``.

``ef compare``, ``ef report`` and ``ef fuse`` read their ``RUN`` arguments through here. ``-`` is
standard input, named ``stdin`` (or ``NAME=-``); it can be read once, so one ``RUN`` at most is ``-``.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

__all__ = ["STDIN", "STDIN_NAME", "check_one_stdin", "is_pipe", "run_groups", "run_names"]

STDIN = "-"
STDIN_NAME = "stdin"  # what a RUN given as '-' is called in tables and reports


def is_pipe(path: str | None) -> bool:
    """``-``, or a path that exists and is no regular file (``<(zcat run.gz)``, a FIFO): it can be
    read once, so a command that reads an input twice reads such a one into memory first.

    >>> is_pipe("-"), is_pipe("/dev/null"), is_pipe(__file__), is_pipe("/no/such/file"), is_pipe(None)
    (True, True, False, False, False)
    """
    return path == STDIN or (path is not None and os.path.exists(path) and not os.path.isfile(path))


def check_one_stdin(**arguments: str | Sequence[str | None] | None) -> None:
    """Refuse standard input (``-``) given to two arguments (keyword: the argument's name as
    usage shows it; value: its path or paths): a pipe can be read only once.

    >>> check_one_stdin(QRELS="-", RUN=["a.trec", "-"])
    Traceback (most recent call last):
    ...
    ValueError: QRELS and RUN are both '-': standard input can be only one of them
    >>> check_one_stdin(QRELS="q.txt", RUN=["-", "b.trec"])
    """
    taken = [
        name for name, value in arguments.items()
        for path in ([value] if value is None or isinstance(value, str) else value) if path == STDIN
    ]
    if len(taken) == 2 and taken[0] == taken[1]:
        raise ValueError(f"two {taken[0]}s are '-': standard input can be only one of them")
    if len(taken) > 1:
        raise ValueError(f"{' and '.join(taken)} are both '-': standard input can be only one of them")


def _stem(path: str) -> str:
    if path == STDIN:
        return STDIN_NAME
    name = Path(path).name
    if name.endswith(".gz"):
        name = name[:-3]
    return Path(name).stem or name


def run_names(arguments: list[str]) -> dict[str, str]:
    """``RUN`` arguments -> {name: path}; an existing file is a path even if it holds ``=``.

    >>> run_names(["runs/bm25.trec", "stem=runs/other.trec.gz"])
    {'bm25': 'runs/bm25.trec', 'stem': 'runs/other.trec.gz'}
    """
    out: dict[str, str] = {}
    for name, paths in run_groups(arguments).items():
        if len(paths) > 1:
            raise ValueError(f"two runs are named {name!r} ({paths[0]} and {paths[1]}): name them with NAME=PATH")
        out[name] = paths[0]
    return out


def run_groups(arguments: list[str]) -> dict[str, list[str]]:
    """``RUN`` arguments -> {name: [path, ...]}: a NAME given with ``NAME=PATH`` several times
    is one system's seeds or folds; two files with the same stem are an error, and so is ``-``
    (standard input, named ``stdin``) given twice.

    >>> run_groups(["runs/bm25.trec", "dense=s1.trec", "dense=s2.trec", "-"])
    {'bm25': ['runs/bm25.trec'], 'dense': ['s1.trec', 's2.trec'], 'stdin': ['-']}
    """
    check_one_stdin(RUN=[a.split("=", 1)[1] if "=" in a and not os.path.exists(a) else a for a in arguments])
    out: dict[str, list[str]] = {}
    named: set[str] = set()
    for argument in arguments:
        if "=" in argument and not os.path.exists(argument):
            name, path = argument.split("=", 1)
            if not name or not path:
                raise ValueError(f"run {argument!r}: expected PATH or NAME=PATH")
            explicit = True
        else:
            name, path = _stem(argument), argument
            explicit = False
        if name in out and not (explicit and name in named):
            raise ValueError(f"two runs are named {name!r} ({out[name][0]} and {path}): name them with NAME=PATH")
        if name in out and path in out[name]:
            raise ValueError(f"run {name!r} is given {path} twice")
        if explicit:
            named.add(name)
        out.setdefault(name, []).append(path)
    return out
