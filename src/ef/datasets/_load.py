"""``load``: a dataset by name (or path) from what is on disk, checked, into the BEIR triple and its facts."""

from __future__ import annotations

import contextlib
import gzip
import os
import shutil
import tarfile
import tempfile
import zipfile
import zlib
from collections.abc import Collection, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ef._validate import check_bool, check_positive_int
from ef.datasets._facts import DatasetFacts
from ef.datasets._places import (
    DatasetNotFoundError,
    Looked,
    ef_root,
    file_state,
    hf_snapshot,
    irds_home,
    md5_of,
    verify_blob,
    verify_download,
)
from ef.datasets._registry import KNOWN, Download, KnownDataset, Part, resolve_name

if TYPE_CHECKING:
    from ef.evaluation._retrieval import RetrievalEvalReport
    from ef.evaluation._run import RunEvalReport

__all__ = ["Dataset", "DatasetFacts", "load", "locate", "where_present"]

Triple = tuple[dict[str, str], dict[str, str], dict[str, dict[str, float]]]


@dataclass(frozen=True, slots=True, repr=False)
class Dataset:
    """A loaded dataset: the BEIR triple (``corpus, queries, qrels = dataset`` unpacks it) and its facts.

    ``source`` says where it was read from and ``verified`` how it was checked. A dataset loaded
    with ``corpus=False`` holds no corpus (``corpus`` raises); :meth:`iter_corpus` reads it block
    by block from where it was found, for a consumer that streams.
    """

    name: str
    split: str
    queries: dict[str, str]
    qrels: dict[str, dict[str, float]]
    facts: DatasetFacts
    source: str
    verified: str
    known: KnownDataset | None = field(default=None, compare=False)
    loaded_corpus: dict[str, str] | None = None
    """The corpus read by :func:`load`, ``None`` with ``corpus=False``; see :attr:`corpus`."""
    where: Source | None = field(default=None, compare=False)
    """Where the corpus is read from again by :meth:`iter_corpus`."""

    @property
    def corpus(self) -> dict[str, str]:
        """``{doc_id: text}``; a ``ValueError`` for a dataset loaded with ``corpus=False``."""
        if self.loaded_corpus is None:
            raise ValueError(
                f"{self.name} was loaded with corpus=False: read its corpus block by block with iter_corpus(), "
                "or load it with corpus=True"
            )
        return self.loaded_corpus

    def __iter__(self) -> Iterator[Any]:
        return iter((self.corpus, self.queries, self.qrels))

    def __repr__(self) -> str:
        documents = "corpus not read" if self.loaded_corpus is None else f"{len(self.loaded_corpus):,} documents"
        return (
            f"Dataset({self.name!r}, split={self.split!r}: {documents}, "
            f"{len(self.queries):,} queries, {len(self.qrels):,} judged; {self.facts})"
        )

    def iter_corpus(self, block_size: int = 10_000) -> Iterator[list[tuple[str, str]]]:
        """The corpus as lists of at most `block_size` ``(doc_id, text)`` pairs, in file order.

        Read from disk as it goes (a zip's corpus member is copied to a scratch file first, not
        into memory), so what is held at a time is one block of texts and the ids seen so far
        (which name a duplicate id's line); the lines are checked as :func:`load` checks them.
        A corpus already loaded is cut into blocks from memory.

        >>> from ef.datasets import demo_dataset
        >>> blocks = list(load(demo_dataset(), corpus=False).iter_corpus(block_size=40))
        >>> [len(block) for block in blocks], blocks[0][0][0]
        ([40, 40, 20], 'coffee-01')
        """
        size = check_positive_int(block_size, "block_size")
        if self.loaded_corpus is not None:
            pairs: Iterator[tuple[str, str]] = iter(self.loaded_corpus.items())
        elif self.where is not None:
            pairs = _stream_corpus(self.where)
        else:
            raise ValueError(f"{self.name}: neither a loaded corpus nor a place to read it from")
        return _blocks(pairs, size)

    def evaluate(self, retriever: Any, **options: Any) -> RetrievalEvalReport:
        """:func:`ef.evaluation.evaluate_retrieval` on this dataset's qrels and queries (and its facts'
        ``relevance_level`` and ``ignore_identical_ids``, unless given in `options`)."""
        # Its modules, not the ef.evaluation face: the face's evaluate_retrieval loads a dataset
        # named by a string through this module, so through the face the import would go round.
        from ef.evaluation._retrieval import evaluate_retrieval

        return evaluate_retrieval(retriever, self, **options)

    def evaluate_run(self, run: Any, measures: Sequence[str] | None = None, **options: Any) -> RunEvalReport:
        """:func:`ef.evaluation.evaluate_run` against this dataset's qrels, ``relevance_level`` from its facts."""
        from ef.evaluation._run import evaluate_run

        options.setdefault("relevance_level", self.facts.relevance_level)
        if measures is None:
            return evaluate_run(run, self.qrels, **options)
        return evaluate_run(run, self.qrels, measures, **options)


