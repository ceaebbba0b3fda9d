"""Regenerate the README's screenshots of the demo's evaluation and comparison reports.

    .venv/bin/python docs/img/make_screenshots.py [FOLDER]

Needs the dev extras (playwright) and Debian's chromium; writes docs/img/evaluation-report.png
and docs/img/comparison-report.png (or into FOLDER): the top of each page, downscaled and
palette-quantised so each stays well under 200 KB. tests/test_report_browser.py runs it into a
scratch folder, so it keeps working as the pages change.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from PIL import Image
from playwright.sync_api import sync_playwright

from ef.compare import compare
from ef.datasets import demo_dataset
from ef.evaluation import evaluate_retrieval, read_beir
from ef.report import comparison_report, evaluation_report
from ef.source_manager import ingest
from ef.trec import read_run

HERE = Path(__file__).resolve().parent
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def main(out: Path = HERE) -> list[Path]:
    """Write the two screenshots into `out`; returns their paths."""
    folder = Path(tempfile.mkdtemp())
    corpus, queries, qrels = read_beir(demo_dataset())
    index = ingest(corpus, show_progress=False)
    passages = ingest(corpus, segment_size=16, show_progress=False)
    bm25 = evaluate_retrieval(index, qrels, queries, k_values=(1, 3, 5, 10, 100), run_path=folder / "bm25.trec")
    evaluate_retrieval(passages, qrels, queries, k_values=(10,), limit=50, run_path=folder / "passages.trec")
    runs = {"bm25": read_run(folder / "bm25.trec"), "bm25-passages": read_run(folder / "passages.trec")}
    pages = {
        "evaluation-report": evaluation_report(
            bm25, run=runs["bm25"], qrels=qrels, queries=queries, corpus=corpus, title="Retrieval evaluation: demo"
        ),
        "comparison-report": comparison_report(
            compare(runs, qrels, ["ndcg@10", "recall@10", "mrr@10"], baseline="bm25"),
            runs=runs, qrels=qrels, queries=queries, corpus=corpus, title="Comparison: bm25-passages vs bm25",
        ),
    }
    written = []
    with sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            tempfile.mkdtemp(), executable_path="/usr/bin/chromium", headless=True, args=ARGS,
            viewport={"width": 1100, "height": 1500},
        )
        context.route(
            "**/*", lambda route: route.continue_() if route.request.url.startswith("file:") else route.abort()
        )
        for name, page in pages.items():
            path = page.to_html(folder / f"{name}.html")
            tab = context.new_page()
            tab.goto(path.as_uri())
            tab.evaluate("() => window.efReady")
            tab.screenshot(path=str(folder / f"{name}.png"))
            image = Image.open(folder / f"{name}.png").convert("RGB")
            image = image.resize((880, image.height * 880 // image.width), Image.Resampling.LANCZOS)
            image.quantize(colors=256, method=Image.Quantize.MAXCOVERAGE).save(out / f"{name}.png", optimize=True)
            print(out / f"{name}.png", (out / f"{name}.png").stat().st_size, "bytes")
            written.append(out / f"{name}.png")
        context.close()
    return written


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else HERE)
