"""Issue 35: the fastrag benchmark report shows the worst answers, their contexts and claims marked."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("altair")

from ef.report import benchmark_report
from ef.report._page import Section, Table, Text
from fastrag.benchmark import BenchmarkResult, EvalSample, QueryOutcome
from fastrag.benchmark.metrics import ClaimF1, Faithfulness, Metric, TokenF1
from fastrag.benchmark.summary import DistributionSummary
from fastrag.documents import Chunk

SAMPLES = [
    EvalSample("good", "Capital of France?", reference_answer="Paris is the capital of France."),
    EvalSample("bad", "Who wrote 1984?", reference_answer="George Orwell wrote it. It appeared in 1949."),
    EvalSample("half", "Boiling point?", reference_answer="Water boils at 100 degrees."),
]
OUTCOMES = (
    QueryOutcome("good", "Capital of France?", [Chunk("wiki/paris", 0, "Paris is the capital of France.")],
                 answer="Paris is the capital of France."),
    QueryOutcome("bad", "Who wrote 1984?", [Chunk("wiki/1984", 0, "Nineteen Eighty-Four appeared in 1949."),
                                            Chunk("wiki/huxley", 3, "Aldous Huxley wrote Brave New World.")],
                 answer="Aldous Huxley wrote it. It appeared in 1949."),
    QueryOutcome("half", "Boiling point?", [Chunk("wiki/water", 1, "x" * 700)],
                 answer="Water boils at 100 degrees. Ice is cold."),
)


def _result(metrics: list[Metric]) -> BenchmarkResult:
    scores = {
        m.name: tuple(asyncio.run(m.score(s, o)) for s, o in zip(SAMPLES, OUTCOMES, strict=True)) for m in metrics
    }
    return BenchmarkResult(
        summary={name: DistributionSummary.from_scores(values) for name, values in scores.items()},
        outcomes=OUTCOMES, scores=scores, higher_is_better={m.name: m.higher_is_better for m in metrics},
    )


def _texts(table: Table) -> list[list[str]]:
    return [[cell.text for cell in row] for row in table.rows]


def test_the_worst_answers_with_claims_marked() -> None:
    result = _result([TokenF1(), ClaimF1(), Faithfulness()])
    # claim_f1: good 1; bad: reference claims (george orwell wrote) no, (appeared 1949) yes -> R 1/2;
    # answer claims (aldous huxley wrote) no, (appeared 1949) yes -> P 1/2: F1 1/2; half: R 1, P 1/2 -> 2/3.
    assert list(result.scores["claim_f1"]) == [1.0, 0.5, pytest.approx(2 / 3, abs=1e-15)]
    page = benchmark_report(result, samples=SAMPLES, worst=2)
    section = next(s for s in page.sections if s.id == "worst-answers-section")
    assert section.title == "Worst answers by claim_f1"
    intro, bad, half = section.blocks
    assert isinstance(intro, Text)
    assert intro.text.startswith("The 2 answered samples with the lowest claim_f1.")
    assert isinstance(bad, Section)
    assert isinstance(half, Section)
    assert (bad.title, half.title) == ("bad: claim_f1 0.5000", "half: claim_f1 0.6667")
    fields, claims = bad.blocks
    assert isinstance(fields, Table)
    assert isinstance(claims, Table)
    assert _texts(fields) == [
        ["query", "Who wrote 1984?"],
        ["answer", "Aldous Huxley wrote it. It appeared in 1949."],
        ["reference", "George Orwell wrote it. It appeared in 1949."],
        ["context 1 (wiki/1984)", "Nineteen Eighty-Four appeared in 1949."],
        ["context 2 (wiki/huxley)", "Aldous Huxley wrote Brave New World."],
    ]
    assert _texts(claims) == [
        ["answer", "Aldous Huxley wrote it.", "not supported", "contexts 2"],
        ["answer", "It appeared in 1949.", "supported", "contexts 1"],
        ["reference", "George Orwell wrote it.", "not supported", "none"],
        ["reference", "It appeared in 1949.", "supported", "contexts 1"],
    ]
    assert [[cell.css for cell in row[2:]] for row in claims.rows] == [
        ["nonrel", "rel"], ["rel", "rel"], ["nonrel", "nonrel"], ["rel", "rel"]
    ]
    long_context = half.blocks[0]
    assert isinstance(long_context, Table)
    assert long_context.rows[3][1].text == "x" * 600 + " …"  # a long context is cut for the page
    html = page.html()
    assert '<td class="nonrel">not supported</td>' in html
    assert "Aldous Huxley wrote it." in html
    # The sections around it are the usual ones.
    assert [s.title for s in page.sections][-2:] == ["Worst answers by claim_f1", "Failed samples (0)"]


def test_without_samples_the_reference_is_unknown(tmp_path: Path) -> None:
    result = _result([TokenF1()])
    page = benchmark_report(result, worst=1)
    section = next(s for s in page.sections if s.id == "worst-answers-section")
    assert section.title == "Worst answers by token_f1"
    assert section.blocks[0].text.endswith("Pass samples= to show the reference answers.")  # type: ignore[union-attr]
    (only,) = section.blocks[1:]
    fields, claims = only.blocks  # type: ignore[union-attr]
    assert _texts(fields)[2] == ["reference", "-"]  # type: ignore[arg-type]
    assert [row[2] for row in _texts(claims)] == ["-", "-"]  # type: ignore[arg-type]  # the two answer claims
    # BenchmarkResult.to_html passes the samples through.
    target = result.to_html(tmp_path / "b.html", samples={"bad": "George Orwell wrote it."})
    assert "George Orwell wrote it." in target.read_text(encoding="utf-8")


def test_no_section_without_answers_or_when_turned_off() -> None:
    result = _result([TokenF1()])
    assert all(s.id != "worst-answers-section" for s in benchmark_report(result, worst=0).sections)
    bare = BenchmarkResult({"token_f1": DistributionSummary.from_scores([None])}, (QueryOutcome("q", "?"),),
                           {"token_f1": (None,)})
    assert all(s.id != "worst-answers-section" for s in benchmark_report(bare).sections)
    with pytest.raises(ValueError, match=r"^'worst' must be a non-negative integer \(got -1\)$"):
        benchmark_report(result, worst=-1)
    with pytest.raises(TypeError, match=r"^'samples'\[0\] must be an EvalSample"):
        benchmark_report(result, samples=[3])
