"""End to end: a pytest project in a temporary folder keeps SciFact BM25's quality as a test with
the ef.testing plugin, and ``ef gate`` gates the same files (issue 33's proof).

- an unchanged run passes (pytest and ``ef gate``: exit 0);
- a degraded run (the top 10 of half its queries shuffled) fails (exit 1);
- the same degraded run judged on 20 queries is inconclusive, stating the detectable difference
  (``ef gate``: exit 3);
- qrels that differ from the baseline's (one grade changed) are refused (``ef gate``: exit 2).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path
from xml.etree import ElementTree

import pytest

from ef.cli import main
from ef.gate import qrels_hash

SCIFACT = Path("/work/shared/data/beir/scifact")
MEASURES = ["ndcg@10", "mrr@10", "recall@100"]

pytestmark = pytest.mark.skipif(not (SCIFACT / "corpus.jsonl").is_file(), reason="SciFact is not in /work/shared")


def _degraded(run: dict[str, dict[str, float]], share: float, seed: int) -> dict[str, dict[str, float]]:
    """The run with the top 10 of about `share` of its queries in a random order (scores kept by rank)."""
    rng = random.Random(seed)
    out = {}
    for query_id in sorted(run):
        ranked = sorted(run[query_id].items(), key=lambda item: (-item[1], item[0]))
        top = [doc for doc, _ in ranked[:10]]
        scores = [score for _, score in ranked[:10]]
        if rng.random() < share:
            rng.shuffle(top)
        out[query_id] = {**dict(ranked[10:]), **dict(zip(top, scores, strict=True))}
    return out


@pytest.fixture(scope="session")
def scifact(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """SciFact's BM25 run (built once per test session), a degraded run and three qrels files."""
    from ef.evaluation import read_beir
    from ef.source_manager import ingest
    from ef.trec import write_qrels, write_run

    folder = tmp_path_factory.mktemp("scifact")
    corpus, queries, qrels = read_beir(SCIFACT, qrels=str(SCIFACT / "qrels" / "test.tsv"))
    index = ingest(corpus, show_progress=False)
    ids = sorted(qrels)
    hits = index.search_many([queries[q] for q in ids], limit=100, show_progress=False)
    run = {q: {h.segment.source_id: h.score for h in ranked} for q, ranked in zip(ids, hits, strict=True)}
    files = {name: str(folder / name) for name in ("bm25.run", "degraded.run", "qrels20.txt", "other.txt")}
    write_run(files["bm25.run"], run)
    write_run(files["degraded.run"], _degraded(run, 0.5, seed=0))
    write_qrels(files["qrels20.txt"], {q: qrels[q] for q in ids[:20]})
    first = ids[0]
    changed = {**qrels, first: {d: g + 1 for d, g in qrels[first].items()}}  # one query's grades raised
    write_qrels(files["other.txt"], changed)
    files["qrels"] = str(SCIFACT / "qrels" / "test.tsv")
    return files


_PROJECT_TEST = '''
import json
import os

import pytest

from ef.testing import assert_no_regression

FILES = json.loads(os.environ["EF_FILES"])
SYSTEM = os.environ["EF_SYSTEM"]  # the run the system under test produces today
MEASURES = {measures!r}


def test_quality(ef_baseline):
    ef_baseline.check(SYSTEM, "baselines/bm25.json", margin="2%", qrels=FILES["qrels"], measures=MEASURES)


def test_quality_on_20_queries(ef_baseline):
    ef_baseline.check(SYSTEM, "baselines/bm25-20.json", margin="2%", qrels=FILES["qrels20.txt"], measures=MEASURES)


def test_refuses_other_qrels():
    with pytest.raises(ValueError, match="were judged with different qrels"):
        assert_no_regression(SYSTEM, "baselines/bm25.json", qrels=FILES["other.txt"])
'''


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    (project / "tests").mkdir(parents=True)
    (project / "pytest.ini").write_text("[pytest]\naddopts = -p ef.testing -p no:cacheprovider\n")
    (project / "tests" / "test_quality.py").write_text(textwrap.dedent(_PROJECT_TEST.format(measures=MEASURES)))
    return project


