"""A spy on the streaming reader of ``evaluate_run``: which run files were scored streaming, and their queries."""

from __future__ import annotations

import os
from typing import Any

import pytest

from ef.evaluation import _hits


def spy_windows(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[bytes]]]:
    """Every run file streamed from now on, as ``(file, its query ids)`` (read before it is scored)."""
    seen: list[tuple[str, list[bytes]]] = []
    real = _hits._rank_file

    def spy(path: str, judged: Any, max_docs: int) -> Any:
        seen.append((os.fspath(path), sorted(q.encode() for q in _hits.read_run(path))))
        return real(path, judged, max_docs)

    monkeypatch.setattr(_hits, "_rank_file", spy)
    return seen