def _blocks(pairs: Iterator[tuple[str, str]], size: int) -> Iterator[list[tuple[str, str]]]:
    """`pairs` in lists of `size` (the last one shorter); a list is handed over, never kept."""
    block: list[tuple[str, str]] = []
    for pair in pairs:
        block.append(pair)
        if len(block) == size:
            yield block
            block = []
    if block:
        yield block


# --- where each kind of source is read --------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Zip:
    path: Path
    root: str
    verified: str


@dataclass(frozen=True, slots=True)
class _Folder:
    path: Path
    verified: str = "not verified (a folder: no published checksum for extracted files)"


@dataclass(frozen=True, slots=True)
class _Hub:
    corpus: tuple[Path, ...]
    queries: tuple[Path, ...]
    qrels: Path
    description: str


@dataclass(frozen=True, slots=True)
class _Files:
    """MS MARCO: role -> (file, tar member or None, how verified)."""

    parts: dict[str, tuple[Path, str | None, str]]


Source = _Zip | _Folder | _Hub | _Files


def _explicit(path: Path) -> tuple[Source, str]:
    """An explicit folder or zip the caller named, read as it is."""
    if path.is_dir():
        return _Folder(path), str(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"dataset directory {path} does not exist, nor a zip, and it is not a dataset name ef knows "
            "(see: ef datasets list)"
        )
    root = _zip_root(path)
    return _Zip(path, root, "not verified (a zip named by path)"), str(path)


def _published(path: Path) -> tuple[KnownDataset, Download] | None:
    """The known dataset whose published archive `path` is (same size, then same md5), if any."""
    size = path.stat().st_size
    same_size = [(k, k.archive) for k in KNOWN.values() if k.archive is not None and k.archive.size == size]
    if not same_size:
        return None
    digest = md5_of(path)
    return next(((k, archive) for k, archive in same_size if archive.md5 == digest), None)


def _zip_root(path: Path) -> str:
    """The folder inside a BEIR zip that holds corpus.jsonl (``''`` at the top)."""
    with _open_zip(path) as archive:
        roots = sorted(
            name[: -len("corpus.jsonl")].rstrip("/") for name in archive.namelist()
            if name == "corpus.jsonl" or name.endswith("/corpus.jsonl")
        )
    if not roots:
        raise ValueError(f"{path}: no corpus.jsonl in this zip, so it is not a BEIR dataset")
    if len(roots) > 1:
        listed = ", ".join(roots[:3])
        raise ValueError(f"{path}: {len(roots)} BEIR datasets in this zip ({listed} ...); extract the one you want")
    return roots[0]


@contextlib.contextmanager
def _open_zip(path: Path) -> Iterator[zipfile.ZipFile]:
    try:
        archive = zipfile.ZipFile(path)
    except zipfile.BadZipFile as error:
        raise ValueError(f"{path}: not a readable zip archive ({error}): corrupt or truncated") from None
    with archive:
        yield archive


def _beir_candidates(known: KnownDataset, name: str) -> Iterator[tuple[Looked, Source | None]]:
    """Each place a BEIR set may be, in the documented order, with what is there."""
    archive = known.archive
    if archive is not None and known.irds_dir is not None:
        for place, path in (
            ("ir_datasets cache", irds_home() / (archive.irds_path or "")),
            ("ir_datasets downloads", irds_home() / "downloads" / archive.md5),
        ):
            state = file_state(path)
            yield Looked(place, str(path), state), (
                _Zip(path, known.zip_root, "") if state == "present" else None
            )
    if known.hf_repo is not None:
        yield _hub_candidate(known)
    if archive is not None:
        path = ef_root() / archive.cache_path
        state = file_state(path)
        yield Looked("ef cache", str(path), state), (_Zip(path, known.zip_root, "") if state == "present" else None)
    folder = ef_root() / name
    present = (folder / "corpus.jsonl").is_file() or (folder / "corpus.jsonl.gz").is_file()
    state = "present" if present else ("no corpus.jsonl" if folder.is_dir() else "absent")
    yield Looked("ef cache folder", str(folder), state), (_Folder(folder) if present else None)