def _pytest(project: Path, files: dict[str, str], system: str, *flags: str) -> tuple[int, str, dict[str, str]]:
    """Run the project's tests; returns the status, the output and each test's outcome."""
    report = project / "junit.xml"
    env = {**os.environ, "EF_FILES": json.dumps(files), "EF_SYSTEM": system}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", f"--junitxml={report}", *flags], cwd=project, env=env,
        capture_output=True, text=True, timeout=300, check=False,
    )
    outcomes = {}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        failure = case.find("failure")
        outcomes[case.get("name", "")] = "passed" if failure is None else failure.text or ""
    return done.returncode, done.stdout + done.stderr, outcomes


@pytest.mark.slow  # three pytest runs in subprocesses
def test_a_pytest_project_keeps_scifact_bm25_as_a_baseline(tmp_path: Path, scifact: dict[str, str]) -> None:
    project = _project(tmp_path)
    # 1. record the baselines from today's system (the BM25 run)
    status, output, _ = _pytest(project, scifact, scifact["bm25.run"], "--ef-update-baseline", "-k", "quality")
    assert status == 0, output
    saved = json.loads((project / "baselines" / "bm25.json").read_text())
    assert saved["schema"] == "ef.result/1"
    assert saved["qrels_hash"] == qrels_hash(scifact["qrels"])
    assert [m["name"] for m in saved["measures"]] == MEASURES
    assert saved["n_queries"] == 300
    assert saved["metrics"]["ndcg@10"] == pytest.approx(0.6791, abs=1e-4)  # BM25 on SciFact (BEIR: 0.665-0.69)
    assert json.loads((project / "baselines" / "bm25-20.json").read_text())["n_queries"] == 20
    # 2. unchanged: everything passes; other qrels are refused
    status, output, outcomes = _pytest(project, scifact, scifact["bm25.run"])
    assert (status, set(outcomes.values())) == (0, {"passed"}), output
    # 3. degraded (the top 10 of half the queries shuffled): a fail on 300 queries, inconclusive on 20
    status, output, outcomes = _pytest(project, scifact, scifact["degraded.run"])
    assert status == 1, output
    assert outcomes["test_refuses_other_qrels"] == "passed"
    assert "AssertionError: retrieval quality regressed against baselines/bm25.json" in outcomes["test_quality"]
    assert "FAIL ndcg@10: candidate 0.5065 vs baseline 0.6791 (-0.1726)" in outcomes["test_quality"]
    assert "PASS recall@100" in outcomes["test_quality"]  # a shuffled top 10 keeps the top 100
    twenty = outcomes["test_quality_on_20_queries"]
    assert "GateInconclusive: cannot show the result is no worse than baselines/bm25-20.json" in twenty
    assert "INCONCLUSIVE ndcg@10: candidate " in twenty
    assert "with 20 queries the gate detects a difference of " in twenty


def test_ef_gate_exit_codes_on_scifact(
    tmp_path: Path, scifact: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    from ef.gate import save_result

    baseline = save_result(scifact["bm25.run"], tmp_path / "bm25.json", qrels=scifact["qrels"], measures=MEASURES)
    assert main(["gate", str(baseline), scifact["bm25.run"], "--qrels", scifact["qrels"]]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "outcome: PASS (exit 0)"
    summary = tmp_path / "summary.md"
    assert main(["gate", str(baseline), scifact["degraded.run"], "--qrels", scifact["qrels"],
                 "--markdown", str(summary)]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[-1] == "outcome: FAIL (exit 1)"
    assert summary.read_text().startswith("### ❌ ef gate: FAIL\n")
    base20 = save_result(scifact["bm25.run"], tmp_path / "bm25-20.json", qrels=scifact["qrels20.txt"],
                         measures=MEASURES)
    assert main(["gate", str(base20), scifact["degraded.run"], "--qrels", scifact["qrels20.txt"]]) == 3
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if line.startswith("INCONCLUSIVE ndcg@10"))
    assert "with 20 queries the gate detects a difference of" in line
    assert "queries would settle a difference of" in line
    assert main(["gate", str(baseline), scifact["bm25.run"], "--qrels", scifact["other.txt"]]) == 2
    assert capsys.readouterr().err == (
        f"ef gate: error: the baseline ({baseline}) and the candidate ({scifact['bm25.run']}) were judged with "
        f"different qrels: {qrels_hash(scifact['qrels'])} against {qrels_hash(scifact['other.txt'])}\n"
    )

