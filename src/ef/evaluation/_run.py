"""Bulk run evaluation. SKELETON: being written (issue 3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["RunEvalReport", "evaluate_run"]


@dataclass(frozen=True)
class RunEvalReport:
    pass


def evaluate_run(*args: Any, **kwargs: Any) -> RunEvalReport:
    raise NotImplementedError