def _hub_candidate(known: KnownDataset) -> tuple[Looked, Source | None]:
    repo = known.hf_repo or ""
    folder, snapshot, why = hf_snapshot(repo)
    if snapshot is None:
        return Looked("Hugging Face hub cache", str(folder), why), None
    corpus = tuple(sorted((snapshot / "corpus").glob("*.parquet")))
    queries = tuple(sorted((snapshot / "queries").glob("*.parquet")))
    if not corpus or not queries:
        state = f"{why}, without corpus/*.parquet and queries/*.parquet"
        return Looked("Hugging Face hub cache", str(snapshot), state), None
    qrels_folder, qrels_snapshot, qrels_why = hf_snapshot(f"{repo}-qrels")
    looked = Looked("Hugging Face hub cache", f"{snapshot} + {qrels_folder}", f"{why}; {repo}-qrels: {qrels_why}")
    if qrels_snapshot is None:
        return looked, None
    return looked, _Hub(corpus, queries, qrels_snapshot, f"Hugging Face hub cache {snapshot} and {qrels_snapshot}")


def _msmarco_candidates(part: Part) -> Iterator[tuple[Looked, tuple[Path, str | None, str] | None]]:
    download = part.download
    places: list[tuple[str, Path, str | None, bool]] = []
    if download.irds_path is not None:
        places.append(("ir_datasets cache", irds_home() / download.irds_path, part.member, True))
    places.append(("ir_datasets downloads", irds_home() / "downloads" / download.md5, part.member, True))
    if part.irds_plain is not None:
        places.append(("ir_datasets cache (extracted)", irds_home() / part.irds_plain, None, False))
    places.append(("ef cache", ef_root() / download.cache_path, part.member, True))
    for place, path, member, checked in places:
        state = file_state(path)
        how = "" if checked else "not verified (ir_datasets' extracted copy: no published checksum)"
        yield Looked(f"{place} [{part.role}]", str(path), state), ((path, member, how) if state == "present" else None)


def _not_found(known: KnownDataset, name: str, split: str, looked: Sequence[Looked]) -> DatasetNotFoundError:
    expected = "; ".join(
        f"{d.filename} with md5 {d.md5}" + (f" ({d.size:,} bytes)" if d.size else "") + f" from {d.url}"
        for d in known.downloads
    )
    how = (
        f"expected {expected}; fetch {'it' if len(known.downloads) == 1 else 'them'} with: ef datasets fetch {name}"
        if known.downloads
        else f"no published download or checksum ({known.note})"
    )
    places = ", ".join(str(item) for item in looked)
    return DatasetNotFoundError(
        f"{name} (split {split}) is not on this machine; looked in, in order: {places}; {how}", tuple(looked)
    )


