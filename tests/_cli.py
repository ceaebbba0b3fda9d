"""What the command-line tests share: one ``ef`` call with its captured output, and input files."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest

from ef.cli import main

__all__ = ["run", "write_files"]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``ef *argv`` in this process: its exit status, standard output and standard error."""
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def write_files(folder: Path, texts: Mapping[str, str]) -> dict[str, str]:
    """Each text written to ``folder / NAME.txt``; the paths by name."""
    paths = {}
    for name, text in texts.items():
        path = folder / f"{name}.txt"
        path.write_text(text)
        paths[name] = str(path)
    return paths
