"""Terminal output shared by ef and fastrag: progress bars on stderr and plain-text tables.

Progress bars are drawn for long work (encoding, indexing, retrieving, benchmarking) by tqdm.

On a terminal, tqdm draws the bar (rate, elapsed time and ETA) and leaves its final state. Off
a terminal (a log file, CI output) nothing is redrawn: no ``\\r`` lines, just one summary line
when the work ends. Nothing at all is written when ``enabled`` is false or when the environment
variable ``EF_NO_PROGRESS`` is set to anything but an empty string, ``0``, ``false``, ``no`` or
``off`` (so ``EF_NO_PROGRESS=0`` keeps the bars, as one would expect).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Never, TextIO, TypeVar

if TYPE_CHECKING:
    from tqdm import tqdm

__all__ = ["Progress", "format_table", "format_value", "progress", "progress_silenced"]

T = TypeVar("T")

_REDRAW_S = 0.1
_KEEP_BARS = frozenset({"", "0", "false", "no", "off"})
_LOG_FORMAT = "{desc}: {n_fmt}/{total_fmt} [{elapsed}, {rate_fmt}]"
_LOG_FORMAT_NO_TOTAL = "{desc}: {n_fmt} [{elapsed}, {rate_fmt}]"


def progress_silenced() -> bool:
    """Whether ``EF_NO_PROGRESS`` asks for no progress output.

    >>> import os
    >>> os.environ["EF_NO_PROGRESS"] = "0"; progress_silenced()
    False
    >>> os.environ["EF_NO_PROGRESS"] = "1"; progress_silenced()
    True
    >>> del os.environ["EF_NO_PROGRESS"]
    """
    return os.environ.get("EF_NO_PROGRESS", "").strip().lower() not in _KEEP_BARS


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream
        return False


class Progress:
    """A counter of done work, drawn by tqdm on a terminal; use as a context manager.

    >>> import io
    >>> out = io.StringIO()  # not a terminal: one line at the end, no redraws
    >>> with Progress(3, "demo", stream=out, enabled=True) as bar:
    ...     bar.update(3)
    >>> out.getvalue()  # doctest: +ELLIPSIS
    'demo: 3/3 [00:00, ...]\\n'
    """

    def __init__(
        self, total: int | None, desc: str, *, enabled: bool = True, stream: TextIO | None = None
    ) -> None:
        self.total = total
        self.desc = desc
        self.enabled = enabled and not progress_silenced()
        self.stream = stream if stream is not None else sys.stderr
        self.count = 0
        self._start = time.perf_counter()
        self._closed = False
        self._bar: tqdm[Never] | None = None
        if self.enabled and _is_terminal(self.stream):
            from tqdm import tqdm  # deferred: a table needs no tqdm, nor does a silent bar

            self._bar = tqdm(
                total=total, desc=desc, file=self.stream, leave=True, dynamic_ncols=True,
                mininterval=_REDRAW_S, unit=" items",
            )

    def update(self, n: int = 1) -> None:
        self.count += n
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._bar is not None:
            self._bar.close()
        elif self.enabled:
            from tqdm import tqdm

            line = tqdm.format_meter(
                # tqdm takes total=None for an open-ended count; its stubs say float only.
                self.count, self.total, time.perf_counter() - self._start,  # type: ignore[arg-type]
                prefix=self.desc, unit=" items",
                bar_format=_LOG_FORMAT if self.total is not None else _LOG_FORMAT_NO_TOTAL,
            )
            self.stream.write(line + "\n")
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


def format_value(value: object) -> str:
    """Floats with 4 decimals (trec_eval's precision), everything else as ``str``."""
    if isinstance(value, float):
        return f"{value:.4f}"
    return "-" if value is None else str(value)


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]], *, title: str | None = None) -> str:
    """Render a table: the first column left-aligned, the others right-aligned.

    >>> print(format_table(["metric", "@10"], [["ndcg", 0.5], ["recall", 1.0]]))
    metric     @10
    ------  ------
    ndcg    0.5000
    recall  1.0000
    """
    cells = [[format_value(v) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def line(values: Sequence[str]) -> str:
        parts = [values[0].ljust(widths[0])] + [v.rjust(w) for v, w in zip(values[1:], widths[1:], strict=True)]
        return "  ".join(parts).rstrip()

    out = [] if title is None else [title]
    out.append(line(list(headers)))
    out.append("  ".join("-" * w for w in widths))
    out.extend(line(row) for row in cells)
    return "\n".join(out)
