"""Encoding and retrieval on a real local Ray cluster, with the real all-MiniLM-L6-v2, on 200 SciFact documents.

One module-scoped build does what the checks below look at, since every encode costs seconds on 2 cores:
a ``ray start --head`` cluster on 127.0.0.1 (2 CPUs, so 2 worker processes hold the encoding
actors); a build interrupted by a KeyboardInterrupt in the driver's thread once 3 of its 10 shards
are on disk (raised from the shard hook, where a Ctrl-C would land, so that no machine is too fast
for it); the same build run again, which must reuse those shards, while a worker process is
SIGKILLed as soon as the next shard lands. The embeddings, the rankings and NDCG@10 are then compared with a local
build of the same documents.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# `ray start` turns token authentication on; a driver that names the cluster's address joins only
# in token mode, which Ray reads when it is imported. The token is ~/.ray/auth_token where one was
# made; a fresh machine has none (`ray start` then exits), so the cluster, the driver and every
# process they start share one made here.
os.environ.setdefault("RAY_AUTH_MODE", "token")
if not (Path.home() / ".ray" / "auth_token").exists():
    os.environ.setdefault("RAY_AUTH_TOKEN", secrets.token_hex(32))

import numpy as np
import pytest

import ef.source_manager._ray as ray_module
from _run_windows import spy_windows
from ef.cli import main
from ef.evaluation import evaluate_retrieval, read_beir, write_beir
from ef.source_manager import SearchableCorpus, ingest

pytest.importorskip("ray", reason="the ray extra is not installed")

pytestmark = pytest.mark.slow

SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "data" / "beir" / "scifact"
MODEL = "st:all-MiniLM-L6-v2"
N_DOCS, SHARD_ROWS, BATCH = 200, 20, 8
N_SHARDS = N_DOCS // SHARD_ROWS
RAY = str(Path(sys.executable).with_name("ray"))


def _children() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat.rsplit(")", 1)[1].split()[1]), []).append(int(entry))
    return children


def descendants(pid: int) -> list[int]:
    children, out, todo = _children(), [], [pid]
    while todo:
        current = todo.pop()
        out.append(current)
        todo.extend(children.get(current, []))
    return out


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def remote_addresses(pids: list[int]) -> set[str]:
    """The remote ends of every TCP socket the given processes hold (IPv4 and IPv6, hex as in /proc)."""
    inodes = set()
    for pid in pids:
        try:
            for fd in os.listdir(f"/proc/{pid}/fd"):
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
                if target.startswith("socket:["):
                    inodes.add(target[8:-1])
        except OSError:
            continue
    remotes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[9] in inodes:
                remotes.add(fields[2].split(":")[0])
    return remotes


LOOPBACK_OR_NONE = {"0100007F", "00000000", "00000000000000000000000000000000",
                    "00000000000000000000000001000000", "0000000000000000FFFF00000100007F"}


@dataclass
class Cluster:
    address: str
    process: subprocess.Popen[str]


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """A head node on 127.0.0.1 with 2 CPUs; stopped (it and every process it started) at the end."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    temp = tempfile.mkdtemp(prefix="efray", dir="/tmp")  # short: Ray's socket paths must fit 107 bytes
    # No usage statistics; and the switch that keeps a one-machine Ray on 127.0.0.1 (see ray_session).
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0", RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER="0")
    process = subprocess.Popen(
        [RAY, "start", "--head", "--block", "--node-ip-address=127.0.0.1", f"--port={port}", "--num-cpus=2",
         "--include-dashboard=false", "--disable-usage-stats", f"--temp-dir={temp}",
         "--object-store-memory=100000000"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not any("raylet" in command_line(p) for p in descendants(process.pid)):
            assert process.poll() is None, "ray start exited"
            assert time.monotonic() < deadline, "the Ray head did not start within 60 s"
            time.sleep(0.5)
        yield Cluster(f"127.0.0.1:{port}", process)
    finally:
        started = descendants(process.pid)
        process.send_signal(signal.SIGTERM)  # `ray start --block` stops its own processes, gracefully
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(10)
        for pid in started[1:]:  # what is left of them after 10 s: the processes this fixture started
            if "ray" in command_line(pid).lower():  # still a Ray process, not a reused pid
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        process.wait(30)
        shutil.rmtree(temp, ignore_errors=True)


def scifact_slice(
    n_queries: int = 40, n_docs: int = N_DOCS
) -> tuple[dict[str, str], dict[str, str], dict[str, dict[str, float]]]:
    corpus, queries, qrels = read_beir(SCIFACT)
    chosen = dict(list(qrels.items())[:n_queries])
    keep = list(dict.fromkeys(d for judged in chosen.values() for d in judged if d in corpus))
    keep += [d for d in corpus if d not in keep][: n_docs - len(keep)]
    docs = {d: corpus[d][:300] for d in keep}  # short texts keep the model's work small
    return docs, {q: queries[q] for q in chosen}, chosen


@dataclass
class Build:
    docs: dict[str, str]
    queries: dict[str, str]
    qrels: dict[str, dict[str, float]]
    local: SearchableCorpus
    ray: SearchableCorpus
    shards_at_interrupt: int
    interrupted: bool
    killed: dict[str, Any]
    cluster_pids: list[int]
    local_hits: list[list[Any]]
    ray_hits: list[list[Any]]  # searched on Ray: queries encoded by the actors, shards scored by Ray tasks


def shard_count(directory: Path) -> int:
    return len(list(directory.glob("shard-*.npy")))


@pytest.fixture(scope="module")
def build(cluster: Cluster, tmp_path_factory: pytest.TempPathFactory) -> Build:
    docs, queries, qrels = scifact_slice()
    local = ingest(docs, embedder=MODEL, device="cpu", batch_size=BATCH, show_progress=False)
    shards = tmp_path_factory.mktemp("ray") / "shards"
    options: dict[str, Any] = {
        "embedder": MODEL, "device": "cpu", "batch_size": BATCH, "show_progress": False, "engine": "ray",
        "ray_address": cluster.address, "workers": 2, "shard_dir": shards,
        "shard_rows": SHARD_ROWS,  # 10 shards of 20: room to interrupt and to kill mid-job
    }
    # The hooks run in this (the driver's) thread as each shard lands on disk: what they do happens
    # at a known point of the build, however fast the machine encodes.
    real_encode_shards = ray_module.encode_shards

    def building(on_shard: Any) -> Any:
        def encode_shards(*args: Any, **kwargs: Any) -> Any:
            return real_encode_shards(*args, **kwargs, on_shard=on_shard)

        return encode_shards

    # 1. Interrupted: a KeyboardInterrupt in the driver's thread once 3 shards are written, where a
    # Ctrl-C would land.
    written: list[int] = []

    def interrupt_at_three(number: int) -> None:
        written.append(number)
        if len(written) == 3:
            raise KeyboardInterrupt

    interrupted = False
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ray_module, "encode_shards", building(interrupt_at_three))
        try:
            ingest(docs, **options)
        except KeyboardInterrupt:
            interrupted = True
    at_interrupt = shard_count(shards)

    # 2. Resumed, and a worker process SIGKILLed as soon as the next shard lands.
    killed: dict[str, Any] = {}

    def kill_a_worker(number: int) -> None:
        if killed:
            return
        workers = [p for p in descendants(cluster.process.pid) if "MapWorker" in command_line(p)]
        killed.update(pid=workers[0], workers=len(workers), shards=shard_count(shards))
        os.kill(workers[0], signal.SIGKILL)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ray_module, "encode_shards", building(kill_a_worker))
        resumed = ingest(docs, **options)
    texts = list(queries.values())
    ray_hits = resumed.search_many(texts, limit=100)
    pids = descendants(cluster.process.pid)  # while the last job's workers still hold their sockets
    return Build(
        docs, queries, qrels, local, resumed, at_interrupt, interrupted, killed, pids,
        local.search_many(texts, limit=100), ray_hits,
    )


