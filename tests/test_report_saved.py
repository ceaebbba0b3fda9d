"""``ef report`` on a tampered comparison or benchmark JSON: refused naming the file, the field and the rule.

Each case edits what ``ef compare --format json`` or ``BenchmarkResult.to_json()`` wrote, the way a
hand or a cut download would; the page is not written.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ef.cli import main

pytest.importorskip("vl_convert")

QRELS = "q1 0 d1 1\nq2 0 d3 2\nq3 0 d5 1\n"
RUN_A = "q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\nq2 Q0 d3 1 1.0 a\nq3 Q0 d4 1 1.0 a\n"
RUN_B = "q1 Q0 d2 1 2.0 b\nq1 Q0 d1 2 1.0 b\nq2 Q0 d4 1 1.0 b\nq3 Q0 d5 1 1.0 b\n"


@pytest.fixture(scope="module")
def comparison(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("cmp")
    for name, text in (("qrels", QRELS), ("a.run", RUN_A), ("b.run", RUN_B)):
        (folder / name).write_text(text)
    out = folder / "cmp.json"
    argv = ["compare", str(folder / "qrels"), str(folder / "a.run"), str(folder / "b.run"), "-m", "P_1",
            "--format", "json", "--output", str(out), "--resamples", "200"]
    assert main(argv) == 0
    return out.read_text()


@pytest.fixture(scope="module")
def benchmark() -> str:
    from fastrag.benchmark import EvalSample, run_benchmark_sync
    from fastrag.benchmark.metrics import HitRate
    from fastrag.documents import Chunk

    class Echo:
        def retrieve(self, query: str, k: int) -> list[Chunk]:
            return [Chunk(f"p{query[-1]}" if query[-1] in "024" else "x", 0, "t")]

    samples = [EvalSample(f"q{i}", f"query {i}", [f"p{i}"]) for i in range(5)]
    result = run_benchmark_sync(Echo(), samples, [HitRate(k=1, key="source_uri")], show_progress=False)
    return result.to_json()


def _render(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str) -> tuple[int, str, Path]:
    saved = tmp_path / "saved.json"
    saved.write_text(text)
    out = tmp_path / "out.html"
    status = main(["report", str(saved), "--html", str(out)])
    err = capsys.readouterr().err
    assert out.exists() == (status == 0)
    return status, err, saved


def _edit(text: str, change: Callable[[dict[str, Any]], None]) -> str:
    data = json.loads(text)
    change(data)
    return json.dumps(data)


def _first(data: dict[str, Any]) -> dict[str, Any]:
    return data["comparisons"][0]  # type: ignore[no-any-return]


def test_the_untouched_files_render(capsys: pytest.CaptureFixture[str], tmp_path: Path, comparison: str,
                                    benchmark: str) -> None:
    assert _render(capsys, tmp_path, comparison)[:2] == (0, "")
    assert _render(capsys, tmp_path, benchmark)[:2] == (0, "")


def _swap_ci(c: dict[str, Any]) -> None:
    c["ci_low"], c["ci_high"] = 0.75, -0.25


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: _first(d).update(p_value=float("nan")),
     "field comparisons[0].p_value must be a finite number (got nan)"),
    (lambda d: _first(d).update(p_adjusted=float("nan")),
     "field comparisons[0].p_adjusted must be a finite number (got nan)"),
    (lambda d: _first(d).pop("wins"), "field comparisons[0].wins is missing"),
    (lambda d: _first(d).update(p_value=7.5), "field comparisons[0].p_value must lie in [0, 1] (got 7.5)"),
    (lambda d: _swap_ci(_first(d)), "field comparisons[0].ci_low must not exceed ci_high (-0.25) (got 0.75)"),
    (lambda d: _first(d).update(per_query_diff=_first(d)["per_query_diff"][:1]),
     "field comparisons[0].per_query_diff must hold one value per entry of 'queries' (3 queries) (got an array of 1)"),
    (lambda d: d["per_query"]["b"].update(P_1=[1.0]),
     "field per_query.b.P_1 must hold one value per entry of 'queries' (3 queries) (got an array of 1)"),
    (lambda d: _first(d).update(wins=3),
     "field comparisons[0].wins + ties + losses must be n_queries (3) (got 3+0+2)"),
    (lambda d: d.update(queries=["q1", "q1", "q3"]),
     "field queries must not repeat a query id (got an array of 3)"),
])
def test_a_tampered_comparison_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, comparison: str,
    change: Callable[[dict[str, Any]], None], message: str,
) -> None:
    status, err, saved = _render(capsys, tmp_path, _edit(comparison, change))
    assert (status, err) == (2, f"ef report: error: {saved}: {message}\n")


def test_duplicate_keys_are_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path, comparison: str) -> None:
    text = comparison.replace('"alpha": 0.05', '"alpha": 0.05, "alpha": 0.5', 1)
    assert text != comparison
    status, err, saved = _render(capsys, tmp_path, text)
    assert (status, err) == (2, f"ef report: error: {saved}: key 'alpha' appears twice in one object\n")


def test_a_benchmark_cut_from_five_samples_to_one_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, benchmark: str
) -> None:
    status, err, saved = _render(capsys, tmp_path, _edit(benchmark, lambda d: d.update(samples=d["samples"][:1])))
    assert (status, err) == (
        2, f"ef report: error: {saved}: field summary.hit_rate@1[source_uri].count + missing must be the number "
           "of samples (1) (got 5+0)\n"
    )


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["summary"]["hit_rate@1[source_uri]"].update(mean=float("nan")),
     "field summary.hit_rate@1[source_uri].mean must be a finite number (got nan)"),
    (lambda d: d["samples"][1]["scores"].update({"hit_rate@1[source_uri]": None}),
     "field summary.hit_rate@1[source_uri].count must be the number of samples with a hit_rate@1[source_uri] "
     "score (4) (got 5)"),
    (lambda d: d["summary"]["hit_rate@1[source_uri]"].update(ci_low=0.9, ci_high=0.1),
     "field summary.hit_rate@1[source_uri].ci_low must not exceed ci_high (0.1) (got 0.9)"),
    (lambda d: d["samples"][1].update(sample_id="q0"), "field samples[1].sample_id must not repeat an earlier "
     "sample's id (got 'q0')"),
])
def test_a_tampered_benchmark_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, benchmark: str,
    change: Callable[[dict[str, Any]], None], message: str,
) -> None:
    status, err, saved = _render(capsys, tmp_path, _edit(benchmark, change))
    assert (status, err) == (2, f"ef report: error: {saved}: {message}\n")
