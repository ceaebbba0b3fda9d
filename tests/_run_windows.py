"""A spy on the window reader of ``evaluate_run``: which run files were scored streaming, and their queries."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

import ef.evaluation._run as run_module


def spy_windows(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[bytes]]]:
    """Every window the streaming reader reads from now on, as ``(file, its query ids)``."""
    seen: list[tuple[str, list[bytes]]] = []
    real = run_module.iter_run_columns

    def spy(path: Any, window: int | None = None, *, span: tuple[int, int] | None = None) -> Iterator[Any]:
        for columns in real(path, window, span=span):
            seen.append((os.fspath(path), sorted(columns.segments)))
            yield columns

    monkeypatch.setattr(run_module, "iter_run_columns", spy)
    return seen
