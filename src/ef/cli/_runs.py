"""Naming the runs given on the command line: ``PATH`` (named by its stem) or ``NAME=PATH``.

``ef compare``, ``ef report`` and ``ef fuse`` read their ``RUN`` arguments through here.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["run_groups", "run_names"]


def _stem(path: str) -> str:
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
    is one system's seeds or folds; two files with the same stem are an error.

    >>> run_groups(["runs/bm25.trec", "dense=s1.trec", "dense=s2.trec"])
    {'bm25': ['runs/bm25.trec'], 'dense': ['s1.trec', 's2.trec']}
    """
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
