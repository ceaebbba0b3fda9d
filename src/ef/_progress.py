"""A small progress bar on stderr, for long work (encoding, indexing, retrieving, benchmarking).

ef draws its own instead of depending on tqdm: one line, redrawn at most ten times a second,
cleared when done, and nothing at all when ``enabled`` is false or ``EF_NO_PROGRESS`` is set.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Iterator
from types import TracebackType
from typing import TextIO, TypeVar

__all__ = ["Progress", "progress"]

T = TypeVar("T")

_REDRAW_S = 0.1


class Progress:
    """A counter drawn as ``desc: 40/300 [13%] 2.1s 19.0/s``; use as a context manager.

    >>> import io
    >>> out = io.StringIO()
    >>> with Progress(3, "demo", stream=out, enabled=True) as bar:
    ...     bar.update(3)
    >>> out.getvalue().splitlines()[-1].strip()
    'demo: 3/3 [100%]'
    """

    def __init__(
        self, total: int | None, desc: str, *, enabled: bool = True, stream: TextIO | None = None
    ) -> None:
        self.total = total
        self.desc = desc
        self.enabled = enabled and not os.environ.get("EF_NO_PROGRESS")
        self.stream = stream if stream is not None else sys.stderr
        self.count = 0
        # Redraws with "\r" only make sense on a terminal; a log gets the final line alone.
        self._live = self.enabled and self.stream.isatty()
        self._start = time.perf_counter()
        self._last_draw = 0.0

    def update(self, n: int = 1) -> None:
        self.count += n
        if not self._live:
            return
        now = time.perf_counter()
        if now - self._last_draw >= _REDRAW_S or (self.total is not None and self.count >= self.total):
            self._last_draw = now
            self._draw(now)

    def _draw(self, now: float) -> None:
        elapsed = now - self._start
        rate = self.count / elapsed if elapsed > 0 else 0.0
        done = f"{self.count}" if self.total is None else f"{self.count}/{self.total}"
        pct = "" if not self.total else f" [{100 * self.count // self.total}%]"
        self.stream.write(f"\r{self.desc}: {done}{pct} {elapsed:.1f}s {rate:.1f}/s ")
        self.stream.flush()

    def close(self) -> None:
        if self.enabled:
            done = f"{self.count}" if self.total is None else f"{self.count}/{self.total}"
            finished = " [100%]" if self.total and self.count >= self.total else ""
            self.stream.write(f"\r{self.desc}: {done}{finished}\n")
            self.stream.flush()

    def __enter__(self) -> Progress:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def progress(
    items: Iterable[T], *, total: int | None = None, desc: str, enabled: bool = True
) -> Iterator[T]:
    """Yield ``items`` while drawing a :class:`Progress` bar."""
    if total is None and hasattr(items, "__len__"):
        total = len(items)  # type: ignore[arg-type]
    with Progress(total, desc, enabled=enabled) as bar:
        for item in items:
            yield item
            bar.update()
