"""``ef report`` refuses flags its report kind would ignore (found by probing the CLI: ``--split``
without ``--dataset``, and ``--run``/``--qrels``/``--dataset`` on a fastrag benchmark, exited 0 as if
they had been used)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ef.cli import main

pytest.importorskip("altair")


def _benchmark(tmp_path: Path) -> Path:
    from fastrag.benchmark import EvalSample, run_benchmark_sync
    from fastrag.benchmark.metrics import HitRate
    from fastrag.documents import Chunk

    class Echo:
        def retrieve(self, query: str, k: int) -> list[Chunk]:
            return [Chunk(f"p{query[-1]}" if query[-1] in "024" else "x", 0, "t")]

    samples = [EvalSample(f"q{i}", f"query {i}", [f"p{i}"]) for i in range(5)]
    result = run_benchmark_sync(Echo(), samples, [HitRate(k=1, key="source_uri")], show_progress=False)
    saved = tmp_path / "bench.json"
    saved.write_text(result.to_json())
    return saved


def test_split_without_dataset_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    saved = _benchmark(tmp_path)
    page = tmp_path / "r.html"
    assert main(["report", str(saved), "--html", str(page), "--split", "dev"]) == 2
    assert capsys.readouterr() == (
        "", "ef report: error: --split needs --dataset DIR (the qrels split of that folder)\n"
    )
    assert not page.exists()


@pytest.mark.parametrize("flag", ["--run", "--qrels"])
def test_a_benchmark_refuses_rankings_flags(capsys: pytest.CaptureFixture[str], tmp_path: Path, flag: str) -> None:
    saved = _benchmark(tmp_path)
    other = tmp_path / "x.txt"
    other.write_text("q1 0 d1 1\n")
    page = tmp_path / "r.html"
    assert main(["report", str(saved), "--html", str(page), flag, str(other)]) == 2
    assert capsys.readouterr() == ("", (
        f"ef report: error: {flag}: {saved} is a fastrag benchmark, whose page shows no rankings (--run, --qrels "
        "and --dataset are for an evaluation or a comparison)\n"
    ))
    assert main(["report", str(saved), "--html", str(page)]) == 0  # without it, the page
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_a_trec_run_given_as_the_report_is_named_as_one(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    run = tmp_path / "bm25.trec"
    run.write_text("q1 Q0 d1 1 4.5 bm25\nq1 Q0 d2 2 3.5 bm25\n")
    assert main(["report", str(run), "--html", str(tmp_path / "page.html")]) == 2
    assert capsys.readouterr().err == (  # was "bm25.trec:1: malformed JSON: Extra data (column 4)"
        f"ef report: error: RESULT.json {run} looks like a TREC run (6 columns: 'q1 Q0 d1 1 4.5 bm25'): ef report "
        "renders a saved JSON report; score the run first (ef trec-eval --json FILE QRELS RUN, or ef compare QRELS "
        "RUN... --html PAGE)\n"
    )
    assert not (tmp_path / "page.html").exists()
    broken = tmp_path / "broken.json"  # not a run: the JSON reader's own message stands
    broken.write_text('{"metrics": \n')
    assert main(["report", str(broken), "--html", str(tmp_path / "page.html")]) == 2
    assert capsys.readouterr().err.startswith(f"ef report: error: {broken}:")