def locate(
    name_or_path: str | os.PathLike[str], split: str | None = None
) -> tuple[Source, str, str, KnownDataset | None]:
    """Find a dataset without reading it: ``(source, description, split, known)``; raises if absent.

    Looks in the documented order and stops at the first complete copy, which is verified before
    it is returned (a copy whose checksum differs is an error, not a reason to look further).
    """
    if not isinstance(name_or_path, str | os.PathLike):
        raise TypeError(f"'name_or_path' must be a dataset name or a path (got {type(name_or_path).__name__})")
    if split is not None and not isinstance(split, str):
        raise TypeError(f"'split' must be a str or None (got {type(split).__name__})")
    if split is not None and (not split or "/" in split or split.strip() != split):
        # '' read the default split silently; a '/' or space would name a file outside qrels/
        raise ValueError(f"'split' must be a split name such as 'test' or 'dev', or None (got {split!r})")
    text = os.fspath(name_or_path)
    if not isinstance(text, str):
        raise TypeError(f"'name_or_path' must be a str path, not {type(text).__name__}")
    if not text:  # Path("") is the current directory, which would be read as the dataset
        raise ValueError("'name_or_path' must not be empty (a dataset name or a path)")
    resolved = None if os.path.exists(text) else resolve_name(text)
    if resolved is None:
        if text == "beir/cqadupstack":
            raise ValueError(
                "beir/cqadupstack is 12 forums: name one, e.g. beir/cqadupstack/android (see: ef datasets list)"
            )
        path = Path(text)
        chosen = split or "test"
        source, description = _explicit(path)
        if isinstance(source, _Zip):
            published = _published(path)
            if published is not None:
                known, archive = published
                how = f"md5 {archive.md5} ({known.name}'s published {archive.filename})"
                return _Zip(path, source.root, how), description, split or known.default_split, known
        return source, description, chosen, None
    known, alias_split = resolved
    if split is not None and alias_split is not None and split != alias_split:
        # said alike to split= and to ef eval/compare/report --split (it said split='train' to all)
        raise ValueError(f"{text!r} names split {alias_split!r}, but split {split!r} was asked for")
    chosen = split or alias_split or known.default_split
    if chosen not in known.splits:
        raise ValueError(f"{known.name} has no split {chosen!r} (its splits: {', '.join(known.splits)})")
    looked: list[Looked] = []
    if known.family == "beir":
        for item, candidate in _beir_candidates(known, known.name):
            looked.append(item)
            if candidate is None:
                continue
            found: Source = candidate
            if isinstance(candidate, _Zip) and known.archive is not None:
                verify_download(candidate.path, known.archive, known.name)
                how = f"md5 {known.archive.md5} (BEIR's and ir_datasets' tables)"
                found = _Zip(candidate.path, candidate.root, how)
            return found, f"{item.place} {item.path}", chosen, known
        raise _not_found(known, known.name, chosen, looked)
    parts: dict[str, tuple[Path, str | None, str]] = {}
    for part in known.parts:
        for item, file in _msmarco_candidates(part):
            looked.append(item)
            if file is not None:
                path, member, how = file
                if not how:
                    verify_download(path, part.download, known.name)
                    how = f"md5 {part.download.md5} (ir_datasets' table)"
                parts[part.role] = (path, member, how)
                break
    if len(parts) < len(known.parts):
        raise _not_found(known, known.name, chosen, looked)
    description = "; ".join(
        f"{role}: {path}" + (f"[{member}]" if member else "") for role, (path, member, _) in parts.items()
    )
    return _Files(parts), description, chosen, known


def _size(source: Source | tuple[Path, str | None, str]) -> int:
    if isinstance(source, tuple):
        return source[0].stat().st_size
    if isinstance(source, _Zip):
        return source.path.stat().st_size
    if isinstance(source, _Hub):
        return sum(p.stat().st_size for p in (*source.corpus, *source.queries))
    if isinstance(source, _Folder):
        return sum(p.stat().st_size for p in source.path.rglob("*") if p.is_file())
    return sum(path.stat().st_size for path, _, _ in source.parts.values())


def _megabytes(size: int) -> str:
    return f"{size / 1e6:,.1f} MB"


def where_present(known: KnownDataset) -> list[str]:
    """Where copies of `known` are (complete or partial), with sizes; nothing is read or checked.

    An MS MARCO set is listed by the places that hold its corpus (its queries and qrels are small).
    """
    if not isinstance(known, KnownDataset):  # a name would fail inside, on .family
        raise TypeError(
            f"'known' must be a KnownDataset, such as ef.datasets.KNOWN['beir/scifact'] (got {type(known).__name__})"
        )
    found: list[str] = []
    if known.family == "beir":
        candidates: Iterator[tuple[Looked, Any]] = _beir_candidates(known, known.name)
    else:
        candidates = _msmarco_candidates(next(p for p in known.parts if p.role == "corpus"))
    for looked, source in candidates:
        place = looked.place.removesuffix(" [corpus]")
        if source is not None:
            found.append(f"{place} ({_megabytes(_size(source))})")
        elif looked.state not in ("absent", "no snapshot") and not looked.state.startswith(("absent", "no corpus")):
            found.append(f"{place} ({looked.state})")
    return found


# --- reading ------------------------------------------------------------------------------------


def _splits_in(names: Sequence[str]) -> str:
    found = sorted(name.rsplit("/", 1)[-1].removesuffix(".gz").removesuffix(".tsv") for name in names)
    return ", ".join(found) if found else "none"


def _read_beir(folder: Path, qrels: str, *, corpus: bool) -> Triple:
    """:func:`ef.evaluation.read_beir`; without `corpus`, only the queries and qrels are read (the
    corpus file must be there, to be streamed later)."""
    from ef.evaluation._beir import read_beir

    if corpus:
        return read_beir(folder, qrels=qrels)
    from ef.evaluation._beir import iter_texts
    from ef.trec import read_qrels

    _folder_corpus(folder)
    found = {}
    for name in ("queries.jsonl", qrels):
        path = next((folder / f"{name}{gz}" for gz in ("", ".gz") if (folder / f"{name}{gz}").exists()), None)
        if path is None:
            raise FileNotFoundError(f"{folder / name}: BEIR file not found (nor its .gz)")
        found[name] = path
    return {}, dict(iter_texts(str(found["queries.jsonl"]), corpus=False)), read_qrels(found[qrels])