def dense(index: SearchableCorpus) -> Any:
    return index._collection.index


def test_the_interrupted_build_left_some_shards_and_the_resume_reused_them(build: Build) -> None:
    assert build.interrupted
    assert 3 <= build.shards_at_interrupt < N_SHARDS
    info = dense(build.ray).info()
    assert info["build"]["shards_resumed"] == build.shards_at_interrupt
    assert info["shards"] == [SHARD_ROWS] * N_SHARDS


def test_a_worker_killed_mid_job_does_not_stop_it(build: Build) -> None:
    assert build.killed["workers"] == 2  # one actor per worker process, both alive when one was killed
    assert build.shards_at_interrupt < build.killed["shards"] < N_SHARDS  # mid-job
    assert not Path(f"/proc/{build.killed['pid']}").exists() or "MapWorker" not in command_line(build.killed["pid"])
    assert len(dense(build.ray)) == N_DOCS


def test_ray_embeddings_equal_the_local_build(build: Build) -> None:
    local = np.asarray(dense(build.local).embeddings)
    shards = dense(build.ray)._parts
    assert all(isinstance(part, np.memmap) for part in shards)
    assert float(np.abs(np.concatenate(shards) - local).max()) <= 1e-6


def test_ray_retrieval_gives_the_local_rankings_and_ndcg(build: Build) -> None:
    for a, b in zip(build.ray_hits, build.local_hits, strict=True):
        assert [h.segment.source_id for h in a] == [h.segment.source_id for h in b]
        assert [h.score for h in a] == pytest.approx([h.score for h in b], abs=1e-6)

    def answers(hits: list[list[Any]]) -> Any:
        by_text = dict(zip(build.queries.values(), hits, strict=True))
        return lambda query, *, limit: by_text[query][:limit]

    ks, metrics = (10, 100), ("ndcg", "recall")
    local = evaluate_retrieval(answers(build.local_hits), build.qrels, build.queries, k_values=ks, metrics=metrics)
    ray = evaluate_retrieval(answers(build.ray_hits), build.qrels, build.queries, k_values=ks, metrics=metrics)
    assert ray.n_queries == local.n_queries == 40
    assert ray.metrics["ndcg@10"] == local.metrics["ndcg@10"]
    assert ray.metrics["recall@100"] == local.metrics["recall@100"]
    assert 0.5 < local.metrics["ndcg@10"] < 1.0  # the documents judged for these queries are all in the slice


