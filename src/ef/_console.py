"""Terminal output shared by ef and fastrag: progress bars on stderr and plain-text tables.

Progress bars are drawn for long work (encoding, indexing, retrieving, benchmarking) by tqdm.

On a terminal, tqdm draws the bar (rate, elapsed time and ETA) and leaves its final state. Off
a terminal (a log file, CI output) nothing is redrawn: no ``\\r``, but whole lines a log keeps,
one when a stage starts, one at the first update after each 30 s with the count, the share done
and the ETA (so a five-minute encode is not silent in a CI log), and one summary line when the
work ends. Nothing at all is written when ``enabled`` is false or when the environment
variable ``EF_NO_PROGRESS`` is set to anything but an empty string, ``0``, ``false``, ``no`` or
``off`` (so ``EF_NO_PROGRESS=0`` keeps the bars, as one would expect).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Never, TextIO, TypeVar

from ef._validate import check_positive_int, check_positive_number

if TYPE_CHECKING:
    from tqdm import tqdm

__all__ = ["LOG_INTERVAL_S", "Progress", "format_table", "format_value", "progress", "progress_silenced"]

T = TypeVar("T")

_REDRAW_S = 0.1
_KEEP_BARS = frozenset({"", "0", "false", "no", "off"})

LOG_INTERVAL_S = 30.0
"""Off a terminal, the most seconds between two progress lines while the work advances."""


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

    Off a terminal it writes a line when it starts, a line at the first :meth:`update` after
    every `interval` seconds (count, share done, elapsed time, ETA and rate) and a summary line
    when it closes; `clock` (seconds, :func:`time.monotonic` by default) times them.

    >>> import io
    >>> out = io.StringIO()  # not a terminal: whole lines, no redraws
    >>> with Progress(3, "demo", stream=out, enabled=True) as bar:
    ...     bar.update(3)
    >>> print(out.getvalue(), end="")  # doctest: +ELLIPSIS
    demo: 0/3 started
    demo: 3/3 [00:00, ...]
    """

    def __init__(
        self,
        total: int | None,
        desc: str,
        *,
        enabled: bool = True,
        stream: TextIO | None = None,
        interval: float = LOG_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.total = total
        self.desc = desc
        self.enabled = enabled and not progress_silenced()
        self.stream = stream if stream is not None else sys.stderr
        self.count = 0
        self.interval = check_positive_number(interval, "interval", what="a finite number of seconds > 0")
        self._clock = clock
        self._start = clock()
        self._last_line = self._start
        self._closed = False
        self._bar: tqdm[Never] | None = None
        if self.enabled and _is_terminal(self.stream):
            from tqdm import tqdm  # deferred: a table needs no tqdm, nor does a silent bar

            self._bar = tqdm(
                total=total, desc=desc, file=self.stream, leave=True, dynamic_ncols=True,
                mininterval=_REDRAW_S, unit=" items",
            )
        elif self.enabled:
            self._write(f"{desc}: started" if total is None else f"{desc}: 0/{total} started")

    def update(self, n: int = 1) -> None:
        self.count += n
        if self._bar is not None:
            self._bar.update(n)
        elif self.enabled and not self._closed:
            now = self._clock()
            # The summary line says the last count: no line for an update that finishes the work.
            if now - self._last_line >= self.interval and (self.total is None or self.count < self.total):
                self._last_line = now
                self._write(self._status(now - self._start))

    def _status(self, elapsed: float, *, final: bool = False) -> str:
        """A log's line: ``desc: done/total (share) [elapsed elapsed, ETA left, rate]`` while the
        work goes on, ``desc: done/total [elapsed, rate]`` at its end (tqdm's summary line)."""
        rate = self.count / elapsed if elapsed > 0 else None
        speed = "? items/s" if rate is None else f"{rate:.2f} items/s"
        done = str(self.count) if self.total is None else f"{self.count}/{self.total}"
        if final:
            return f"{self.desc}: {done} [{_duration(elapsed)}, {speed}]"
        if self.total is None:
            return f"{self.desc}: {done} [{_duration(elapsed)} elapsed, {speed}]"
        share = f"{100 * self.count / self.total:.0f}%" if self.total > 0 else "?"
        eta = _duration((self.total - self.count) / rate) if rate else "?"
        return f"{self.desc}: {done} ({share}) [{_duration(elapsed)} elapsed, ETA {eta}, {speed}]"

    def _write(self, line: str) -> None:
        # One write per line: a log fed by several threads keeps whole lines.
        self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self._bar is not None:
            self._bar.close()
        elif self.enabled:
            self._write(self._status(self._clock() - self._start, final=True))

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


def _duration(seconds: float) -> str:
    """``MM:SS``, or ``H:MM:SS`` from an hour on (tqdm's form, as on a terminal).

    >>> _duration(75.4), _duration(3725.0)
    ('01:15', '1:02:05')
    """
    whole = int(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


def format_value(value: object) -> str:
    """Floats with 4 decimals (trec_eval's precision), everything else as ``str``."""
    if isinstance(value, float):
        return f"{value:.4f}"
    return "-" if value is None else str(value)


def format_table(
    headers: Sequence[str], rows: Sequence[Sequence[object]], *, title: str | None = None, left: int = 1
) -> str:
    """Render a table: the first `left` columns (names) left-aligned, the others (numbers) right-aligned.

    >>> print(format_table(["metric", "@10"], [["ndcg", 0.5], ["recall", 1.0]]))
    metric     @10
    ------  ------
    ndcg    0.5000
    recall  1.0000
    >>> print(format_table(["system", "vs", "diff"], [["bm25", "dense", "+0.0340"]], left=2))
    system  vs        diff
    ------  -----  -------
    bm25    dense  +0.0340
    """
    left = check_positive_int(left, "left")
    cells = [[format_value(v) for v in row] for row in rows]
    widths = [len(h) for h in headers]
    for row in cells:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def line(values: Sequence[str]) -> str:
        parts = [v.ljust(w) if i < left else v.rjust(w) for i, (v, w) in enumerate(zip(values, widths, strict=True))]
        return "  ".join(parts).rstrip()

    out = [] if title is None else [title]
    out.append(line(list(headers)))
    out.append("  ".join("-" * w for w in widths))
    out.extend(line(row) for row in cells)
    return "\n".join(out)
