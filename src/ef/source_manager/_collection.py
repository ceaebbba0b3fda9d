"""The state behind SearchableCorpus and SourceManager: sources, their segments, an index; on disk.

An index directory holds ``manifest.json`` (written last, so a directory without one was never
finished), ``sources.jsonl`` (each source's id and text), ``segments.npy`` (one row per segment:
source position, index within the source, start, end) and the embedder's files: ``bm25/`` (the
bm25s index) and/or ``embeddings.npy`` (float32, one row per segment, memory-mapped on load).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import Any, NoReturn

import numpy as np

import ef
from ef._validate import check_positive_int, describe
from ef.io._atomic import replace_directory, temporary_directory
from ef.io.jsonl import iter_json_objects, read_json
from ef.retrieval import SearchHit
from ef.segments import Segment, window_spans
from ef.source_manager._embedders import EmbedderSpec, parse_embedder
from ef.source_manager._index import DAMAGED, Index
from ef.source_manager._texts import DiskTexts, SegmentTexts

__all__ = [
    "FORMAT", "FORMAT_VERSION", "Collection", "check_limit", "corpus_fingerprint", "iter_sources", "read_sources",
]

FORMAT = "ef-index"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
SOURCES = "sources.jsonl"
SEGMENTS = "segments.npy"


def check_limit(limit: int) -> int:
    return check_positive_int(limit, "limit")  # numpy.int64(5) is 5; True is not 1


def check_queries(queries: Sequence[str]) -> list[str]:
    if isinstance(queries, str):
        raise TypeError("'queries' must be a sequence of query strings, not a single str")
    out = list(queries)
    for i, query in enumerate(out):
        if not isinstance(query, str):
            raise TypeError(f"'queries'[{i}] must be a str (got {describe(query)})")
    return out


def read_sources(
    corpus: Mapping[str, str] | Iterable[tuple[str, str]], *, known: Mapping[str, int], name: str = "corpus"
) -> list[tuple[str, str]]:
    """Validate a corpus (a mapping or ``(doc_id, text)`` pairs) before anything is indexed.

    `name` is the argument errors name (``'corpus'`` for ``ingest``, ``'sources'`` for
    ``SourceManager.add_many``).
    """
    return list(iter_sources(corpus, known=known, name=name))


def iter_sources(
    corpus: Mapping[str, str] | Iterable[tuple[str, str]], *, known: Mapping[str, int], name: str = "corpus"
) -> Iterator[tuple[str, str]]:
    """:func:`read_sources` pair by pair, as a corpus streamed from disk is indexed (only its ids are kept).

    The type of `corpus` itself is checked at the call, before the first pair is asked for.
    """
    given: object = corpus
    if isinstance(given, str | bytes) or not isinstance(given, Iterable):  # a common mistake, typed or not
        raise TypeError(
            f"'{name}' must be a mapping {{doc_id: text}} or an iterable of (doc_id, text) pairs "
            f"(got {type(given).__name__})"
        )
    items: Iterable[Any] = corpus.items() if isinstance(corpus, Mapping) else corpus
    return _checked(items, known, name)


def _checked(items: Iterable[Any], known: Mapping[str, int], name: str) -> Iterator[tuple[str, str]]:
    seen: set[str] = set()
    for i, item in enumerate(items):
        if not isinstance(item, tuple | list) or len(item) != 2:
            raise TypeError(f"'{name}' item {i} must be a (doc_id, text) pair (got {item!r:.80})")
        doc_id, text = item
        if not isinstance(doc_id, str) or not doc_id:
            error = ValueError if isinstance(doc_id, str) else TypeError
            raise error(f"'{name}' item {i}: the doc id must be a non-empty str (got {describe(doc_id)})")
        if not isinstance(text, str):
            raise TypeError(f"'{name}' document {doc_id!r}: the text must be a str (got {describe(text)})")
        if doc_id in seen or doc_id in known:
            raise ValueError(f"'{name}' lists doc id {doc_id!r} more than once" if doc_id in seen else
                             f"source {doc_id!r} was already added")
        seen.add(doc_id)
        yield doc_id, text


def corpus_fingerprint(pairs: Iterable[tuple[str, str]]) -> str:
    """SHA-256 of the sources' ids and texts, in order: which corpus an index was built from.

    >>> corpus_fingerprint([("d1", "text")])[:12]
    '8bd4234f5af0'
    """
    digest = _Fingerprint()
    for doc_id, text in pairs:
        digest.update(doc_id, text)
    return digest.hexdigest()


class _Fingerprint:
    """:func:`corpus_fingerprint` fed one source at a time."""

    def __init__(self) -> None:
        self._digest = hashlib.sha256()

    def update(self, doc_id: str, text: str) -> None:
        for part in (doc_id, text):
            data = part.encode("utf-8")
            self._digest.update(len(data).to_bytes(8, "little"))
            self._digest.update(data)

    def hexdigest(self) -> str:
        return self._digest.hexdigest()


class Collection:
    """Sources, their segments (as parallel lists of ints), and the index over the segment texts.

    With `texts_on_disk` (an index built or loaded for Ray) the source texts are not held in memory:
    a built collection spools them to a scratch file as they stream in, a loaded one reads them
    from its ``sources.jsonl``, and a text is read back when a hit, a save or a fingerprint needs it.
    """

    def __init__(
        self,
        spec: EmbedderSpec,
        *,
        segment_size: int | None,
        segment_overlap: int,
        device: str | None,
        batch_size: int,
        index: Index | None = None,
        texts_on_disk: bool = False,
    ) -> None:
        window_spans("", size=segment_size, overlap=segment_overlap)  # validates both
        batch_size = check_positive_int(batch_size, "batch_size")  # numpy.int64(32) is 32
        self.spec = spec
        self.segment_size = segment_size
        self.segment_overlap = segment_overlap
        self.device = device
        self.batch_size = batch_size
        self.positions: dict[str, int] = {}
        self.source_ids: list[str] = []
        self.source_texts: list[str] | DiskTexts = DiskTexts.spool() if texts_on_disk else []
        # Segment k is source_texts[seg_source[k]][seg_start[k]:seg_end[k]], number seg_index[k].
        self.seg_source: list[int] = []
        self.seg_index: list[int] = []
        self.seg_start: list[int] = []
        self.seg_end: list[int] = []
        self._segments: list[Segment | None] = []
        self.index = index if index is not None else spec.new_index(device=device, batch_size=batch_size)

    def __len__(self) -> int:
        return len(self.seg_source)

    def add(self, pairs: Iterable[tuple[str, str]], *, show_progress: bool, build: bool) -> int:
        """Segment and index validated `pairs`; returns the number of segments added.

        `build` finishes the index now; otherwise the first search does (a SourceManager that
        grows one source at a time would else rebuild BM25 after every source). With texts on
        disk `pairs` may be a stream: each text is spooled as it comes, none is kept.
        """
        if isinstance(self.source_texts, DiskTexts):
            return self._add_to_disk(pairs, self.source_texts, show_progress=show_progress, build=build)
        pairs = list(pairs)
        rows: list[tuple[int, int, int, int]] = []
        texts: list[str] = []
        for offset, (_, text) in enumerate(pairs):
            for number, (start, end) in enumerate(
                window_spans(text, size=self.segment_size, overlap=self.segment_overlap)
            ):
                rows.append((len(self.source_ids) + offset, number, start, end))
                texts.append(text[start:end])
        # Index first: if encoding fails, the collection is left as it was.
        self.index.add(texts, show_progress=show_progress)
        if build:
            self.index.build()
        for doc_id, text in pairs:
            self.positions[doc_id] = len(self.source_ids)
            self.source_ids.append(doc_id)
            self.source_texts.append(text)
        for source, number, start, end in rows:
            self.seg_source.append(source)
            self.seg_index.append(number)
            self.seg_start.append(start)
            self.seg_end.append(end)
        self._segments.extend([None] * len(rows))
        return len(rows)

    def _add_to_disk(
        self, pairs: Iterable[tuple[str, str]], store: DiskTexts, *, show_progress: bool, build: bool
    ) -> int:
        first = len(self.source_ids)
        ids: list[str] = []
        source: list[int] = []
        number: list[int] = []
        starts: list[int] = []
        ends: list[int] = []
        try:
            for doc_id, text in pairs:
                for n, (start, end) in enumerate(
                    window_spans(text, size=self.segment_size, overlap=self.segment_overlap)
                ):
                    source.append(first + len(ids))
                    number.append(n)
                    starts.append(start)
                    ends.append(end)
                store.append(text)
                ids.append(doc_id)
            # Index first: if encoding fails, the collection is left as it was.
            self.index.add(SegmentTexts(store, source, starts, ends), show_progress=show_progress)
            if build:
                self.index.build()
        except BaseException:
            store.truncate(first)
            raise
        for doc_id in ids:
            self.positions[doc_id] = len(self.source_ids)
            self.source_ids.append(doc_id)
        self.seg_source.extend(source)
        self.seg_index.extend(number)
        self.seg_start.extend(starts)
        self.seg_end.extend(ends)
        self._segments.extend([None] * len(source))
        return len(source)

    def segment(self, position: int) -> Segment:
        if isinstance(self.source_texts, DiskTexts):  # read back for each hit, never cached
            source = self.seg_source[position]
            start, end = self.seg_start[position], self.seg_end[position]
            return Segment(self.source_ids[source], self.seg_index[position], self.source_texts[source][start:end],
                           start, end)
        cached = self._segments[position]
        if cached is None:
            start, end = self.seg_start[position], self.seg_end[position]
            source = self.seg_source[position]
            cached = self._segments[position] = Segment(
                self.source_ids[source], self.seg_index[position], self.source_texts[source][start:end],
                start, end,
            )
        return cached

    def segment_texts(self) -> Sequence[str]:
        texts = self.source_texts
        if isinstance(texts, DiskTexts):
            return SegmentTexts(texts, self.seg_source, self.seg_start, self.seg_end)
        return [
            texts[s][a:b] for s, a, b in zip(self.seg_source, self.seg_start, self.seg_end, strict=True)
        ]

    def search_many(self, queries: Sequence[str], *, limit: int, show_progress: bool) -> list[list[SearchHit]]:
        if not self.seg_source:
            return [[] for _ in queries]
        rankings = self.index.search_many(queries, limit=limit, show_progress=show_progress)
        segment = self.segment
        return [SearchHit.ranked([segment(p) for p in at.tolist()], scores.tolist()) for at, scores in rankings]

    def fingerprint(self) -> str:
        return corpus_fingerprint(zip(self.source_ids, self.source_texts, strict=True))

    # -- on disk -------------------------------------------------------------------------------

    def save(self, directory: str | os.PathLike[str], *, overwrite: bool) -> Path:
        if not self.seg_source:
            raise ValueError("cannot save an empty index: add sources first")
        target = Path(directory)
        replacing = target.exists() and not (target.is_dir() and not any(target.iterdir()))
        if replacing:
            if not overwrite:
                raise FileExistsError(f"{target} already exists; pass overwrite=True to replace it")
            if not (target / MANIFEST).is_file():
                raise FileExistsError(f"{target} exists and is not an ef index; refusing to replace it")
        target.parent.mkdir(parents=True, exist_ok=True)
        # A symlinked index folder stays a link: the folder it points to is replaced.
        real = Path(os.path.realpath(target))
        # Built beside the target under a short .ef-…tmp name (a killed save's folder is cleared by
        # the next one), with mkdir's usual permissions rather than mkdtemp's 0o700.
        try:
            tmp = Path(temporary_directory(real.parent))
        except OSError as error:
            _reraise_for(error, target)
        try:
            self._write(tmp)
            if replacing:
                replace_directory(tmp, real)  # the old index or the new one at `target`, never neither
            else:
                os.replace(tmp, real)  # an empty directory is replaced too
        except BaseException as error:
            shutil.rmtree(tmp, ignore_errors=True)
            if isinstance(error, OSError):
                _reraise_for(error, target)
            raise
        return target

    def _write(self, directory: Path) -> None:
        with open(directory / SOURCES, "w", encoding="utf-8", newline="\n") as f:
            for doc_id, text in zip(self.source_ids, self.source_texts, strict=True):
                f.write(json.dumps({"_id": doc_id, "text": text}, ensure_ascii=False, allow_nan=False) + "\n")
        table = np.array([self.seg_source, self.seg_index, self.seg_start, self.seg_end], dtype=np.int64).T
        np.save(directory / SEGMENTS, np.ascontiguousarray(table), allow_pickle=False)
        self.index.save(directory)
        files = {
            path.relative_to(directory).as_posix(): path.stat().st_size
            for path in sorted(directory.rglob("*"))
            if path.is_file()
        }
        manifest = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "ef_version": ef.__version__,
            "embedder": str(self.spec),
            "segment_size": self.segment_size,
            "segment_overlap": self.segment_overlap,
            "n_sources": len(self.source_ids),
            "n_segments": len(self.seg_source),
            "corpus_sha256": self.fingerprint(),
            "index": self.spec.index_info(self.index),
            "files": files,
        }
        (directory / MANIFEST).write_text(json.dumps(manifest, indent=2, allow_nan=False) + "\n", encoding="utf-8")

    @classmethod
    def load(
        cls,
        directory: str | os.PathLike[str],
        *,
        embedder: str | None,
        device: str | None,
        batch_size: int,
        engine: Any = None,
    ) -> Collection:
        root = Path(directory)
        manifest = read_manifest(root)
        spec = parse_embedder(manifest["embedder"])
        if embedder is not None and str(parse_embedder(embedder)) != str(spec):
            raise ValueError(
                f"{root} holds an index built with embedder {str(spec)!r}, not {embedder!r}: "
                f"use another directory or delete this one"
            )
        for name, size in manifest["files"].items():
            path = root / name
            if not path.is_file():
                raise ValueError(f"{path} is missing; {DAMAGED}")
            if path.stat().st_size != size:
                raise ValueError(f"{path} has {path.stat().st_size} bytes, the manifest says {size}; {DAMAGED}")
        collection = cls(
            spec,
            segment_size=manifest["segment_size"],
            segment_overlap=manifest["segment_overlap"],
            device=device,
            batch_size=batch_size,
            index=_NoIndex(),
        )
        # Searched on Ray: the texts stay in sources.jsonl, read back when needed.
        collection._read(root, manifest, texts_on_disk=engine is not None)
        collection.index = spec.load_index(
            root, manifest["index"], n_rows=manifest["n_segments"], texts=collection.segment_texts,
            device=device, batch_size=batch_size, engine=engine,
        )
        if len(collection.index) != len(collection):
            raise ValueError(
                f"{root}: the index holds {len(collection.index)} segments, the manifest "
                f"{len(collection)}; {DAMAGED}"
            )
        return collection

    def _read(self, root: Path, manifest: Mapping[str, Any], *, texts_on_disk: bool) -> None:
        path = root / SOURCES
        store = self.source_texts
        records: Iterator[tuple[int, Any]]
        if texts_on_disk:
            store, records = DiskTexts.jsonl(path)
            self.source_texts = store
        else:
            records = iter_json_objects(path)
        text_lengths: list[int] = []
        digest = _Fingerprint()
        try:
            for number, record in records:
                doc_id = record.get("_id") if isinstance(record, dict) else None
                text = record.get("text") if isinstance(record, dict) else None
                if not isinstance(doc_id, str) or not isinstance(text, str) or doc_id in self.positions:
                    raise ValueError(
                        f"{path}:{number}: a source record needs a new str '_id' and a str 'text'; {DAMAGED}"
                    )
                self.positions[doc_id] = len(self.source_ids)
                self.source_ids.append(doc_id)
                if isinstance(store, DiskTexts):  # kept on disk: only its length and its part of the digest
                    text_lengths.append(len(text))
                    digest.update(doc_id, text)
                else:
                    store.append(text)
        except ValueError as error:
            if DAMAGED in str(error):
                raise
            raise ValueError(f"{error}; {DAMAGED}") from error
        fingerprint = digest.hexdigest() if isinstance(store, DiskTexts) else self.fingerprint()
        if len(self.source_ids) != manifest["n_sources"] or fingerprint != manifest["corpus_sha256"]:
            raise ValueError(f"{path} does not hold the sources the manifest describes; {DAMAGED}")
        table_path = root / SEGMENTS
        try:
            table = np.load(table_path, allow_pickle=False)
        except (ValueError, OSError) as error:
            raise ValueError(f"{table_path}: unreadable ({error}); {DAMAGED}") from error
        n = manifest["n_segments"]
        if table.dtype != np.int64 or table.shape != (n, 4):
            raise ValueError(f"{table_path}: expected int64 rows of 4, {n} of them, found {table.dtype} {table.shape}; "
                             f"{DAMAGED}")
        lengths = np.array(text_lengths if isinstance(store, DiskTexts) else [len(t) for t in store], dtype=np.int64)
        source, _, start, end = table.T
        if n and (
            source.min() < 0 or source.max() >= len(lengths) or start.min() < 0
            or (end < start).any() or (end > lengths[np.clip(source, 0, len(lengths) - 1)]).any()
        ):
            raise ValueError(f"{table_path}: segment offsets outside their sources; {DAMAGED}")
        self.seg_source, self.seg_index, self.seg_start, self.seg_end = (col.tolist() for col in table.T)
        self._segments = [None] * n


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


# Every manifest field Collection.load reads: (name, check, what the check wants).
_FIELDS: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
    ("embedder", lambda v: isinstance(v, str), "an embedder name"),
    ("segment_size", lambda v: v is None or (_count(v) and v > 0), "a positive integer or null"),
    ("segment_overlap", _count, "a non-negative integer"),
    ("n_sources", _count, "a non-negative integer"),
    ("n_segments", _count, "a non-negative integer"),
    ("corpus_sha256", lambda v: isinstance(v, str), "a string"),
    ("index", lambda v: isinstance(v, dict), "an object"),
    ("files", lambda v: isinstance(v, dict) and all(_count(size) for size in v.values()),
     "an object of file sizes in bytes"),
)


def read_manifest(root: Path) -> dict[str, Any]:
    """The manifest of the index in `root`, its fields checked."""
    path = root / MANIFEST
    if not root.is_dir():
        raise FileNotFoundError(f"index directory {root} does not exist")
    if not path.is_file():
        raise FileNotFoundError(f"{root} is not an ef index: {MANIFEST} is missing")
    try:
        manifest = read_json(path)
    except ValueError as error:
        raise ValueError(f"{error}; {DAMAGED}") from error
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise ValueError(f"{path}: not an ef index manifest (no \"format\": \"{FORMAT}\")")
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        raise ValueError(
            f"{root} holds an ef index of format version {version!r}; this ef (version {ef.__version__}) "
            f"reads version {FORMAT_VERSION}: delete the directory and build the index again"
        )
    for key, valid, what in _FIELDS:
        if key not in manifest:
            raise ValueError(f"{path}: field {key!r} is missing; {DAMAGED}")
        if not valid(manifest[key]):
            raise ValueError(f"{path}: field {key!r} must be {what} (got {manifest[key]!r:.80}); {DAMAGED}")
    _confine(root, path, manifest["files"])
    try:
        parse_embedder(manifest["embedder"])
    except ValueError as error:
        raise ValueError(f"{path}: field 'embedder' is invalid ({error}); {DAMAGED}") from error
    try:
        window_spans("", size=manifest["segment_size"], overlap=manifest["segment_overlap"])
    except ValueError as error:
        raise ValueError(
            f"{path}: fields 'segment_size' and 'segment_overlap' do not fit together ({error}); {DAMAGED}"
        ) from error
    return manifest


def _confine(root: Path, manifest_path: Path, files: Mapping[str, int]) -> None:
    """Refuse a manifest or a folder that reaches outside the index folder.

    The loader stats every file the manifest lists and reads the index's own files, so a name
    like ``/etc/hostname`` or ``../x``, or a symlink inside the folder pointing out of it, would
    make it reveal (or read) something that is not part of the index.
    """
    top = root.resolve()
    for name in files:
        relative = PurePosixPath(name)
        outside = relative.is_absolute() or ".." in relative.parts or not (root / name).resolve().is_relative_to(top)
        if not name or outside:
            raise ValueError(
                f"{manifest_path}: file {name!r} lies outside the index folder {root}; {DAMAGED}"
            )
    for entry in sorted(root.rglob("*")):
        if entry.is_symlink() and not entry.resolve().is_relative_to(top):
            raise ValueError(
                f"{manifest_path}: {entry} is a symbolic link out of the index folder {root}; {DAMAGED}"
            )


def _reraise_for(error: OSError, target: Path) -> NoReturn:
    """Raise a system error of a save again naming `target`, the folder the caller asked for,
    not the temporary folder beside it (a read-only folder, a full disk)."""
    if error.errno is None:
        raise error
    raise OSError(error.errno, f"cannot save the index ({error.strerror or error})", os.fspath(target)) from error


class _NoIndex:
    """Placeholder while a loaded collection reads its sources, before its index is loaded."""

    def __len__(self) -> int:
        return 0

    def add(self, texts: Sequence[str], *, show_progress: bool) -> None:  # pragma: no cover
        raise RuntimeError("index not loaded")

    def build(self) -> None:  # pragma: no cover
        raise RuntimeError("index not loaded")

    def search_many(self, queries: Sequence[str], *, limit: int, show_progress: bool) -> list[Any]:  # pragma: no cover
        raise RuntimeError("index not loaded")

    def save(self, directory: Path) -> None:  # pragma: no cover
        raise RuntimeError("index not loaded")
