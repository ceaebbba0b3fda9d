"""``ef eval``'s flags for large corpora: ``--engine ray``, ``--ray-address``, ``--workers``, ``--ann``.

Kept apart from :mod:`ef.cli.eval` so that module reads as the evaluation it runs; see
``docs/scale.md`` for what runs where.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import shutil
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "ANN_RECALL_SAMPLE",
    "CORPUS_BLOCK",
    "StreamedCorpus",
    "add_scale_flags",
    "ann_recall",
    "check_loaded",
    "check_scale_flags",
    "finish_build",
    "format_ann_recall",
    "ray_scope",
    "scale_options",
    "shard_dir",
    "shown_documents",
]

ANN_RECALL_SAMPLE = 100  # queries searched both ways to measure what the approximation misses
_SEED = 0


CORPUS_BLOCK = 10_000  # documents read from disk at a time when a dataset's corpus streams into a Ray build


class StreamedCorpus:
    """A dataset's corpus as ``(doc_id, text)`` pairs, read from disk block by block on every pass.

    What ``ef eval --engine ray`` hands :func:`~ef.source_manager.ingest` (and ``--index-dir``'s
    fingerprint check) instead of a ``{doc_id: text}`` dict: the dataset is loaded with
    ``corpus=False`` and :meth:`ef.datasets.Dataset.iter_corpus` reads `block_size` documents at a time.
    """

    def __init__(self, dataset: Any, block_size: int | None = None) -> None:
        self.dataset = dataset
        self.block_size = CORPUS_BLOCK if block_size is None else block_size

    def __iter__(self) -> Iterator[tuple[str, str]]:
        for block in self.dataset.iter_corpus(block_size=self.block_size):
            yield from block


def shown_documents(
    corpus: Iterable[tuple[str, str]],
    run: Mapping[str, Mapping[str, float]],
    qrels: Mapping[str, Mapping[str, float]],
    depth: int,
) -> dict[str, str]:
    """The texts of the documents an HTML report can show: each query's first `depth` results in
    `run` (the retriever's order) and every judged document; one more pass over a streamed corpus.

    >>> shown_documents([("d1", "a"), ("d2", "b"), ("d3", "c")], {"q": {"d2": 2.0, "d3": 1.0}}, {"q": {"d1": 1}}, 1)
    {'d1': 'a', 'd2': 'b'}
    """
    wanted = {doc for docs in run.values() for doc in itertools.islice(docs, depth)}
    wanted.update(doc for judged in qrels.values() for doc in judged)
    return {doc: text for doc, text in corpus if doc in wanted}


def _ann_param(text: str) -> tuple[str, int]:
    name, sep, value = text.partition("=")
    try:
        number = int(value)
    except ValueError:
        number = 0
    if not sep or not name or number < 1:
        raise argparse.ArgumentTypeError(f"expected NAME=POSITIVE_INTEGER such as M=32 or nprobe=16 (got {text!r})")
    return name, number


def add_scale_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("large corpora (docs/scale.md)")
    group.add_argument(
        "--engine", choices=("local", "ray"), default="local",
        help="where a dense model encodes and searches: here (default) or on a Ray cluster "
        "(pip install 'ef-eval[ray]')",
    )
    group.add_argument(
        "--ray-address", metavar="ADDRESS",
        help="the Ray cluster, e.g. 127.0.0.1:6379 (default: RAY_ADDRESS, else a local cluster on 127.0.0.1)",
    )
    group.add_argument(
        "--workers", type=int, metavar="N",
        help="encoding actors on Ray, one model each (default: one per CPU, or per GPU with --device cuda)",
    )
    group.add_argument(
        "--shard-rows", type=int, metavar="N",
        help="segments per embedding shard on Ray, the unit a build resumes by (default: 50000)",
    )
    group.add_argument(
        "--ann", choices=("none", "hnsw", "ivf"),
        help="approximate search through FAISS (pip install 'ef-eval[ann]'); default: exact search for a new index, "
             "as saved for one loaded from --index-dir",
    )
    group.add_argument(
        "--ann-param", type=_ann_param, action="append", default=[], metavar="NAME=N",
        help="an ANN parameter other than its default (hnsw: M, ef_construction, ef_search; "
             "ivf: nlist, nprobe, train_size); repeatable",
    )


def check_scale_flags(args: argparse.Namespace) -> None:
    """Refuse inconsistent flags before any file is read."""
    if args.engine == "local":
        for flag, value in (
            ("--ray-address", args.ray_address), ("--workers", args.workers), ("--shard-rows", args.shard_rows)
        ):
            if value is not None:
                raise ValueError(f"{flag} needs --engine ray")
    for flag, value in (("--workers", args.workers), ("--shard-rows", args.shard_rows)):
        if value is not None and value < 1:
            raise ValueError(f"{flag} must be a positive integer (got {value})")
    if args.ann_param and args.ann in (None, "none"):
        raise ValueError("--ann-param needs --ann hnsw or --ann ivf")
    if args.embedder == "bm25" and (args.engine == "ray" or args.ann not in (None, "none")):
        flag = "--engine ray" if args.engine == "ray" else f"--ann {args.ann}"
        raise ValueError(f"{flag} applies to a dense index; --embedder bm25 has none (use st:MODEL or hybrid)")
    if args.engine == "ray":
        from ef.source_manager.scale import require_ray

        require_ray()
    if args.ann not in (None, "none"):
        from ef.source_manager.scale import AnnSpec, require_faiss

        require_faiss()
        AnnSpec(args.ann, dict(args.ann_param))  # an unknown parameter name fails now


@contextlib.contextmanager
def ray_scope(args: argparse.Namespace) -> Iterator[None]:
    """One Ray session for the whole evaluation (building, then retrieving), when --engine ray.

    When it ends well, a shard folder beside --index-dir whose index is saved is deleted: not
    before, since the shards are what the evaluation's Ray tasks read.
    """
    if args.engine != "ray":
        yield
        return
    from ef.source_manager.cache import is_saved_index
    from ef.source_manager.scale import ray_session

    with ray_session(args.ray_address):
        yield
    cache = None if args.index_dir is None else Path(args.index_dir)
    if cache is not None and is_saved_index(cache):
        finish_build(cache)


def shard_dir(cache: Path | None) -> Path | None:
    """Where a Ray build keeps its shards until the index is saved: beside --index-dir, to resume from."""
    return None if cache is None else cache.with_name(cache.name + ".shards")


def scale_options(args: argparse.Namespace, cache: Path | None) -> dict[str, Any]:
    """The keyword arguments of ``ingest`` that the scale flags set."""
    options: dict[str, Any] = {"engine": args.engine}
    if args.engine == "ray":
        options.update(
            ray_address=args.ray_address, workers=args.workers, shard_dir=shard_dir(cache),
            shard_rows=args.shard_rows,
        )
    if args.ann not in (None, "none"):
        options.update(ann=args.ann, ann_params=dict(args.ann_param))
    return options


def finish_build(cache: Path | None) -> None:
    """Drop the shard directory once the index (which holds the shards now) is saved."""
    directory = shard_dir(cache)
    if directory is not None and directory.is_dir():
        shutil.rmtree(directory)


def check_loaded(index: Any, args: argparse.Namespace, cache: Path) -> None:
    """A loaded index must have the ANN index --ann asks for; --ann-param's search-time parameters
    (ef_search, nprobe) apply to it, and a build parameter must be what it was built with."""
    dense = _dense(index)
    have = "none" if dense is None or dense.ann is None else dense.ann.kind
    if args.ann is not None and args.ann != have:
        raise ValueError(
            f"--index-dir {cache} holds an index with ann {have!r}, not {args.ann!r}: "
            f"delete it or choose another directory"
        )
    if not args.ann_param or have == "none":
        return
    from ef.source_manager.scale import QUERY_PARAMS

    query = QUERY_PARAMS[have]
    for name, value in args.ann_param:
        saved = dense.ann.params.get(name)
        if name not in query and saved != value:
            raise ValueError(
                f"--ann-param {name}={value}: --index-dir {cache} holds an {have} index built with {name}={saved}; "
                f"a build parameter takes a new index (delete it or choose another directory); "
                f"{', '.join(query)} applies to a loaded one"
            )
    dense.ann.set_query_params({name: value for name, value in args.ann_param if name in query})


def _dense(index: Any) -> Any:
    """The dense part of a SearchableCorpus's index (itself, or a hybrid's), or None for bm25."""
    from ef.source_manager.scale import dense_index

    return dense_index(index)


def ann_recall(
    index: Any, queries: Mapping[str, str], qrels: Mapping[str, Any], ks: tuple[int, ...], *, show_progress: bool
) -> dict[str, Any] | None:
    """Recall@k of the ANN index against exact search over a sample of the judged queries; None without ANN."""
    from ef.source_manager.scale import recall_against_exact

    dense = _dense(index)
    if dense is None or dense.ann is None:
        return None
    judged = sorted(q for q in qrels if q in queries)
    if not judged:
        return None
    rng = np.random.default_rng(_SEED)
    sample = sorted(rng.choice(len(judged), size=min(ANN_RECALL_SAMPLE, len(judged)), replace=False).tolist())
    texts = [queries[judged[i]] for i in sample]
    depth = max(ks)
    vectors = dense.encode_queries(texts, show_progress=show_progress)
    approximate = dense.ann.search(vectors, depth)
    exact = dense.exact_search(vectors, limit=depth, show_progress=show_progress)
    cutoffs = sorted({k for k in (10, depth) if k <= depth})
    return {
        "kind": dense.ann.kind,
        "params": dict(dense.ann.params),
        "n_queries": len(texts),
        **{f"recall@{k}": round(recall_against_exact(approximate, exact, k), 4) for k in cutoffs},
    }


def format_ann_recall(summary: Mapping[str, Any]) -> str:
    """One line for the report, e.g. ``ANN hnsw (M=32, ...) vs exact search over 100 queries: recall@10 0.9900``."""
    params = ", ".join(f"{k}={v}" for k, v in summary["params"].items())
    recalls = ", ".join(f"{k} {v:.4f}" for k, v in summary.items() if k.startswith("recall@"))
    return f"ANN {summary['kind']} ({params}) against exact search over {summary['n_queries']} queries: {recalls}"
