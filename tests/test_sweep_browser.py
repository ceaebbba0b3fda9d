"""The sweep report in headless Chromium: the three figures draw what the result holds, offline."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ef.datasets import demo_dataset
from ef.sweep import sweep
from ef.sweep._report import pareto_front

pytest.importorskip("altair")
from test_report_browser import Browser, browser_fixture  # the report tests' browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    yield from browser_fixture()


def test_the_sweep_report_draws_its_figures_from_the_results(browser: Browser, tmp_path: Path) -> None:
    result = sweep({"size": [6, 12, "whole"], "k1": [0.9, 1.2], "k": [10, 100]}, demo_dataset(), tmp_path / "s",
                   show_progress=False)
    opened = browser.open(result.to_html(tmp_path / "sweep.html"))
    assert opened.requests == [opened.url]  # nothing but the file itself
    assert [m for m in opened.console if m[0] in ("error", "pageerror")] == []
    drawn = opened.figures()
    assert set(drawn) == {"chunk_size", "at_k", "quality_latency"}
    assert all(marks > 20 for marks in drawn.values()), drawn
    rows = opened.data("chunk_size", "chunk_size")
    expected = sorted((c.label, c.metrics["ndcg@10"]) for c in result.cells)
    assert sorted((r["label"], r["value"]) for r in rows) == expected
    assert {(r["label"], r["low"], r["high"]) for r in rows} == {(c.label, c.ci_low, c.ci_high) for c in result.cells}
    front = pareto_front([(c.latency_ms, c.metrics["ndcg@10"]) for c in result.cells])
    line = opened.data("quality_latency", "pareto_front")
    assert [r["latency_ms"] for r in line] == [result.cells[i].latency_ms for i in front]
    table = opened.table("sweep")
    assert [row[2][1] for row in table] == [c.metrics["ndcg@10"] for c in result.cells]
    shot = opened.page.screenshot(path=str(tmp_path / "sweep.png"), full_page=True)
    assert len(shot) > 20_000  # a page of charts, not a blank one
