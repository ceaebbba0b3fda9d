"""What a collection needs from an index (the :class:`Index` protocol), and how a damaged one is reported.

A leaf: the indexes (:mod:`~ef.source_manager._bm25`, :mod:`~ef.source_manager._dense`,
:mod:`~ef.source_manager._ann`) and the embedder names that build them
(:mod:`~ef.source_manager._embedders`) import it, and it imports none of them.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from ef.source_manager._topk import Ranking

__all__ = ["DAMAGED", "Index"]

DAMAGED = "the index is damaged: delete the directory and build it again"


class Index(Protocol):
    """What a collection needs from an index: grow, search, save."""

    def __len__(self) -> int: ...

    def add(self, texts: Sequence[str], *, show_progress: bool) -> None: ...

    def build(self) -> None: ...

    def search_many(self, queries: Sequence[str], *, limit: int, show_progress: bool) -> list[Ranking]: ...

    def save(self, directory: Path) -> None: ...
