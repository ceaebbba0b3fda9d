"""docs/*.md: the examples run as written and print what the pages show.

Each page's ```pycon blocks run as doctests in one namespace, in page order, in a scratch folder
whose ``../shared`` is the shared data (as from the repository root, where the pages' paths start);
a ```python block without output runs in that namespace after them. Commands run in this process
through ``ef.cli.main`` (a process each would cost a second of start-up), and their output is
compared with the page's, line for line.

Left out, and why:

- coming-from.md: tests/test_coming_from.py runs it; rag-and-beir.md: tests/test_rag.py (test_doc_*)
  and tests/test_ragas.py run its examples; trec-eval.md's ``ef.measures`` block:
  tests/test_measures_registry.py.
- the dense model (sentence-transformers and torch; minutes to encode SciFact on 2 cores):
  ingest-and-eval.md's ``--embedder st:all-MiniLM-L6-v2``, fusion.md's SciFact script and its
  ``ef fuse bm25.trec minilm.trec`` verdict, sweep.md's ``--rerank minilm`` / ``--embedder hybrid``
  commands, its sweep.toml and ``sweep()`` grids (dense and hybrid cells) and its 48-cell proof sweep.
- Ray and FAISS: all of scale.md (a cluster, an ANN index and benchmarks of minutes), and sweep.md's
  ``--engine ray``.
- an LLM: rag-and-beir.md's ``evaluate_ragas_repeated(..., llm=my_llm)``.
- data or network this machine lacks: datasets.md's ``trec-dl-2019`` and ``msmarco-passage`` lines
  and ``ef datasets fetch`` (the one command that goes online).
- placeholders a reader replaces (``DATASET``, ``qrels bm25.trec dense.trec``, ``RESULT.json``):
  ingest-and-eval.md's ``ef eval DATASET_DIR --split dev ...``, the CLI synopsis of compare.md,
  report.md's ``ef compare qrels ...``, compare.md's fastrag ``compare_results`` (two results of
  fastrag.md's harness), datasets.md's ``ef compare --dataset ... dense.trec``.
- a pytest run in a subprocess: gate.md's ``ef_baseline`` example (tests/test_gate_e2e.py runs the
  plugin on the same SciFact runs) and its GitHub Actions workflow.
- timings: ``ef eval``'s stage seconds are compared by name only; fastrag.md's ``print(result)``
  shows latencies, so its blocks run and their ``assert`` lines are the check.
- figures through a browser or PNG: report.md's ``--png`` (its SVG export runs here).
"""

from __future__ import annotations

import doctest
import gzip
import json
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest

from _cli import run

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
SHARED = ROOT.parent / "shared"
SCIFACT = SHARED / "data" / "beir" / "scifact"
TREC_EVAL = SHARED / "data" / "trec_eval"

needs_shared = pytest.mark.skipif(
    not (SCIFACT / "corpus.jsonl").is_file() or not (TREC_EVAL / "qrels.test").is_file(),
    reason="the shared data (../shared) is not here",
)