def _read_folder(folder: Path, split: str, *, corpus: bool = True) -> Triple:
    nested = f"qrels/{split}.tsv"
    if any((folder / f"{nested}{gz}").exists() for gz in ("", ".gz")):
        return _read_beir(folder, nested, corpus=corpus)
    if split == "test" and any((folder / f"qrels.tsv{gz}").exists() for gz in ("", ".gz")):
        return _read_beir(folder, "qrels.tsv", corpus=corpus)  # write_beir's flat layout
    there = [p.name for p in (folder / "qrels").glob("*.tsv*")] if (folder / "qrels").is_dir() else []
    raise FileNotFoundError(f"{folder}: no split {split!r}: no {nested} (splits there: {_splits_in(there)})")


def _read_zip(source: _Zip, split: str, *, corpus: bool = True) -> Triple:
    prefix = f"{source.root}/" if source.root else ""
    wanted = {"corpus.jsonl": f"{prefix}corpus.jsonl", "queries.jsonl": f"{prefix}queries.jsonl",
              f"qrels/{split}.tsv": f"{prefix}qrels/{split}.tsv"}
    with _open_zip(source.path) as archive, tempfile.TemporaryDirectory(prefix="ef-dataset-") as scratch:
        names = set(archive.namelist())
        if wanted[f"qrels/{split}.tsv"] not in names and split == "test" and f"{prefix}qrels.tsv" in names:
            wanted[f"qrels/{split}.tsv"] = f"{prefix}qrels.tsv"  # write_beir's flat layout, as a folder reads it
        if wanted[f"qrels/{split}.tsv"] not in names:
            there = [n for n in names if n.startswith(f"{prefix}qrels/") and n.endswith(".tsv")]
            missing = wanted[f"qrels/{split}.tsv"]
            raise FileNotFoundError(
                f"{source.path}: no split {split!r}: no {missing} (splits there: {_splits_in(there)})"
            )
        for local, member in wanted.items():
            if member not in names:
                raise ValueError(f"{source.path}: no {member} in this zip, so it is not a whole BEIR dataset")
            target = Path(scratch) / local
            target.parent.mkdir(parents=True, exist_ok=True)
            if local == "corpus.jsonl" and not corpus:
                target.touch()  # present, not copied: iter_corpus() reads it from the zip
                continue
            try:
                with archive.open(member) as stream, open(target, "wb") as out:
                    shutil.copyfileobj(stream, out, 1 << 20)
            except zipfile.BadZipFile as error:  # a member whose CRC-32 or header does not match
                raise ValueError(f"{source.path}: corrupt zip archive ({error})") from None
            except (EOFError, OSError) as error:
                raise ValueError(f"{source.path}: corrupt or truncated zip archive ({error})") from None
        try:
            return _read_beir(Path(scratch), f"qrels/{split}.tsv", corpus=corpus)
        except ValueError as error:  # name the zip's member, not the scratch copy
            raise ValueError(str(error).replace(f"{scratch}/", f"{source.path}:{prefix}")) from None


def _pyarrow() -> Any:
    try:
        import pyarrow.parquet as parquet
    except ImportError:
        raise ImportError(
            "reading the Hugging Face hub cache's parquet files needs pyarrow: pip install 'ef-eval[parquet]'"
        ) from None
    return parquet


def _parquet_column(table: Any, column: str, path: Path) -> list[Any]:
    if column not in table.column_names:
        raise ValueError(f"{path}: no column {column!r} (columns: {', '.join(table.column_names)})")
    return table.column(column).to_pylist()  # type: ignore[no-any-return]


def _text_id(value: object, where: str) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str) or not value:
        raise ValueError(f"{where}: id must be a non-empty string (got {value!r})")
    return value


def _parquet_texts(files: Sequence[Path], *, corpus: bool) -> dict[str, str]:
    parquet = _pyarrow()
    texts: dict[str, str] = {}
    for path in files:
        table = parquet.read_table(path)
        ids = _parquet_column(table, "_id", path)
        bodies = _parquet_column(table, "text", path)
        titled = corpus and "title" in table.column_names
        titles = _parquet_column(table, "title", path) if titled else [None] * len(ids)
        for row, (raw_id, text, title) in enumerate(zip(ids, bodies, titles, strict=True)):
            doc_id, joined = _parquet_row(raw_id, text, title, f"{path}: row {row}", texts)
            texts[doc_id] = joined
    return texts


