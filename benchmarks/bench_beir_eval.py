"""Benchmark ``ef eval`` against doing the same job by hand, and reproduce the dense numbers.

(a) ``ef eval`` with bm25 on SciFact against a plain script that reads the files, indexes with
    bm25s (same settings) and scores with pytrec_eval: both run as fresh processes, best of
    ``--repeat``; ef must take at most 1.3x the plain script's time.
(b) Dense encoding through ``ingest(..., embedder="st:all-MiniLM-L6-v2")`` against calling
    ``SentenceTransformer.encode`` directly with the same batch size on a slice of the corpus;
    ef must reach at least 0.9x the documents per second.
(c) ``--full-dense``: the full SciFact reproduction with all-MiniLM-L6-v2 (minutes on 2 cores):
    NDCG@10 should be 0.6451 +/- 0.002 and Recall@100 0.925 +/- 0.003.

Usage::

    python benchmarks/bench_beir_eval.py [--data ../shared/data/beir/scifact] [--full-dense]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "beir" / "scifact"
KS = (1, 3, 5, 10, 100)

# What a user would write without ef: read BEIR by hand, bm25s with ef's settings, pytrec_eval.
PLAIN_SCRIPT = r'''
import csv, json, sys
import bm25s, pytrec_eval, Stemmer

data = sys.argv[1]
corpus, queries, qrels = {}, {}, {}
with open(f"{data}/corpus.jsonl", encoding="utf-8") as f:
    for line in f:
        r = json.loads(line)
        corpus[r["_id"]] = (r.get("title", "") + " " + r["text"]).strip()
with open(f"{data}/queries.jsonl", encoding="utf-8") as f:
    for line in f:
        r = json.loads(line)
        queries[r["_id"]] = r["text"]
with open(f"{data}/qrels/test.tsv", encoding="utf-8", newline="") as f:
    rows = csv.reader(f, delimiter="\t")
    next(rows)
    for q, d, s in rows:
        qrels.setdefault(q, {})[d] = int(s)

stemmer = Stemmer.Stemmer("english")
ids = list(corpus)
model = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
model.index(bm25s.tokenize([corpus[i] for i in ids], stopwords="en", stemmer=stemmer, show_progress=False),
            show_progress=False)
qids = [q for q in qrels if q in queries]
tokens = bm25s.tokenize([queries[q] for q in qids], stopwords="en", stemmer=stemmer, return_ids=False,
                        show_progress=False)
docs, scores = model.retrieve(tokens, k=101, show_progress=False)
run = {q: {ids[j]: float(s) for j, s in zip(docs[i], scores[i]) if ids[j] != q} for i, q in enumerate(qids)}
cuts = "1,3,5,10,100"
evaluator = pytrec_eval.RelevanceEvaluator(
    qrels, {f"ndcg_cut.{cuts}", f"recall.{cuts}", f"P.{cuts}", f"map_cut.{cuts}", "recip_rank"})
per_query = evaluator.evaluate(run)
for m in ("ndcg_cut_10", "recall_100", "P_10", "map_cut_10", "recip_rank"):
    print(m, round(sum(v[m] for v in per_query.values()) / len(per_query), 4))
'''


def _timed(command: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"command failed ({done.returncode}): {' '.join(command)}\n{done.stderr}")
    return seconds, done.stdout


def bench_bm25(data: Path, repeat: int) -> float:
    """(a): best-of-`repeat` wall time of ``ef eval`` and of the plain script, alternating."""
    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / "plain_bm25_pytrec_eval.py"
        plain.write_text(PLAIN_SCRIPT, encoding="utf-8")
        report = Path(tmp) / "report.json"
        ef_cmd = [sys.executable, "-m", "ef", "eval", str(data), "--ignore-identical-ids", "--quiet",
                  "--json", str(report)]
        plain_cmd = [sys.executable, str(plain), str(data)]
        ef_times, plain_times = [], []
        for _ in range(repeat):
            ef_times.append(_timed(ef_cmd)[0])
            seconds, plain_out = _timed(plain_cmd)
            plain_times.append(seconds)
        ef_metrics = json.loads(report.read_text(encoding="utf-8"))["metrics"]
    plain_metrics = dict(line.split() for line in plain_out.splitlines())
    print(f"ef eval bm25:        NDCG@10 {ef_metrics['ndcg@10']:.4f}  Recall@100 {ef_metrics['recall@100']:.4f}")
    print(f"bm25s + pytrec_eval: NDCG@10 {float(plain_metrics['ndcg_cut_10']):.4f}  "
          f"Recall@100 {float(plain_metrics['recall_100']):.4f}")
    ratio = min(ef_times) / min(plain_times)
    verdict = "ok" if ratio <= 1.3 else "TOO SLOW"
    print(f"RATIO bm25 SciFact end to end: ef eval {min(ef_times):.2f} s / bm25s + pytrec_eval "
          f"{min(plain_times):.2f} s = {ratio:.2f}x (limit 1.30x, best of {repeat}) {verdict}")
    return ratio


def _corpus_texts(data: Path) -> list[tuple[str, str]]:
    from ef.evaluation import read_beir

    corpus, _, _ = read_beir(data)
    return list(corpus.items())


def bench_dense_encoding(data: Path, n_docs: int, batch_size: int, repeat: int) -> float:
    """(b): documents per second, ef's ingest against SentenceTransformer.encode, same batches."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from ef.source_manager import ingest
    from ef.source_manager._dense import load_model

    pairs = _corpus_texts(data)[:n_docs]
    texts = [text for _, text in pairs]
    model = load_model("all-MiniLM-L6-v2", device="cpu")
    model.encode(texts[:batch_size], batch_size=batch_size)  # warm-up: first call pays one-off costs
    direct, through_ef = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        model.encode(texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True,
                     show_progress_bar=False)
        direct.append(time.perf_counter() - start)
        start = time.perf_counter()
        ingest(pairs, embedder="st:all-MiniLM-L6-v2", batch_size=batch_size, device="cpu", show_progress=False)
        through_ef.append(time.perf_counter() - start)
    ef_rate, st_rate = n_docs / min(through_ef), n_docs / min(direct)
    ratio = ef_rate / st_rate
    verdict = "ok" if ratio >= 0.9 else "TOO SLOW"
    print(f"RATIO dense encoding, {n_docs} SciFact docs, batch {batch_size}: ef {ef_rate:.1f} docs/s / "
          f"SentenceTransformer.encode {st_rate:.1f} docs/s = {ratio:.2f}x (floor 0.90x, best of {repeat}) "
          f"{verdict}")
    return ratio


