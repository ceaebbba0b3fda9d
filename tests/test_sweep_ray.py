"""``ef.sweep(..., engine="ray")`` / ``ef sweep --engine ray``: cells as Ray actor tasks on a local cluster.

The Ray sweeps run in subprocesses: each starts (and stops) its own local cluster through
``ray_session``, as ``ef eval --engine ray`` does, and one of them is killed with SIGKILL among its
cells. Their per-query scores and run files must be the local engine's, exactly.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from ef.datasets import demo_dataset
from ef.sweep import sweep

# Dense cells (the real all-MiniLM-L6-v2, offline) and BM25 cells over two chunkings: two actors,
# each encoding its chunking, reranking with its vectors, fusing: 24 cells.
_GRID = {"retriever": ["bm25", "dense", "hybrid"], "size": [8, "whole"], "rerank": ["none", "minilm"],
         "rerank_depth": 20, "k": [5, 10]}
_ENV = dict(os.environ, HF_HUB_OFFLINE="1", RAY_USAGE_STATS_ENABLED="0")

_KILLED_DRIVER = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    import ef.sweep._store as store
    from ef.datasets import demo_dataset
    from ef.sweep import sweep

    def descendants(pid):
        children = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    stat = Path(f"/proc/{entry}/stat").read_text()
                except OSError:
                    continue
                children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
        out, todo = [], [pid]
        while todo:
            current = todo.pop()
            out.append(current)
            todo.extend(children.get(current, []))
        return out[1:]

    real_save = store.SweepStore.save
    saved = []

    def save(self, pipeline, record, run):
        if len(saved) == int(sys.argv[2]):
            # The driver dies while it saves a cell: its run file is written, its record is not.
            from ef.io.trec import write_run
            write_run(self.run_path(pipeline), {q: d for q, d in run.items() if d}, run_id="half")
            Path(sys.argv[3]).write_text(" ".join(map(str, descendants(os.getpid()))))
            os.kill(os.getpid(), signal.SIGKILL)
        real_save(self, pipeline, record, run)
        saved.append(pipeline.id)

    store.SweepStore.save = save
    sweep({GRID}, demo_dataset(), sys.argv[1], show_progress=False, engine="ray")
""").replace("{GRID}", repr(_GRID))


def _cells(folder: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in sorted((folder / "cells").glob("*.json"))}


def _runs(folder: Path) -> dict[str, bytes]:
    return {p.stem: p.read_bytes() for p in sorted((folder / "runs").glob("*.trec"))}


def _reap(pids: list[int]) -> None:
    """Stop what is left of the killed driver's cluster: the processes it started.

    Ray's raylet and workers exit with their driver; its agent processes (RuntimeEnvAgent,
    DashboardAgent) outlive a SIGKILLed driver, so they are stopped here, by pid, once still Ray's.
    """
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and any(Path(f"/proc/{p}").exists() for p in pids):
        time.sleep(0.5)
    for pid in pids:
        with contextlib.suppress(OSError):
            if "ray" in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").lower():
                os.kill(pid, signal.SIGKILL)


def test_engine_and_ray_address_are_checked_before_any_work(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"^'engine' must be 'local' or 'ray' \(got 'spark'\)$"):
        sweep({"size": 8}, demo_dataset(), tmp_path, engine="spark")
    with pytest.raises(ValueError, match=r"^'ray_address' needs engine='ray'$"):
        sweep({"size": 8}, demo_dataset(), tmp_path, ray_address="127.0.0.1:6379")
    assert not tmp_path.joinpath("sweep.json").exists()


def test_ef_sweep_refuses_ray_address_without_the_ray_engine(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from ef.cli import main

    config = tmp_path / "sweep.toml"
    config.write_text(f'dataset = "{demo_dataset()}"\nout = "out"\n[grid]\nsize = 8\n')
    assert main(["sweep", str(config), "--ray-address", "127.0.0.1:6379"]) == 2
    assert capsys.readouterr().err == "ef sweep: error: --ray-address needs --engine ray\n"
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_ray_sweep_killed_mid_cell_resumes_and_equals_the_local_engine_exactly(tmp_path: Path) -> None:
    if importlib.util.find_spec("ray") is None:
        pytest.skip("ray is not installed (the 'ray' extra)")
    folder, pids = tmp_path / "ray", tmp_path / "pids"
    killed = subprocess.run([sys.executable, "-c", _KILLED_DRIVER, str(folder), "4", str(pids)],
                            capture_output=True, text=True, env=_ENV, timeout=600)
    _reap([int(p) for p in pids.read_text().split()] if pids.exists() else [])
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-3000:]
    assert len(_cells(folder)) == 4
    assert len(_runs(folder)) == 5  # the fifth cell's run, without its record

    config = tmp_path / "sweep.toml"
    config.write_text(textwrap.dedent(f"""
        dataset = "{demo_dataset()}"
        out = "ray"
        [grid]
        retriever = ["bm25", "dense", "hybrid"]
        size = [8, "whole"]
        rerank = ["none", "minilm"]
        rerank_depth = 20
        k = [5, 10]
    """))
    resumed = subprocess.run(
        [sys.executable, "-m", "ef", "sweep", str(config), "--engine", "ray", "--json", str(tmp_path / "r.json"), "-q"],
        capture_output=True, text=True, env=_ENV, timeout=600,
    )
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    result = json.loads((tmp_path / "r.json").read_text())
    assert len(result["loaded"]) == 4
    assert len(result["scored"]) == 20
    assert not set(result["loaded"]) & set(result["scored"])
    # Each chunking was cut by one actor, once; each (chunking, model) encoded or read from the
    # vector cache the killed run saved, once.
    counts = result["counts"]
    assert counts["chunked"] == {"words/8/0": 1, "words/whole/0": 1}
    vectors = {k: counts["encoded"].get(k, 0) + counts["loaded"].get(k, 0)
               for k in ("words/8/0/all-MiniLM-L6-v2", "words/whole/0/all-MiniLM-L6-v2")}
    assert vectors == {"words/8/0/all-MiniLM-L6-v2": 1, "words/whole/0/all-MiniLM-L6-v2": 1}

    local = sweep(_GRID, demo_dataset(), tmp_path / "local", show_progress=False)
    assert len(local.cells) == 24
    ray_cells, local_cells = _cells(folder), _cells(tmp_path / "local")
    assert set(ray_cells) == set(local_cells)
    for cell_id, cell in local_cells.items():
        assert ray_cells[cell_id]["per_query"] == cell["per_query"], cell["label"]
        assert ray_cells[cell_id]["metrics"] == cell["metrics"], cell["label"]
        assert ray_cells[cell_id]["index_bytes"] == cell["index_bytes"], cell["label"]
    assert _runs(folder) == _runs(tmp_path / "local")  # the half-written cell's run was replaced
    rows = {row["label"]: row["mean"] for row in result["rows"]}
    assert rows == {c.label: c.metrics["ndcg@10"] for c in local.cells}