def _parquet_row(raw_id: object, text: object, title: object, where: str, seen: Collection[str]) -> tuple[str, str]:
    """One parquet row's id and text (title and text joined, BEIR's rule, as read_beir), checked;
    an id already in `seen` is refused."""
    doc_id = _text_id(raw_id, where)
    if doc_id in seen:
        raise ValueError(f"{where}: duplicate _id {doc_id!r}")
    if not isinstance(text, str):
        raise ValueError(f"{where}: 'text' must be a string (got {text!r})")
    if title is not None and not isinstance(title, str):
        raise ValueError(f"{where}: 'title' must be a string (got {title!r})")
    return doc_id, f"{title} {text}" if title else text


def _read_hub(source: _Hub, split: str, *, corpus: bool = True) -> tuple[Triple, str]:
    from ef.trec import read_qrels

    tsv = source.qrels / f"{split}.tsv"
    parquets = sorted(p for p in source.qrels.rglob(f"{split}-*.parquet"))
    if not tsv.is_file() and not parquets:
        there = [p.name for p in source.qrels.rglob("*.tsv")]
        there += [p.name.split("-")[0] for p in source.qrels.rglob("*.parquet")]
        raise FileNotFoundError(
            f"{source.qrels}: no split {split!r}: no {split}.tsv (splits there: {_splits_in(there)})"
        )
    files = [*source.corpus, *source.queries, *([tsv] if tsv.is_file() else parquets)]
    checks = {verify_blob(path) for path in files}
    texts = _parquet_texts(source.corpus, corpus=True) if corpus else {}
    queries = _parquet_texts(source.queries, corpus=False)
    if tsv.is_file():
        qrels = read_qrels(tsv)
    else:
        parquet = _pyarrow()
        qrels = {}
        for path in parquets:
            table = parquet.read_table(path)
            rows = zip(*(_parquet_column(table, c, path) for c in ("query-id", "corpus-id", "score")), strict=True)
            for row, (query_id, doc_id, grade) in enumerate(rows):
                where = f"{path}: row {row}"
                judged = qrels.setdefault(_text_id(query_id, where), {})
                doc = _text_id(doc_id, where)
                if doc in judged:
                    raise ValueError(f"{where}: ({query_id!r}, {doc!r}) judged twice")
                if isinstance(grade, bool) or not isinstance(grade, int | float):
                    raise ValueError(f"{where}: score must be a number (got {grade!r})")
                judged[doc] = grade
    return (texts, queries, qrels), "; ".join(sorted(checks))


@contextlib.contextmanager
def _file_stream(path: Path) -> Iterator[IO[bytes]]:
    """The bytes of `path`, gunzipped when it is gzip."""
    with open(path, "rb") as raw:
        if raw.read(2) == b"\x1f\x8b":
            raw.seek(0)
            with gzip.open(raw) as unzipped:
                yield unzipped  # type: ignore[misc]
        else:
            raw.seek(0)
            yield raw


def _tar_members(path: Path, wanted: Sequence[str]) -> Iterator[tuple[str, IO[bytes]]]:
    """``(member, stream)`` for each wanted member of a tar archive, in one pass over it."""
    left = set(wanted)
    try:
        with tarfile.open(path, "r|*") as archive:
            for entry in archive:
                name = entry.name.removeprefix("./")
                if name in left:
                    stream = archive.extractfile(entry)
                    if stream is not None:
                        left.discard(name)
                        yield name, stream
                if not left:
                    return
    except (tarfile.TarError, EOFError, zlib.error) as error:
        raise ValueError(f"{path}: corrupt or truncated tar archive ({error})") from None
    if left:
        raise ValueError(f"{path}: no member {sorted(left)[0]} in this archive")


def _read_tsv_texts(stream: IO[bytes], where: str) -> dict[str, str]:
    """``id<TAB>text`` lines (MS MARCO's collection and query files), strictly."""
    return dict(_iter_tsv_texts(stream, where))


def _iter_tsv_texts(stream: IO[bytes], where: str) -> Iterator[tuple[str, str]]:
    """``(id, text)`` of each ``id<TAB>text`` line, read as it goes; only the ids seen are kept."""
    from ef.io._source import decode_utf8

    seen: set[str] = set()
    for number, raw in enumerate(stream, 1):
        line = raw.rstrip(b"\r\n")
        if not line.strip():
            continue
        text = decode_utf8(line, f"{where}:{number}")
        record_id, tab, body = text.partition("\t")
        if not tab or not record_id:
            raise ValueError(f"{where}:{number}: expected 'id<TAB>text'")
        if record_id in seen:
            raise ValueError(f"{where}:{number}: duplicate id {record_id!r}")
        seen.add(record_id)
        yield record_id, body