def full_dense(data: Path, batch_size: int) -> None:
    """(c): the full SciFact reproduction with all-MiniLM-L6-v2 through ``ef eval``."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        seconds, out = _timed([
            sys.executable, "-m", "ef", "eval", str(data), "--embedder", "st:all-MiniLM-L6-v2",
            "--ignore-identical-ids", "--quiet", "--batch-size", str(batch_size), "--device", "cpu",
            "--json", str(report),
        ])
        metrics = json.loads(report.read_text(encoding="utf-8"))["metrics"]
    print(out)
    ndcg, recall = metrics["ndcg@10"], metrics["recall@100"]
    ok = abs(ndcg - 0.6451) <= 0.002 and abs(recall - 0.925) <= 0.003
    print(f"FULL DENSE SciFact st:all-MiniLM-L6-v2: NDCG@10 {ndcg:.4f} (target 0.6451 +/- 0.002), "
          f"Recall@100 {recall:.4f} (target 0.925 +/- 0.003), {seconds:.0f} s {'ok' if ok else 'OFF TARGET'}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the SciFact BEIR directory")
    parser.add_argument("--repeat", type=int, default=3, help="runs per timing; the best counts")
    parser.add_argument("--slice", type=int, default=500, help="documents encoded in (b)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--skip-dense", action="store_true", help="run only (a)")
    parser.add_argument("--full-dense", action="store_true", help="also run (c), minutes on a CPU")
    args = parser.parse_args()
    if not (args.data / "corpus.jsonl").is_file():
        print(f"bench_beir_eval: error: no BEIR dataset at {args.data}", file=sys.stderr)
        return 2
    bench_bm25(args.data, args.repeat)
    if not args.skip_dense:
        bench_dense_encoding(args.data, args.slice, args.batch_size, max(1, args.repeat - 1))
    if args.full_dense:
        full_dense(args.data, args.batch_size)
    return 0


if __name__ == "__main__":
    sys.exit(main())
