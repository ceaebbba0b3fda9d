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


def test_off_a_terminal_one_line_and_no_carriage_return(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EF_NO_PROGRESS", raising=False)
    out = draw(io.StringIO())
    assert "\r" not in out
    assert re.fullmatch(r"work: 4/4 \[00:00, [0-9.]+ items/s\]\n", out), out
    assert re.fullmatch(r"work: 4 \[00:00, [0-9.]+ items/s\]\n", draw(io.StringIO(), total=None))


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
    assert re.fullmatch(r"indexing \(bm25\): 2/2 \[00:00, [0-9.]+ items/s\]\n", err), err
    ingest({"d1": "one"}, show_progress=False)
    assert capsys.readouterr().err == ""
