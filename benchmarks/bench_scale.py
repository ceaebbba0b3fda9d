"""Scale benchmark: FAISS HNSW/IVF against exact numpy search, and Ray encoding with 1 and 2 workers.

Not a test (it is CPU heavy); run it by hand and copy its lines into docs/scale.md:

    python benchmarks/bench_scale.py                    # 1M synthetic 384-d vectors, 1,000 queries
    python benchmarks/bench_scale.py --n 200000         # smaller, with a linear projection to --project
    python benchmarks/bench_scale.py --skip-ray         # the ANN part only

Part 1 (ANN). N unit vectors in 384 dimensions, drawn around 2,000 random centres (real embeddings
are clustered; uniform random vectors in 384-d are the worst case for any ANN index, which would
understate recall), and queries drawn the same way. Exact search is ef's own exact path (a float32
matrix product, chunked, and numpy top-k); ef's HNSW and IVF indexes (``ef.source_manager._ann``,
default parameters) are measured against it: build seconds, queries per second, recall@10/@100 of
the ANN top-k against the exact top-k, and memory (the matrix, the FAISS index as serialized, and
the growth of this process's resident set while building).

Part 2 (Ray). The first --docs SciFact documents (../shared, when present) encoded by
all-MiniLM-L6-v2 locally (one process, torch on every core) and on a local Ray cluster with 1 and
2 encoding actors (one CPU each); each Ray figure is the whole job (actors start and load the
model, the texts stream through, shards are written) with the cluster already up.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("EF_NO_PROGRESS", "1")

SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "data" / "beir" / "scifact"
DIM = 384


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def clustered(n: int, rng: np.random.Generator, centres: np.ndarray) -> np.ndarray:
    out = np.empty((n, DIM), dtype=np.float32)
    for start in range(0, n, 100_000):
        m = min(100_000, n - start)
        rows = centres[rng.integers(0, len(centres), size=m)] + 0.35 * rng.standard_normal((m, DIM), dtype=np.float32)
        out[start : start + m] = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return out


def exact_search(matrix: np.ndarray, queries: np.ndarray, k: int) -> list[np.ndarray]:
    from ef.source_manager._topk import top_k

    out = []
    for start in range(0, len(queries), 64):  # 64 x N float32 scores at a time (256 MB at 1M)
        scores = queries[start : start + 64] @ matrix.T
        out.extend(top_k(row, k)[0] for row in scores)
    return out


def recall(found: list[tuple[np.ndarray, np.ndarray]], truth: list[np.ndarray], k: int) -> float:
    hits = [len(set(f[0][:k].tolist()) & set(t[:k].tolist())) / k for f, t in zip(found, truth, strict=True)]
    return float(np.mean(hits))


def ann_part(n: int, n_queries: int, project: int, kinds: tuple[str, ...]) -> None:
    import faiss

    from ef.source_manager._ann import AnnIndex, AnnSpec

    rng = np.random.default_rng(0)
    centres = rng.standard_normal((2000, DIM), dtype=np.float32)
    before = rss_mib()
    matrix = clustered(n, rng, centres)
    queries = clustered(n_queries, rng, centres)
    print(f"{n:,} synthetic {DIM}-d unit vectors (clustered), {n_queries:,} queries, "
          f"{faiss.omp_get_max_threads()} FAISS threads; "
          f"matrix {matrix.nbytes / 2**20:,.0f} MiB (process +{rss_mib() - before:,.0f} MiB)")

    start = time.perf_counter()
    truth = exact_search(matrix, queries, 100)
    exact_s = time.perf_counter() - start
    exact_qps = n_queries / exact_s
    print(f"exact numpy (ef's exact path): {exact_qps:,.1f} queries/s ({exact_s:.1f} s), "
          f"no build, no memory beyond the matrix")

    for kind in kinds:
        spec = AnnSpec(kind)
        grown = rss_mib()
        start = time.perf_counter()
        index = AnnIndex.build(spec, [matrix])
        build_s = time.perf_counter() - start
        grown = rss_mib() - grown
        size = len(faiss.serialize_index(index._index)) / 2**20
        index.search(queries[:10], 100)  # sets the search parameters; not timed
        start = time.perf_counter()
        found = index.search(queries, 100)
        search_s = time.perf_counter() - start
        qps = n_queries / search_s
        r10, r100 = recall(found, truth, 10), recall(found, truth, 100)
        params = ", ".join(f"{k}={v}" for k, v in index.params.items())
        print(f"{kind} ({params}): build {build_s:.1f} s ({n / build_s:,.0f} vectors/s), "
              f"{qps:,.1f} queries/s, recall@10 {r10:.4f}, recall@100 {r100:.4f}, "
              f"index {size:,.0f} MiB (process +{grown:,.0f} MiB)")
        print(f"RATIO {kind} / exact numpy at N={n:,}: {qps / exact_qps:.1f}x the queries per second, "
              f"recall@10 {r10:.4f}, build {build_s:.0f} s")
        if project and project != n:
            # Exact search is linear in N. HNSW builds in ~N log N. IVF's default nlist grows as sqrt N, so
            # its k-means sample (64 nlist) and every vector's assignment (nlist dot products) grow as N^1.5.
            factor = project / n
            growth = factor * np.log(project) / np.log(n) if kind == "hnsw" else factor**1.5
            print(f"PROJECTION to N={project:,} ({factor:.1f}x): exact {exact_qps / factor:,.2f} queries/s; "
                  f"{kind} build ~{build_s * growth:,.0f} s, "
                  f"index ~{size * factor / 1024:,.1f} GiB, matrix {project * DIM * 4 / 2**30:,.1f} GiB")
        del index


def ray_part(n_docs: int) -> None:
    from ef.evaluation import read_beir
    from ef.source_manager import ingest
    from ef.source_manager._ray import ray_session

    if not SCIFACT.is_dir():
        print(f"Ray encoding: skipped, {SCIFACT} not found")
        return
    corpus, _, _ = read_beir(SCIFACT)
    docs = dict(list(corpus.items())[:n_docs])
    ingest(dict(list(docs.items())[:8]), embedder="st:all-MiniLM-L6-v2", device="cpu", show_progress=False)  # warm
    start = time.perf_counter()
    local = ingest(docs, embedder="st:all-MiniLM-L6-v2", device="cpu", show_progress=False)
    local_rate = n_docs / (time.perf_counter() - start)
    print(f"local encoding (one process, {os.cpu_count()} cores): {local_rate:.1f} docs/s "
          f"over {n_docs} SciFact documents")
    reference = np.asarray(local._collection.index.embeddings)  # type: ignore[attr-defined]
    with ray_session(None, num_cpus=os.cpu_count()):
        for workers in (1, 2):
            with tempfile.TemporaryDirectory() as shards:
                start = time.perf_counter()
                built = ingest(docs, embedder="st:all-MiniLM-L6-v2", device="cpu", show_progress=False,
                               engine="ray", workers=workers, shard_dir=shards, shard_rows=1000)
                rate = n_docs / (time.perf_counter() - start)
                parts = built._collection.index._parts  # type: ignore[attr-defined]
                diff = float(np.abs(np.concatenate(parts) - reference).max())
            print(f"Ray, {workers} worker(s): {rate:.1f} docs/s (whole job, actors loading the model included), "
                  f"max |difference| from the local embeddings {diff:.1e}")
            print(f"RATIO Ray {workers} worker(s) / local: {rate / local_rate:.2f}x the documents per second")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=1_000_000, help="synthetic vectors (default 1,000,000)")
    parser.add_argument("--queries", type=int, default=1000, help="queries (default 1,000)")
    parser.add_argument("--project", type=int, default=8_841_823, help="N to project to (default: MS MARCO's 8.8M)")
    parser.add_argument("--docs", type=int, default=400, help="SciFact documents for the Ray part (default 400)")
    parser.add_argument("--kinds", default="hnsw,ivf", help="ANN index types to measure (default: hnsw,ivf)")
    parser.add_argument("--skip-ann", action="store_true")
    parser.add_argument("--skip-ray", action="store_true")
    args = parser.parse_args()
    if not args.skip_ann:
        ann_part(args.n, args.queries, args.project, tuple(args.kinds.split(",")))
    if not args.skip_ray:
        ray_part(args.docs)


if __name__ == "__main__":
    main()