def _read_part(role: str, stream: IO[bytes], where: str) -> Any:
    if role != "qrels":
        return _read_tsv_texts(stream, where)
    from ef.trec import read_qrels

    with tempfile.TemporaryDirectory(prefix="ef-qrels-") as scratch:
        copy = Path(scratch) / "qrels"
        with open(copy, "wb") as out:
            shutil.copyfileobj(stream, out)
        try:
            return read_qrels(copy)
        except ValueError as error:  # name the file read, not the scratch copy
            raise ValueError(str(error).replace(str(copy), where)) from None


def _read_files(source: _Files, *, corpus: bool = True) -> Triple:
    read: dict[str, Any] = {"corpus": {}}
    tars: dict[Path, dict[str, str]] = {}
    for role, (path, member, _) in source.parts.items():
        if role == "corpus" and not corpus:
            continue
        if member is None:
            with _file_stream(path) as stream:
                read[role] = _read_part(role, stream, str(path))
        else:
            tars.setdefault(path, {})[member] = role
    for path, roles in tars.items():  # one pass over each archive, however many of its members are read
        try:
            for member, stream in _tar_members(path, list(roles)):
                read[roles[member]] = _read_part(roles[member], stream, f"{path}:{member}")
        except (tarfile.TarError, EOFError, zlib.error) as error:  # raised while a member is read
            raise ValueError(f"{path}: corrupt or truncated tar archive ({error})") from None
    return read["corpus"], read["queries"], read["qrels"]


# --- streaming the corpus ---------------------------------------------------------------------


def _folder_corpus(folder: Path) -> Path:
    for name in ("corpus.jsonl", "corpus.jsonl.gz"):
        if (folder / name).is_file():
            return folder / name
    raise FileNotFoundError(f"{folder}: no corpus.jsonl (nor corpus.jsonl.gz)")


def _stream_zip(source: _Zip) -> Iterator[tuple[str, str]]:
    from ef.evaluation._beir import iter_texts

    member = f"{source.root}/corpus.jsonl" if source.root else "corpus.jsonl"
    with tempfile.TemporaryDirectory(prefix="ef-corpus-") as scratch:
        copy = Path(scratch) / "corpus.jsonl"
        with _open_zip(source.path) as archive:
            if member not in archive.namelist():
                raise ValueError(f"{source.path}: no {member} in this zip, so it is not a whole BEIR dataset")
            try:  # to disk, not memory: a scratch file is read line by line
                with archive.open(member) as stream, open(copy, "wb") as out:
                    shutil.copyfileobj(stream, out, 1 << 20)
            except zipfile.BadZipFile as error:
                raise ValueError(f"{source.path}: corrupt zip archive ({error})") from None
            except (EOFError, OSError) as error:
                raise ValueError(f"{source.path}: corrupt or truncated zip archive ({error})") from None
        try:
            yield from iter_texts(str(copy), corpus=True)
        except ValueError as error:  # name the zip's member, not the scratch copy
            raise ValueError(str(error).replace(str(copy), f"{source.path}:{member}")) from None


def _stream_parquet(files: Sequence[Path]) -> Iterator[tuple[str, str]]:
    parquet = _pyarrow()
    seen: set[str] = set()
    for path in files:
        reader = parquet.ParquetFile(path)
        names = reader.schema_arrow.names
        for column in ("_id", "text"):
            if column not in names:
                raise ValueError(f"{path}: no column {column!r} (columns: {', '.join(names)})")
        columns = ["_id", "text", *(["title"] if "title" in names else [])]
        row = 0
        for batch in reader.iter_batches(batch_size=4096, columns=columns):
            table = batch.to_pydict()
            titles = table.get("title") or [None] * len(table["_id"])
            for raw_id, text, title in zip(table["_id"], table["text"], titles, strict=True):
                doc_id, joined = _parquet_row(raw_id, text, title, f"{path}: row {row}", seen)
                row += 1
                seen.add(doc_id)
                yield doc_id, joined


def _stream_files(source: _Files) -> Iterator[tuple[str, str]]:
    path, member, _ = source.parts["corpus"]
    if member is None:
        with _file_stream(path) as stream:
            yield from _iter_tsv_texts(stream, str(path))
        return
    try:
        for _, stream in _tar_members(path, [member]):
            yield from _iter_tsv_texts(stream, f"{path}:{member}")
    except (tarfile.TarError, EOFError, zlib.error) as error:  # raised while the member is read
        raise ValueError(f"{path}: corrupt or truncated tar archive ({error})") from None


