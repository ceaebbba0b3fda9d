"""The Ragas bridge. SKELETON: being written (issue 2)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["as_ragas_dataset"]


def as_ragas_dataset(samples: Iterable[Mapping[str, Any]]) -> Any:
    raise NotImplementedError