def test_the_index_on_ray_is_evaluated_block_by_block_from_its_rankings(
    build: Build, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = dense(build.ray).engine
    monkeypatch.setattr(dense(build.ray), "engine", dataclasses.replace(engine, query_block=16))
    searched: list[int] = []
    real_search = ray_module.search_on_ray

    def search_on_ray(parts: Any, vectors: Any, **kwargs: Any) -> Any:
        searched.append(len(vectors))
        return real_search(parts, vectors, **kwargs)

    monkeypatch.setattr(ray_module, "search_on_ray", search_on_ray)
    windows = spy_windows(monkeypatch)
    ks = (1, 10, 100)
    ray = evaluate_retrieval(build.ray, build.qrels, build.queries, k_values=ks)
    local = evaluate_retrieval(build.local, build.qrels, build.queries, k_values=ks)  # in memory
    assert build.ray.query_block == 16
    assert build.local.query_block is None
    assert searched == [16, 16, 8]  # 40 queries, 3 blocks, each a round of shard tasks on Ray
    assert windows == []  # each block's rankings scored straight, no file read to score them
    assert list(ray.metrics.items()) == list(local.metrics.items())
    assert ray.per_query == local.per_query
    assert ray.n_queries == 40
    # The report's run holds the retriever's scores, read back from the run file (the embeddings,
    # hence the scores, are the local build's within 1e-6; the order is what per_query scored).
    assert ray.run.keys() == local.run.keys()
    for query_id, docs in local.run.items():
        assert ray.run[query_id].keys() == docs.keys()
        assert list(ray.run[query_id].values()) == pytest.approx(list(docs.values()), abs=1e-6)


def test_the_saved_index_holds_the_shards_and_records_the_build(build: Build, tmp_path: Path) -> None:
    build.ray.save(tmp_path / "index")
    manifest = json.loads((tmp_path / "index" / "manifest.json").read_text())
    dense_info = manifest["index"]["dense"]
    assert dense_info["shards"] == [SHARD_ROWS] * N_SHARDS
    assert {k: dense_info["build"][k] for k in ("engine", "workers", "batch_size", "shard_rows")} == {
        "engine": "ray", "workers": 2, "batch_size": BATCH, "shard_rows": SHARD_ROWS,
    }
    assert "embeddings.npy" not in manifest["files"]
    assert manifest["files"]["embeddings/shard-000009.npy"] == 128 + SHARD_ROWS * 384 * 4
    loaded = SearchableCorpus.load(tmp_path / "index", show_progress=False)  # searched here, shard by shard
    assert len(dense(loaded)._parts) == N_SHARDS
    texts = list(build.queries.values())[:10]
    assert [[h.segment.source_id for h in hits] for hits in loaded.search_many(texts, limit=30)] == [
        [h.segment.source_id for h in hits] for hits in build.local.search_many(texts, limit=30)
    ]


def test_the_cluster_talked_over_loopback_only(build: Build) -> None:
    remotes = remote_addresses([*build.cluster_pids, os.getpid()])
    assert remotes  # the processes do hold sockets: the check looked at something
    assert remotes <= LOOPBACK_OR_NONE, remotes



def test_ef_eval_on_ray_resumes_from_the_shard_folder_and_scores_as_the_local_build(
    cluster: Cluster, build: Build, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    data, index = tmp_path / "data", tmp_path / "index"
    write_beir(data, build.docs, build.queries, build.qrels)
    (data / "qrels").mkdir()
    (data / "qrels.tsv").rename(data / "qrels" / "test.tsv")
    # The shards the build wrote, where `ef eval --index-dir DIR` keeps them: DIR.shards.
    shutil.copytree(Path(dense(build.ray)._parts[0].filename).parent, tmp_path / "index.shards")
    argv = ["eval", str(data), "--quiet", "--embedder", MODEL, "--device", "cpu", "--batch-size", str(BATCH),
            "--k", "1,10", "--engine", "ray", "--ray-address", cluster.address, "--workers", "2",
            "--shard-rows", str(SHARD_ROWS), "--ann", "hnsw", "--ann-param", "ef_search=256",
            "--index-dir", str(index), "--json", str(tmp_path / "ray.json")]
    windows = spy_windows(monkeypatch)
    assert main(argv) == 0

    def answers(query: str, *, limit: int) -> list[Any]:
        return dict(zip(build.queries.values(), build.local_hits, strict=True))[query][:limit]

    local = evaluate_retrieval(answers, build.qrels, build.queries, k_values=(1, 10))
    # Standard output holds ef's lines and nothing else: Ray's notices (the raylet reporting the
    # worker the build fixture killed) go to stderr.
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"{data}, split test: {N_DOCS} documents ({N_DOCS} segments), 40 queries scored; " \
                     f"embedder {MODEL}; index built, saved to {index}"
    assert out[1 : len(str(local).splitlines()) + 1] == str(local).splitlines()  # the same metrics table
    rest = out[len(str(local).splitlines()) + 1 :]
    # ef_search 256 > 200 vectors: the beam holds the whole graph, so HNSW finds the exact top 10.
    assert rest[:2] == [
        "ANN hnsw (M=32, ef_construction=128, ef_search=256) against exact search over 40 queries: recall@10 1.0000",
        "",
    ]
    assert re.fullmatch(r"stage +seconds", rest[2]), rest
    assert re.fullmatch(r"-{12}  -+", rest[3]), rest
    rows = [re.fullmatch(r"([a-zA-Z ]+?) +\d+\.\d\d", line) for line in rest[4:]]
    assert [row.group(1) if row else None for row in rows] == [
        "read dataset", "build index", "retrieve", "score", "ANN recall", "total",
    ]
    # The rankings retrieved on Ray were scored straight, block by block: no run file read to score them.
    assert windows == []
    ray = json.loads((tmp_path / "ray.json").read_text())
    assert ray["metrics"] == local.metrics
    assert ray["per_query"] == local.per_query
    assert ray["ann_recall"]["recall@10"] == 1.0
    dense_info = json.loads((index / "manifest.json").read_text())["index"]["dense"]
    assert dense_info["build"]["shards_resumed"] == N_SHARDS  # nothing left to encode
    assert dense_info["shards"] == [SHARD_ROWS] * N_SHARDS
    assert dense_info["ann"]["params"] == {"M": 32, "ef_construction": 128, "ef_search": 256}
    assert (index / "ann.faiss").is_file()
    assert not (tmp_path / "index.shards").exists()  # the shards moved into the index; the scratch folder went
