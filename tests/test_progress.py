"""Progress bars: tqdm on a terminal, one line in a log, EF_NO_PROGRESS and show_progress obeyed."""

from __future__ import annotations

import io
import re

import pytest

from ef._console import Progress, progress
from ef.source_manager import ingest


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def draw(stream: io.StringIO, *, total: int | None = 4, enabled: bool = True) -> str:
    with Progress(total, "work", stream=stream, enabled=enabled) as bar:
        for _ in range(4):
            bar.update()
    return stream.getvalue()


def test_off_a_terminal_a_start_line_a_summary_line_and_no_carriage_return(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EF_NO_PROGRESS", raising=False)
    out = draw(io.StringIO())
    assert "\r" not in out
    assert re.fullmatch(r"work: 0/4 started\nwork: 4/4 \[00:00, [0-9.]+ items/s\]\n", out), out
    assert re.fullmatch(r"work: started\nwork: 4 \[00:00, [0-9.]+ items/s\]\n", draw(io.StringIO(), total=None))


class Clock:
    """A fake clock: each call returns the next of the given times."""

    def __init__(self, *times: float) -> None:
        self.times = list(times)

    def __call__(self) -> float:
        return self.times.pop(0)


def test_off_a_terminal_a_line_with_count_and_eta_at_most_every_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EF_NO_PROGRESS", raising=False)
    out = io.StringIO()
    # Started at 0; updates at 10, 31, 50, 61, 75, 120 (the last finishes the work); closed at 130.
    clock = Clock(0.0, 10.0, 31.0, 50.0, 61.0, 75.0, 120.0, 130.0)
    with Progress(10, "encoding", stream=out, interval=30, clock=clock) as bar:
        for n in (1, 2, 1, 2, 1, 3):
            bar.update(n)
    assert clock.times == []
    assert out.getvalue().splitlines() == [
        "encoding: 0/10 started",
        # 3 done in 31 s: 0.097/s, so the 7 left take 72 s.
        "encoding: 3/10 (30%) [00:31 elapsed, ETA 01:12, 0.10 items/s]",
        # 30 s after the last line, not after the start: 50 s gave none.
        "encoding: 6/10 (60%) [01:01 elapsed, ETA 00:40, 0.10 items/s]",
        # No line for the update that finishes the work: the summary says it.
        "encoding: 10/10 [02:10, 0.08 items/s]",
    ]


def test_off_a_terminal_an_open_count_an_hour_long_and_nothing_done_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EF_NO_PROGRESS", raising=False)
    out = io.StringIO()
    with Progress(None, "fetch", stream=out, interval=0.5, clock=Clock(0.0, 3725.0, 3726.0)) as bar:
        bar.update(7450)
    assert out.getvalue().splitlines() == [
        "fetch: started",
        "fetch: 7450 [1:02:05 elapsed, 2.00 items/s]",
        "fetch: 7450 [1:02:06, 2.00 items/s]",
    ]
    out = io.StringIO()
    with Progress(5, "slow", stream=out, interval=1, clock=Clock(0.0, 40.0, 40.0)) as bar:
        bar.update(0)  # nothing done in 40 s: no rate, so no ETA
    assert out.getvalue().splitlines() == [
        "slow: 0/5 started",
        "slow: 0/5 (0%) [00:40 elapsed, ETA ?, 0.00 items/s]",
        "slow: 0/5 [00:40, 0.00 items/s]",
    ]


@pytest.mark.parametrize(("interval", "error"), [
    (0, "ValueError: 'interval' must be a finite number of seconds > 0 (got 0)"),
    (float("inf"), "ValueError: 'interval' must be a finite number of seconds > 0 (got inf)"),
    ("30", "TypeError: 'interval' must be a finite number of seconds > 0 (got '30')"),
])
def test_a_bad_interval_is_refused_by_name(interval: object, error: str) -> None:
    with pytest.raises((TypeError, ValueError)) as info:
        Progress(3, "work", stream=io.StringIO(), interval=interval)  # type: ignore[arg-type]
    assert f"{type(info.value).__name__}: {info.value}" == error


def test_on_a_terminal_the_interval_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EF_NO_PROGRESS", raising=False)
    out = Terminal()
    with Progress(4, "work", stream=out, interval=1e-9) as bar:
        for _ in range(4):
            bar.update()
    assert "started" not in out.getvalue()
    assert "elapsed" not in out.getvalue()
    assert re.search(r"work: 100%\|#+\| 4/4 \[", out.getvalue())


def test_on_a_terminal_tqdm_draws_percent_and_eta(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EF_NO_PROGRESS", raising=False)
    out = draw(Terminal())
    frames = out.split("\r")
    assert frames[0] == ""  # every frame starts at the line's beginning
    assert frames[1].startswith("work:   0%|")
    assert "<?" in frames[1]  # the ETA column: unknown before any item is done
    assert re.match(r"work: 100%\|#+\| 4/4 \[00:00<00:00, +[0-9.]+ items/s\]\n$", frames[-1]), frames[-1]


@pytest.mark.parametrize(("value", "silent"), [("1", True), ("yes", True), ("0", False), ("", False),
                                                ("false", False), ("off", False)])
def test_ef_no_progress(monkeypatch: pytest.MonkeyPatch, value: str, silent: bool) -> None:
    monkeypatch.setenv("EF_NO_PROGRESS", value)
    assert (draw(Terminal()) == "") is silent
    assert (draw(io.StringIO()) == "") is silent


def test_enabled_false_draws_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EF_NO_PROGRESS", raising=False)
    assert draw(Terminal(), enabled=False) == ""
    assert list(progress([1, 2], desc="x", enabled=False)) == [1, 2]


def test_show_progress_of_ingest_reaches_stderr_and_false_keeps_it_quiet(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("EF_NO_PROGRESS", raising=False)
    ingest({"d1": "one", "d2": "two"}, show_progress=True)
    err = capsys.readouterr().err
    assert re.fullmatch(r"indexing \(bm25\): 0/2 started\n"
                        r"indexing \(bm25\): 2/2 \[00:00, [0-9.]+ items/s\]\n", err), err
    ingest({"d1": "one"}, show_progress=False)
    assert capsys.readouterr().err == ""