def _blocks(page: str, kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", (DOCS / page).read_text(encoding="utf-8"), flags=re.S)


def _doctests(page: str, blocks: list[str]) -> tuple[doctest.TestResults, dict[str, Any]]:
    """The blocks as one doctest session: the results and the names they left."""
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    globs: dict[str, Any] = {"__name__": f"docs_{Path(page).stem}"}
    for i, block in enumerate(blocks):
        test = doctest.DocTestParser().get_doctest(block, globs, f"{page}[{i}]", str(DOCS / page), 0)
        runner.run(test, clear_globs=False)
        globs = test.globs  # DocTest copies its globals: carry them to the next block
    return runner.summarize(verbose=False), globs


def _commands(block: str) -> list[tuple[str, str]]:
    """A console block's ``$ command`` lines (``\\`` continues one) and the output shown under each."""
    commands = []
    for chunk in re.split(r"^\$ ", block, flags=re.M)[1:]:
        lines = chunk.split("\n")
        command, rest = lines[0], lines[1:]
        while command.endswith("\\"):
            command = command[:-1] + rest.pop(0)
        commands.append((command.split("  #")[0].strip(), "\n".join(rest)))
    return commands


def _ef(capsys: pytest.CaptureFixture[str], command: str) -> tuple[int, str, str]:
    """One ``ef ...`` command line of a page, in this process; ``| head -N`` keeps N lines."""
    head = re.search(r" \| head -(\d+)$", command)
    argv = shlex.split(command[: head.start()] if head else command)
    assert argv[0] == "ef", command
    status, out, err = run(capsys, *argv[1:])
    if head:
        out = "".join(out.splitlines(keepends=True)[: int(head.group(1))])
    return status, out, err


def _seconds(text: str) -> str:
    """``ef eval``'s stage table with its seconds left out (they are timings)."""
    return re.sub(r"(?m)^(\w[\w ]*?) +\d+\.\d\d$", r"\1 -", re.sub(r"(?m)^-+ +-+$", "-", text))


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scratch folder beside a ``shared`` that is the shared data: the pages' ``../shared`` paths hold."""
    (tmp_path / "shared").symlink_to(SHARED)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    monkeypatch.setenv("EF_NO_PROGRESS", "1")
    return work


# --- ingest-and-eval.md ---------------------------------------------------------------------------


@needs_shared
def test_ingest_and_eval(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = "ingest-and-eval.md"
    results, _ = _doctests(page, _blocks(page, "pycon"))
    assert results == doctest.TestResults(failed=0, attempted=22)
    assert (workdir / "scifact-bm25" / "manifest.json").is_file()
    assert (workdir / "kb-index" / "manifest.json").is_file()
    demo, scifact, error = _blocks(page, "console")
    ((command, shown),) = _commands(demo)
    status, out, err = _ef(capsys, command)
    assert (status, err) == (0, "")
    assert _seconds(out) == _seconds(shown)
    assert [line.split()[0] for line in out.split("stage", 1)[1].splitlines()[2:]] == [
        "read",
        "build",
        "retrieve",
        "score",
        "total",
    ]
    # the SciFact line's comment: NDCG@10 0.6791, Recall@100 0.9127 (the st: and DATASET_DIR lines: see above)
    command = _commands(scifact)[0][0]
    assert command == "ef eval ../shared/data/beir/scifact --ignore-identical-ids"
    status, out, _ = _ef(capsys, command)
    rows = {line.split()[0]: line.split()[1:] for line in out.splitlines()[3:8]}
    assert (status, rows["ndcg"][3], rows["recall"][4]) == (0, "0.6791", "0.9127")
    ((command, shown),) = _commands(error)
    assert _ef(capsys, command) == (2, "", shown)


# --- compare.md -----------------------------------------------------------------------------------


@needs_shared
def test_compare(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = "compare.md"
    seeds, worked = _blocks(page, "pycon")
    results, globs = _doctests(page, [seeds, worked])
    assert results == doctest.TestResults(failed=0, attempted=15)
    # the "Output" block calls each rendering of the worked example's report
    output = next(block for block in _blocks(page, "python") if "report.to_markdown()" in block)
    exec(compile(output, f"{page}[output]", "exec"), globs)
    assert (globs["comparison"].system, globs["comparison"].measure) == ("bm25-passages", "ndcg@10")
    assert len(globs["report"].per_query_diff(globs["comparison"])) == 27
    # the systems table: SciFact's BM25 runs, each written by ef eval --run-out as the page says
    for name, flags in (
        ("bm25", []),
        ("bm25-100w", ["--segment-size", "100"]),
        ("bm25-200w", ["--segment-size", "200"]),
    ):
        assert run(capsys, "eval", "../shared/data/beir/scifact", *flags, "--run-out", f"{name}.trec", "-q")[0] == 0
    ((command, shown),) = _commands(_blocks(page, "console")[0])
    assert _ef(capsys, command) == (0, shown, "")


# --- datasets.md ----------------------------------------------------------------------------------


@needs_shared
def test_datasets(
    workdir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "ef-home"
    (home / "datasets" / "beir").mkdir(parents=True)
    (home / "datasets" / "beir" / "scifact").symlink_to(SCIFACT)  # "a BEIR folder put there (links are fine)"
    monkeypatch.setenv("EF_HOME", str(home))
    page = "datasets.md"
    results, _ = _doctests(page, _blocks(page, "pycon"))
    assert results == doctest.TestResults(failed=0, attempted=11)
    # ef datasets list: what ef knows and where it is (trec-dl-2019, msmarco and fetch: see above)
    commands = [line.split("#")[0].strip() for line in _blocks(page, "sh")[0].splitlines()]
    assert "ef datasets list" in commands
    status, out, _ = _ef(capsys, "ef datasets list")
    row = next(line for line in out.splitlines() if line.startswith("beir/scifact "))
    assert (status, row.split("  ")[-1]) == (0, "ef cache folder (8.3 MB)"), row


# --- fastrag.md -----------------------------------------------------------------------------------


def test_fastrag(workdir: Path) -> None:
    # print(result) shows latencies, which change from run to run: the blocks' assert lines check them
    blocks = _blocks("fastrag.md", "python")
    assert len(blocks) == 2
    for i, block in enumerate(blocks):
        names: dict[str, Any] = {"__name__": f"docs_fastrag_{i}"}
        exec(compile(block, f"fastrag.md[{i}]", "exec"), names)
        assert names["result"].summary  # each block benchmarked something
    assert names["report"].metrics == {"mrr@1": 0.0, "mrr@2": 0.5}


# --- fusion.md ------------------------------------------------------------------------------------


def test_fusion(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = "fusion.md"
    (example,) = _blocks(page, "pycon")
    results, _ = _doctests(page, [example])
    assert results == doctest.TestResults(failed=0, attempted=15)
    commands = _commands(_blocks(page, "console")[0])
    assert len(commands) == 3
    for command, shown in commands:
        assert _ef(capsys, command) == (0, shown, ""), command
    assert (workdir / "fused.trec").read_text().startswith("q01 Q0 ")


# --- gate.md --------------------------------------------------------------------------------------


@needs_shared
def test_gate(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ef.evaluation import read_beir
    from ef.gate import save_result
    from ef.source_manager import ingest
    from ef.trec import write_qrels, write_run
    from test_gate_e2e import _degraded  # the candidate the page describes: that test's, seed 0

    corpus, queries, qrels = read_beir(SCIFACT)
    ids = sorted(qrels)
    hits = ingest(corpus).search_many([queries[q] for q in ids], limit=100)
    bm25 = {q: {h.segment.source_id: h.score for h in ranked} for q, ranked in zip(ids, hits, strict=True)}
    for folder in ("runs", "baselines", "data"):
        (workdir / folder).mkdir()
    (workdir / "data" / "scifact").symlink_to(SCIFACT)
    write_run("runs/bm25.trec", bm25)
    write_run("runs/candidate.trec", _degraded(bm25, 0.5, seed=0))
    shutil.copy(SCIFACT / "qrels" / "test.tsv", "qrels.txt")
    write_qrels("qrels20.txt", {q: qrels[q] for q in ids[:20]})
    page = "gate.md"
    saved = next(block for block in _blocks(page, "python") if "save_result" in block)
    names: dict[str, Any] = {"__name__": "docs_gate"}
    exec(compile(saved, f"{page}[save_result]", "exec"), names)
    # bm25-20.json: the same, judged on the first 20 queries
    save_result(
        names["evaluate_run"]("runs/bm25.trec", "qrels20.txt", ["ndcg@10", "mrr@10", "recall@100"]),
        "baselines/bm25-20.json",
        qrels="qrels20.txt",
    )
    shown = [_commands(block)[0] for block in _blocks(page, "text") if block.startswith("$ ef gate")]
    assert len(shown) == 2
    checker = doctest.OutputChecker()
    for (command, want), status in zip(shown, (1, 3), strict=True):
        code, out, _ = _ef(capsys, command)
        assert code == status, command
        assert checker.check_output(want, out, doctest.ELLIPSIS), out
        assert out.splitlines()[-1].endswith(f"(exit {status})")


# --- report.md ------------------------------------------------------------------------------------


@needs_shared
def test_report(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("vl_convert", reason="the report extra renders the figures")
    page = "report.md"
    results, _ = _doctests(page, _blocks(page, "pycon"))
    assert results == doctest.TestResults(failed=0, attempted=10)
    assert (workdir / "report.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert (workdir / "figures" / "evaluation-curves.svg").read_text(encoding="utf-8").startswith("<svg")
    # the trec-eval line of the sh block, on trec_eval's own test files (the other lines: see above)
    command = "ef trec-eval -q qrels.test results.test --html run.html"
    assert command in _blocks(page, "sh")[0]
    for name in ("qrels.test", "results.test"):
        shutil.copy(TREC_EVAL / name, name)
    status, out, _ = _ef(capsys, command)
    summary = "".join(line for line in out.splitlines(keepends=True) if "\tall\t" in line)
    assert (status, summary) == (0, (TREC_EVAL / "out.test").read_text())  # -q adds the per-query lines
    assert "<!DOCTYPE html>" in (workdir / "run.html").read_text(encoding="utf-8")[:100]


# --- sweep.md -------------------------------------------------------------------------------------


def test_sweep(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = "sweep.md"
    results, _ = _doctests(page, _blocks(page, "pycon"))
    assert results == doctest.TestResults(failed=0, attempted=7)
    # the BM25 lines of "ef eval with a pipeline", on the demo (DATASET omitted); the others need MiniLM
    lines = [line.split("#")[0].strip() for line in _blocks(page, "sh")[0].splitlines()]
    bm25 = [line.replace(" DATASET", "") for line in lines if "--rerank" not in line and "hybrid" not in line]
    assert bm25 == ["ef eval --segment-size 200 --overlap 40", "ef eval --bm25-k1 0.9 --bm25-b 0.4"]
    expected = {  # the demo's NDCG@10 under each pipeline, and the first stage's row the page promises
        bm25[0]: "ndcg       0.8519  0.7715  0.7984  0.8078  0.8153",
        bm25[1]: "ndcg       0.8333  0.7663  0.7933  0.8026  0.8101",
    }
    for command, ndcg in expected.items():
        status, out, _ = _ef(capsys, command)
        assert (status, out.splitlines()[4]) == (0, ndcg), command
        assert "\nfirst stage " in out


# --- trec-eval.md ---------------------------------------------------------------------------------


@needs_shared
def test_trec_eval(workdir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = "trec-eval.md"
    (example,) = [block for block in _blocks(page, "pycon") if "ef.measures" not in block]
    results, globs = _doctests(page, [example])
    assert results == doctest.TestResults(failed=0, attempted=8)
    (files,) = [block for block in _blocks(page, "python") if "write_run" in block]
    exec(compile(files, f"{page}[ef.trec]", "exec"), globs)  # its assert checks the round trip
    assert (workdir / "run.txt").read_text().startswith("q1 Q0 d1 1 0.9 my-system\n")
    # ef trec-eval on trec_eval's own test files: the first two lines print trec_eval's files byte for byte
    for name in ("qrels.test", "results.test", "qrels.rel_level"):
        shutil.copy(TREC_EVAL / name, name)
    lines = [line.split("  #")[0].strip() for line in _blocks(page, "sh")[0].splitlines()]
    assert len(lines) == 4
    for command, expected in zip(lines[:2], ("out.test", "out.test.aq"), strict=True):
        assert _ef(capsys, command) == (0, (TREC_EVAL / expected).read_text(), ""), command
    # the last two on graded qrels and the test run (gzipped for the third)
    shutil.copy("qrels.rel_level", "qrels")
    with open("results.test", "rb") as source, gzip.open("run.txt.gz", "wb") as target:
        shutil.copyfileobj(source, target)
    shutil.copy("results.test", "run.txt")
    assert _ef(capsys, lines[2]) == (
        0,
        (
            "recip_rank            \tall\t0.3509\n"
            "P_5                   \tall\t0.2667\n"
            "P_10                  \tall\t0.2333\n"
            "ndcg_cut_10           \tall\t0.2656\n"
        ),
        "",
    )
    status, out, _ = _ef(capsys, lines[3])
    assert (status, json.loads(out)["measures"]) == (0, {"map": 0.17737934675467723, "ndcg@10": 0.2656330381569622})