def _stream_corpus(where: Source) -> Iterator[tuple[str, str]]:
    """``(doc_id, text)`` of a located dataset's corpus, read from disk as it goes."""
    if isinstance(where, _Folder):
        from ef.evaluation._beir import iter_texts

        return iter_texts(str(_folder_corpus(where.path)), corpus=True)
    if isinstance(where, _Zip):
        return _stream_zip(where)
    if isinstance(where, _Hub):
        return _stream_parquet(where.corpus)
    return _stream_files(where)


def load(name_or_path: str | os.PathLike[str], split: str | None = None, *, corpus: bool = True) -> Dataset:
    """Load a dataset by name (``beir/scifact``, ``trec-dl-2019``, an ir_datasets id) or from a folder or zip.

    Nothing goes online. A name is looked for, in this order, and read from the first complete
    copy: (1) the ir_datasets cache (its downloaded archive, read directly, ir_datasets is not
    imported), (2) ir_datasets' ``downloads/<md5>``, (3) the Hugging Face hub cache (``BeIR/<name>``
    and ``BeIR/<name>-qrels``; parquet, with the ``parquet`` extra), (4) ef's own cache (what
    ``ef datasets fetch`` wrote, or a BEIR folder put there). Archives are checked against the md5
    their publishers give before they are read; a mismatch is an error. An existing path is read
    as a BEIR folder or zip.

    Parameters
    ----------
    name_or_path
        A name from ``ef datasets list`` (or an ir_datasets id of one), or a path.
    split
        The qrels split; ``None``: the split an ir_datasets id names, else ``test`` (``dev`` for
        ``msmarco-passage/dev/small``).
    corpus
        ``False``: read the queries and qrels only (found and verified as ever); the corpus is
        then read block by block with :meth:`Dataset.iter_corpus`, and ``Dataset.corpus`` raises.
        For a consumer that streams (``ef eval --engine ray``) or one that needs only the
        judgements (``ef compare --dataset``).

    Raises
    ------
    DatasetNotFoundError
        (a ``FileNotFoundError``) when the dataset is nowhere: the message lists every place
        looked at and what was there, the expected checksum and the command that fetches it.
    ChecksumError
        (a ``ValueError``) when a copy's md5 differs from the published one.
    ValueError
        For an unknown split, a corrupt archive, a malformed line (named ``file:line``).

    Examples
    --------
    >>> from ef.datasets import demo_dataset
    >>> dataset = load(demo_dataset())
    >>> corpus, queries, qrels = dataset
    >>> len(corpus), dataset.facts.relevance_level, dataset.verified
    (100, 1, 'not verified (a folder: no published checksum for extracted files)')
    """
    check_bool(corpus, "corpus")
    source, description, chosen, known = locate(name_or_path, split)
    if isinstance(source, _Folder):
        triple, verified = _read_folder(source.path, chosen, corpus=corpus), source.verified
    elif isinstance(source, _Zip):
        triple, verified = _read_zip(source, chosen, corpus=corpus), source.verified
    elif isinstance(source, _Hub):
        triple, verified = _read_hub(source, chosen, corpus=corpus)
        description = source.description
    else:
        triple = _read_files(source, corpus=corpus)
        verified = "; ".join(f"{role}: {how}" for role, (_, _, how) in source.parts.items())
    texts, queries, qrels = triple
    # An empty file reads as {}: a dataset of no judgement (or query, or document) would score 0,
    # or nothing, everywhere; evaluate_run and trec_eval refuse qrels with no judgement too.
    for value, what in (
        (qrels, f"the qrels of split {chosen!r} hold no judgement"),
        (queries, "its queries hold no query"),
        (texts if corpus else True, "its corpus holds no document"),  # streamed: iter_corpus reads it
    ):
        if not value:
            raise ValueError(f"{description}: {what}: not a dataset to evaluate on")
    non_relevant = any(grade <= 0 for judged in qrels.values() for grade in judged.values())
    facts = DatasetFacts(
        relevance_level=known.relevance_level if known else 1,
        judges_non_relevant=non_relevant,
        query_ids_are_doc_ids=known.query_ids_are_doc_ids if known else False,
    )
    name = known.name if known else os.fspath(name_or_path)
    return Dataset(
        name, chosen, queries, qrels, facts, description, verified, known, texts if corpus else None, source
    )

