"""ef.datasets: datasets by name from the ir_datasets, Hugging Face and ef caches, checked; fetch over HTTP.

Every layout is built small in tmp_path; the caches' roots come from IR_DATASETS_HOME, HF_HOME and
EF_HOME, so nothing outside tmp_path is read. ``beir/tiny`` is a registry entry the tests add, whose
md5 is that of the fixture zip they build (the real table's md5s are those of the real archives).
"""

from __future__ import annotations

import fcntl
import gzip
import hashlib
import http.server
import io
import json
import os
import re
import socket
import sys
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ef.cli import main
from ef.datasets import (
    KNOWN,
    ChecksumError,
    Dataset,
    DatasetFacts,
    DatasetNotFoundError,
    KnownDataset,
    demo_dataset,
    fetch,
    load,
    resolve_name,
)
from ef.datasets._registry import _KNOWN, Download  # KNOWN is a read-only view of _KNOWN

SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "data" / "beir" / "scifact"

CORPUS = (
    '{"_id": "d1", "title": "Paris", "text": "Paris is in France."}\n'
    '{"_id": "d2", "title": "", "text": "Berlin is in Germany."}\n'
    '{"_id": "q2", "title": "Rome", "text": "Rome is in Italy."}\n'
)
QUERIES = '{"_id": "q1", "text": "where is paris"}\n{"_id": "q2", "text": "where is rome"}\n'
QRELS = {"test": "query-id\tcorpus-id\tscore\nq1\td1\t2\nq1\td2\t0\nq2\tq2\t1\n",
         "train": "query-id\tcorpus-id\tscore\nq2\td2\t1\n"}
TRIPLE = (
    {"d1": "Paris Paris is in France.", "d2": "Berlin is in Germany.", "q2": "Rome Rome is in Italy."},
    {"q1": "where is paris", "q2": "where is rome"},
    {"q1": {"d1": 2, "d2": 0}, "q2": {"q2": 1}},
)


def beir_files(root: str = "tiny") -> dict[str, str]:
    prefix = f"{root}/" if root else ""
    files = {f"{prefix}corpus.jsonl": CORPUS, f"{prefix}queries.jsonl": QUERIES}
    files.update({f"{prefix}qrels/{split}.tsv": text for split, text in QRELS.items()})
    return files


def zip_bytes(files: dict[str, str]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


TINY_ZIP = zip_bytes(beir_files())
TINY_MD5 = hashlib.md5(TINY_ZIP).hexdigest()


def write_folder(folder: Path) -> Path:
    for name, text in beir_files("").items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text)
    return folder


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Empty cache roots in tmp_path, and ``beir/tiny`` in the registry (its zip's md5, a local URL)."""
    roots = {name: tmp_path / name for name in ("irds", "hf", "ef")}
    monkeypatch.setenv("IR_DATASETS_HOME", str(roots["irds"]))
    monkeypatch.setenv("HF_HOME", str(roots["hf"]))
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.setenv("EF_HOME", str(roots["ef"]))
    monkeypatch.setenv("EF_NO_PROGRESS", "1")
    archive = Download("http://127.0.0.1:1/tiny.zip", TINY_MD5, len(TINY_ZIP), "beir/tiny.zip", "beir/tiny/source.zip")
    tiny = KnownDataset("beir/tiny", "beir", ("train", "test"), 1, False, archive, "tiny", "beir/tiny", "BeIR/tiny")
    monkeypatch.setitem(_KNOWN, "beir/tiny", tiny)
    return roots


def tiny_url(monkeypatch: pytest.MonkeyPatch, url: str) -> None:
    known = KNOWN["beir/tiny"]
    assert known.archive is not None
    monkeypatch.setitem(_KNOWN, "beir/tiny", replace(known, archive=replace(known.archive, url=url)))


def triple(dataset: object) -> tuple[object, ...]:
    return tuple(dataset)  # type: ignore[call-overload]


# --- the table of names -----------------------------------------------------------------------


def test_the_table_names_every_beir_set_forum_and_msmarco_set() -> None:
    beir = [name for name in KNOWN if name.startswith("beir/") and not name.startswith("beir/cqadupstack/")]
    forums = [name for name in KNOWN if name.startswith("beir/cqadupstack/")]
    assert len(beir) == 18
    assert len(forums) == 12
    assert {"msmarco-passage/dev/small", "trec-dl-2019", "trec-dl-2020"} <= set(KNOWN)
    # BEIR's README table and ir_datasets' downloads.json give this md5 for scifact.zip.
    assert KNOWN["beir/scifact"].archive.md5 == "5f7d1de60b170fc8027bb7898e2efca1"  # type: ignore[union-attr]
    assert KNOWN["beir/robust04"].archive is None  # not distributed: no checksum, none invented
    assert [k for k in KNOWN.values() if k.relevance_level == 2] == [KNOWN["trec-dl-2019"], KNOWN["trec-dl-2020"]]
    assert sorted(k.name for k in KNOWN.values() if k.query_ids_are_doc_ids) == ["beir/arguana", "beir/quora"]


@pytest.mark.parametrize(("alias", "name", "split"), [
    ("beir/scifact/train", "beir/scifact", "train"),
    ("beir/webis-touche2020/v2", "beir/webis-touche2020", None),
    ("beir/cqadupstack/tex", "beir/cqadupstack/tex", None),
    ("msmarco-passage/trec-dl-2020/judged", "trec-dl-2020", None),
    ("msmarco-passage/dev/small", "msmarco-passage/dev/small", None),
])
def test_ir_datasets_ids_are_aliases(alias: str, name: str, split: str | None) -> None:
    resolved = resolve_name(alias)
    assert resolved is not None
    assert (resolved[0].name, resolved[1]) == (name, split)


def test_an_alias_split_and_another_split_argument_conflict(homes: dict[str, Path]) -> None:
    with pytest.raises(ValueError, match=r"^'beir/scifact/train' names split 'train', but split 'test' was asked for$"):
        load("beir/scifact/train", split="test")


# --- each layout ------------------------------------------------------------------------------


def test_a_folder(tmp_path: Path, homes: dict[str, Path]) -> None:
    dataset = load(write_folder(tmp_path / "folder"))
    assert triple(dataset) == TRIPLE
    assert dataset.facts == DatasetFacts(relevance_level=1, judges_non_relevant=True, query_ids_are_doc_ids=False)
    assert dataset.verified == "not verified (a folder: no published checksum for extracted files)"
    assert triple(load(tmp_path / "folder", split="train"))[2] == {"q2": {"d2": 1}}


def test_the_demo_dataset_still_imports_from_ef_datasets() -> None:
    assert Path(demo_dataset()).joinpath("corpus.jsonl").is_file()


def test_an_explicit_beir_zip(tmp_path: Path, homes: dict[str, Path]) -> None:
    path = tmp_path / "mine.zip"
    path.write_bytes(zip_bytes({**beir_files("data"), "data/README": "my own build"}))
    dataset = load(path)
    assert triple(dataset) == TRIPLE
    assert (dataset.name, dataset.verified) == (str(path), "not verified (a zip named by path)")


def test_an_explicit_zip_that_is_a_published_archive_is_that_dataset(tmp_path: Path, homes: dict[str, Path]) -> None:
    path = tmp_path / "download.zip"
    path.write_bytes(TINY_ZIP)
    dataset = load(path)
    assert (dataset.name, dataset.source, triple(dataset)) == ("beir/tiny", str(path), TRIPLE)
    assert dataset.verified == f"md5 {TINY_MD5} (beir/tiny's published tiny.zip)"


def test_a_malformed_line_in_a_zip_names_the_zip_and_member(tmp_path: Path) -> None:
    path = tmp_path / "tiny.zip"
    path.write_bytes(zip_bytes({**beir_files(), "tiny/queries.jsonl": QUERIES + '{"_id": "q3"}\n'}))
    with pytest.raises(ValueError, match=rf"^{path}:tiny/queries.jsonl:3: record has no 'text'$"):
        load(path)


def test_parquet_needs_pyarrow_and_says_how_to_install_it(homes: dict[str, Path],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    build_hub(homes)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)  # as if pyarrow were not installed
    with pytest.raises(ImportError, match=r"^reading the Hugging Face hub cache's parquet files needs pyarrow: "
                                          r"pip install 'ef-eval\[parquet\]'$"):
        load("beir/tiny")


def test_the_ir_datasets_cache(homes: dict[str, Path]) -> None:
    path = homes["irds"] / "beir" / "tiny" / "source.zip"
    path.parent.mkdir(parents=True)
    path.write_bytes(TINY_ZIP)
    dataset = load("beir/tiny")
    assert triple(dataset) == TRIPLE
    assert dataset.source == f"ir_datasets cache {path}"
    assert dataset.verified == f"md5 {TINY_MD5} (BEIR's and ir_datasets' tables)"
    assert list(homes["irds"].rglob("*")) == [path.parent.parent, path.parent, path]  # nothing written there


def test_ir_datasets_downloads_by_md5(homes: dict[str, Path]) -> None:
    path = homes["irds"] / "downloads" / TINY_MD5
    path.parent.mkdir(parents=True)
    path.write_bytes(TINY_ZIP)
    dataset = load("beir/tiny/train")
    assert (dataset.split, triple(dataset)[2]) == ("train", {"q2": {"d2": 1}})
    assert dataset.source == f"ir_datasets downloads {path}"


def _blob(repo: Path, data: bytes, kind: str) -> str:
    if kind == "sha256":
        name = hashlib.sha256(data).hexdigest()
    else:  # git's object id of a small file
        name = hashlib.sha1(f"blob {len(data)}\0".encode() + data).hexdigest()
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    (repo / "blobs" / name).write_bytes(data)
    return name


def hub_snapshot(hub: Path, repo: str, files: dict[str, tuple[bytes, str]], revision: str = "abc123") -> Path:
    """A hub cache folder as huggingface_hub leaves it: blobs/, refs/main, snapshot links into blobs."""
    folder = hub / f"datasets--{repo.replace('/', '--')}"
    (folder / "refs").mkdir(parents=True)
    (folder / "refs" / "main").write_text(revision)
    for name, (data, kind) in files.items():
        link = folder / "snapshots" / revision / name
        link.parent.mkdir(parents=True, exist_ok=True)
        depth = "../" * (len(Path(name).parts) + 1)
        link.symlink_to(f"{depth}blobs/{_blob(folder, data, kind)}")
    return folder


def parquet_bytes(rows: dict[str, list[object]]) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    pq.write_table(pa.table(rows), buffer)
    return buffer.getvalue()


def build_hub(homes: dict[str, Path], *, qrels_tsv: str = QRELS["test"]) -> Path:
    hub = homes["hf"] / "hub"
    corpus = parquet_bytes({"_id": ["d1", "d2", "q2"], "title": ["Paris", "", "Rome"],
                            "text": ["Paris is in France.", "Berlin is in Germany.", "Rome is in Italy."]})
    queries = parquet_bytes({"_id": ["q1", "q2"], "text": ["where is paris", "where is rome"]})
    hub_snapshot(hub, "BeIR/tiny", {"corpus/corpus-00000-of-00001.parquet": (corpus, "sha256"),
                                     "queries/queries-00000-of-00001.parquet": (queries, "sha256")})
    return hub_snapshot(hub, "BeIR/tiny-qrels", {"test.tsv": (qrels_tsv.encode(), "git")}, revision="def456")


def test_a_hugging_face_hub_snapshot(homes: dict[str, Path]) -> None:
    build_hub(homes)
    dataset = load("beir/tiny")
    assert triple(dataset) == TRIPLE
    assert dataset.verified == (
        "git blob id matches the hub's content address (not a pinned checksum); "
        "sha256 matches the hub's content address (not a pinned checksum)"
    )
    hub = homes["hf"] / "hub"
    assert dataset.source == (f"Hugging Face hub cache {hub}/datasets--BeIR--tiny/snapshots/abc123 and "
                              f"{hub}/datasets--BeIR--tiny-qrels/snapshots/def456")
    blobs = sorted(p.name for p in hub.glob("*/blobs/*"))
    assert sorted(p.name for p in (homes["ef"] / "datasets" / ".verified").iterdir()) == blobs  # hashed once
    assert triple(load("beir/tiny")) == TRIPLE


def test_a_corrupt_hub_blob_is_an_error(homes: dict[str, Path]) -> None:
    qrels = build_hub(homes)
    blob = next((qrels / "blobs").iterdir())
    blob.write_bytes(blob.read_bytes()[:-3])  # truncated behind huggingface_hub's back
    link = qrels / "snapshots" / "def456" / "test.tsv"
    with pytest.raises(ChecksumError) as caught:
        load("beir/tiny")
    assert str(caught.value).startswith(f"{link}: git blob id ")
    assert str(caught.value).endswith(
        f" is not the hub's {blob.name} for this file; the cached blob {blob} is corrupt or truncated: "
        "remove it and download it again with huggingface_hub"
    )


def test_ef_cache_zip_then_folder(homes: dict[str, Path]) -> None:
    folder = write_folder(homes["ef"] / "datasets" / "beir" / "tiny")
    assert load("beir/tiny").source == f"ef cache folder {folder}"
    path = homes["ef"] / "datasets" / "beir" / "tiny.zip"
    path.write_bytes(TINY_ZIP)
    dataset = load("beir/tiny")
    assert (dataset.source, triple(dataset)) == (f"ef cache {path}", TRIPLE)


def test_the_ir_datasets_cache_comes_before_ef_s(homes: dict[str, Path]) -> None:
    write_folder(homes["ef"] / "datasets" / "beir" / "tiny")
    path = homes["irds"] / "downloads" / TINY_MD5
    path.parent.mkdir(parents=True)
    path.write_bytes(TINY_ZIP)
    assert load("beir/tiny").source == f"ir_datasets downloads {path}"


def test_msmarco_files_from_the_ir_datasets_cache(homes: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    base = homes["irds"] / "msmarco-passage"
    (base / "trec-dl-2019").mkdir(parents=True)
    (base / "collection.tsv").write_text("0\tThe sky is blue.\n1\tGrass is green.\n")
    (base / "trec-dl-2019" / "queries.tsv").write_text("7\twhat colour is the sky\n")
    qrels = b"7 0 0 3\n7 0 1 1\n"
    (base / "trec-dl-2019" / "qrels").write_bytes(qrels)
    known = KNOWN["trec-dl-2019"]
    parts = tuple(
        replace(part, download=replace(part.download, md5=hashlib.md5(qrels).hexdigest()))
        if part.role == "qrels" else part for part in known.parts
    )
    monkeypatch.setitem(_KNOWN, "trec-dl-2019", replace(known, parts=parts))  # the fixture's qrels, not NIST's
    dataset = load("msmarco-passage/trec-dl-2019/judged")
    assert triple(dataset) == ({"0": "The sky is blue.", "1": "Grass is green."}, {"7": "what colour is the sky"},
                               {"7": {"0": 3, "1": 1}})
    assert dataset.facts == DatasetFacts(relevance_level=2, judges_non_relevant=False, query_ids_are_doc_ids=False)
    # relevance_level 2 by default: doc 1 (grade 1) is not relevant, so P@2 is 1/2 and recall 1.
    report = dataset.evaluate_run({"7": {"1": 2.0, "0": 1.0}}, ["P_2", "recip_rank"])
    assert report.metrics == {"P_2": 0.5, "recip_rank": 0.5}
    assert dataset.verified.startswith("corpus: not verified (ir_datasets' extracted copy")


# --- errors -----------------------------------------------------------------------------------


def test_nothing_found_lists_every_place_the_checksum_and_the_command(homes: dict[str, Path]) -> None:
    irds, hub, ef = homes["irds"], homes["hf"] / "hub", homes["ef"] / "datasets"
    with pytest.raises(DatasetNotFoundError) as caught:
        load("beir/tiny")
    assert str(caught.value) == (
        "beir/tiny (split test) is not on this machine; looked in, in order: "
        f"ir_datasets cache {irds}/beir/tiny/source.zip (absent), "
        f"ir_datasets downloads {irds}/downloads/{TINY_MD5} (absent), "
        f"Hugging Face hub cache {hub}/datasets--BeIR--tiny (absent), "
        f"ef cache {ef}/beir/tiny.zip (absent), ef cache folder {ef}/beir/tiny (absent); "
        f"expected tiny.zip with md5 {TINY_MD5} ({len(TINY_ZIP):,} bytes) from http://127.0.0.1:1/tiny.zip; "
        "fetch it with: ef datasets fetch beir/tiny"
    )
    assert len(caught.value.looked) == 5


def test_a_wrong_checksum_is_an_error_not_a_reason_to_look_further(homes: dict[str, Path]) -> None:
    write_folder(homes["ef"] / "datasets" / "beir" / "tiny")  # a good copy later in the order
    path = homes["irds"] / "beir" / "tiny" / "source.zip"
    path.parent.mkdir(parents=True)
    other = zip_bytes({**beir_files(), "tiny/extra.txt": "another release"})
    path.write_bytes(other)
    with pytest.raises(ChecksumError) as caught:
        load("beir/tiny")
    assert str(caught.value) == (
        f"{path}: md5 {hashlib.md5(other).hexdigest()} is not the published md5 {TINY_MD5} of tiny.zip; "
        f"it has {len(other):,} bytes where the published file has {len(TINY_ZIP):,}; the file is corrupt, "
        "truncated or another release: remove it and run: ef datasets fetch beir/tiny"
    )
    assert path.read_bytes() == other  # another tool's file is never removed


def test_a_truncated_archive_says_so(homes: dict[str, Path]) -> None:
    path = homes["ef"] / "datasets" / "beir" / "tiny.zip"
    path.parent.mkdir(parents=True)
    path.write_bytes(TINY_ZIP[:100])
    with pytest.raises(ChecksumError, match=r"; it has 100 bytes where the published file has [0-9,]+ "
                                            r"\(truncated: an interrupted download\?\); the file is corrupt"):
        load("beir/tiny")


def test_a_truncated_file_in_a_folder_names_file_and_line(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "folder")
    (folder / "corpus.jsonl").write_text(CORPUS[: CORPUS.index("Berlin")])
    with pytest.raises(ValueError, match=rf"^{folder}/corpus.jsonl:2: malformed JSON: Unterminated string"):
        load(folder)


def test_a_corrupted_zip(tmp_path: Path) -> None:
    data = bytearray(TINY_ZIP)
    at = data.index(b"Berlin")
    data[at:at + 6] = b"Bonn!!"  # same length: the archive reads, the CRC-32 of the member does not match
    path = tmp_path / "tiny.zip"
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=rf"^{path}: corrupt zip archive \(Bad CRC-32 for file 'tiny/corpus.jsonl'\)$"):
        load(path)
    path.write_bytes(TINY_ZIP[:-30])  # the central directory's end cut off
    with pytest.raises(ValueError, match=rf"^{path}: not a readable zip archive \(File is not a zip file\): "
                                         "corrupt or truncated$"):
        load(path)


def test_a_cache_being_written_by_another_process(homes: dict[str, Path]) -> None:
    target = homes["ef"] / "datasets" / "beir" / "tiny.zip"
    target.parent.mkdir(parents=True)
    target.with_name("tiny.zip.part").write_bytes(TINY_ZIP[:10])
    lock = target.with_name("tiny.zip.lock")
    lock.write_text("4242\n")
    irds = homes["irds"] / "beir" / "tiny" / "source.zip.tmp"
    irds.parent.mkdir(parents=True)
    irds.write_bytes(b"12345")
    with open(lock) as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # as a fetcher holds it while it writes
        with pytest.raises(DatasetNotFoundError) as caught:
            load("beir/tiny")
    message = str(caught.value)
    assert f"ir_datasets cache {irds.with_suffix('')} (being written by ir_datasets, or interrupted: " \
           "source.zip.tmp, 5 bytes)" in message
    assert f"ef cache {target} (being written by another process (pid 4242): tiny.zip.part, " \
           "10 bytes so far)" in message
    with pytest.raises(DatasetNotFoundError, match=r"ef cache \S+ \(an interrupted fetch: tiny.zip.part, 10 bytes\)"):
        load("beir/tiny")  # the lock released: the part is what an interrupted fetch left


def test_missing_splits(tmp_path: Path, homes: dict[str, Path]) -> None:
    with pytest.raises(ValueError, match=r"^beir/scifact has no split 'dev' \(its splits: train, test\)$"):
        load("beir/scifact", split="dev")
    folder = write_folder(tmp_path / "folder")
    with pytest.raises(FileNotFoundError, match=rf"^{folder}: no split 'dev': no qrels/dev.tsv "
                                                r"\(splits there: test, train\)$"):
        load(folder, split="dev")
    path = tmp_path / "tiny.zip"
    path.write_bytes(TINY_ZIP)
    with pytest.raises(FileNotFoundError, match=rf"^{path}: no split 'dev': no tiny/qrels/dev.tsv "
                                                r"\(splits there: test, train\)$"):
        load(path, split="dev")
    build_hub(homes)
    with pytest.raises(FileNotFoundError, match=r"/snapshots/def456: no split 'train': no train.tsv "
                                                r"\(splits there: test\)$"):
        load("beir/tiny", split="train")


def test_cqadupstack_is_named_by_forum() -> None:
    with pytest.raises(ValueError, match=r"^beir/cqadupstack is 12 forums: name one, e\.g\. beir/cqadupstack/android"):
        load("beir/cqadupstack")


# --- fetch over HTTP --------------------------------------------------------------------------


class _Server:
    """A 127.0.0.1 server of one file: Range requests honoured, optionally cut short once, or 404."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.cut_at: int | None = None
        self.bad_range = False
        self.ranges: list[str | None] = []
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.ranges.append(self.headers.get("Range"))
                if self.path != "/tiny.zip":
                    self.send_error(404, "Not Found")
                    return
                start = int(self.headers["Range"][6:-1]) if self.headers.get("Range") else 0
                self.send_response(206 if start else 200)
                if start:
                    first = 0 if server.bad_range else start
                    self.send_header("Content-Range", f"bytes {first}-{len(server.body) - 1}/{len(server.body)}")
                self.send_header("Content-Length", str(len(server.body) - start))
                self.end_headers()
                data = server.body[start:]
                if server.cut_at is not None:
                    data, server.cut_at = data[: server.cut_at], None
                    self.close_connection = True
                self.wfile.write(data)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


@pytest.fixture
def server() -> Iterator[_Server]:
    serving = _Server(TINY_ZIP)
    yield serving
    serving.close()


def test_fetch_downloads_checks_and_renames(homes: dict[str, Path], server: _Server,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    tiny_url(monkeypatch, f"{server.url}/tiny.zip")
    target = homes["ef"] / "datasets" / "beir" / "tiny.zip"
    assert fetch("beir/tiny", show_progress=False) == [target]
    assert target.read_bytes() == TINY_ZIP
    assert sorted(p.name for p in target.parent.iterdir()) == ["tiny.zip", "tiny.zip.lock"]
    assert load("beir/tiny").source == f"ef cache {target}"
    assert fetch("beir/tiny", show_progress=False) == [target]  # present and checked: no second request
    assert server.ranges == [None]


def test_fetch_resumes_an_interrupted_download(homes: dict[str, Path], server: _Server,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    tiny_url(monkeypatch, f"{server.url}/tiny.zip")
    server.cut_at = 100
    target = homes["ef"] / "datasets" / "beir" / "tiny.zip"
    with pytest.raises(OSError, match=rf"^fetching {server.url}/tiny.zip stopped at 100 of {len(TINY_ZIP):,} bytes; "
                                      r"\S+tiny.zip.part keeps them: run the same "
                                      "command again to resume$"):
        fetch("beir/tiny", show_progress=False)
    assert target.with_name("tiny.zip.part").read_bytes() == TINY_ZIP[:100]
    assert not target.exists()
    assert fetch("beir/tiny", show_progress=False) == [target]
    assert server.ranges == [None, "bytes=100-"]
    assert target.read_bytes() == TINY_ZIP


def test_fetch_refuses_a_range_answer_that_is_not_the_one_asked_for(homes: dict[str, Path], server: _Server,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    tiny_url(monkeypatch, f"{server.url}/tiny.zip")
    part = homes["ef"] / "datasets" / "beir" / "tiny.zip.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(TINY_ZIP[:100])
    server.bad_range = True
    with pytest.raises(OSError, match=rf"^{server.url}/tiny.zip answered a request for bytes 100- with "
                                      rf"'bytes 0-{len(TINY_ZIP) - 1}/{len(TINY_ZIP)}'; remove {part} to fetch"):
        fetch("beir/tiny", show_progress=False)
    assert part.read_bytes() == TINY_ZIP[:100]


def test_fetch_removes_a_file_whose_checksum_differs(homes: dict[str, Path], server: _Server,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    tiny_url(monkeypatch, f"{server.url}/tiny.zip")
    server.body = TINY_ZIP.replace(b"Berlin", b"Bonn!!")
    part = homes["ef"] / "datasets" / "beir" / "tiny.zip.part"
    with pytest.raises(ChecksumError) as caught:
        fetch("beir/tiny", show_progress=False)
    assert str(caught.value) == (
        f"{server.url}/tiny.zip gave a file with md5 {hashlib.md5(server.body).hexdigest()}, not the published md5 "
        f"{TINY_MD5}; the download was removed ({part}): the server's file has changed or the transfer was corrupted"
    )
    assert sorted(p.name for p in part.parent.iterdir()) == ["tiny.zip.lock"]


def test_fetch_404(homes: dict[str, Path], server: _Server, monkeypatch: pytest.MonkeyPatch) -> None:
    tiny_url(monkeypatch, f"{server.url}/gone.zip")
    with pytest.raises(OSError, match=rf"^cannot fetch {server.url}/gone.zip: HTTP 404 Not Found$"):
        fetch("beir/tiny", show_progress=False)


def test_fetch_refused_connection_names_the_url(homes: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    tiny_url(monkeypatch, f"http://127.0.0.1:{port}/tiny.zip")
    target = homes["ef"] / "datasets" / "beir" / "tiny.zip"
    with pytest.raises(OSError) as caught:
        fetch("beir/tiny", show_progress=False)
    assert str(caught.value) == (
        f"cannot fetch http://127.0.0.1:{port}/tiny.zip: [Errno 111] Connection refused; ef goes online only here; "
        f"on an offline machine, copy the file from elsewhere to {target}"
    )


def test_a_second_fetcher_stops_at_once(homes: dict[str, Path], server: _Server,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    tiny_url(monkeypatch, f"{server.url}/tiny.zip")
    target = homes["ef"] / "datasets" / "beir" / "tiny.zip"
    target.parent.mkdir(parents=True)
    lock = target.with_name("tiny.zip.lock")
    lock.write_text("777\n")
    with open(lock) as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with pytest.raises(OSError, match=rf"^{target}: another process \(pid 777\) is fetching it now; wait for it"):
            fetch("beir/tiny", show_progress=False)
    assert server.ranges == []


def test_fetch_refuses_what_has_no_public_download() -> None:
    with pytest.raises(ValueError, match=r"^beir/robust04 cannot be fetched: not distributed by BEIR"):
        fetch("beir/robust04")
    with pytest.raises(ValueError, match=r"^unknown dataset 'beir/nope'; the names ef knows: ef datasets list$"):
        fetch("beir/nope")


# --- the command line -------------------------------------------------------------------------


def test_cli_fetch_and_list(homes: dict[str, Path], server: _Server, monkeypatch: pytest.MonkeyPatch,
                            capsys: pytest.CaptureFixture[str]) -> None:
    tiny_url(monkeypatch, f"{server.url}/tiny.zip")
    target = homes["ef"] / "datasets" / "beir" / "tiny.zip"
    assert main(["datasets", "fetch", "beir/tiny", "-q"]) == 0
    assert capsys.readouterr().out == f"{target}: md5 verified\n"
    write_folder(homes["ef"] / "datasets" / "beir" / "tiny")
    assert main(["datasets", "list", "beir/tiny"]) == 0
    size = f"{len(TINY_ZIP) / 1e6:,.1f} MB"
    folder = sum(len(text.encode()) for text in beir_files("").values())
    lines = capsys.readouterr().out.splitlines()
    assert re.split(r"\s{2,}", lines[2]) == ["beir/tiny", "1", size, TINY_MD5, "train,test",
                                    f"ef cache ({size}); ef cache folder ({folder / 1e6:,.1f} MB)"]
    assert lines[-1] == f"ef's cache: {homes['ef'] / 'datasets'}; 'ef datasets fetch NAME' downloads a dataset there"


def test_cli_errors_are_one_line(homes: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["datasets", "fetch", "beir/nope"]) == 2
    assert capsys.readouterr().err == "ef datasets: error: unknown dataset 'beir/nope'; the names ef knows: " \
                                      "ef datasets list\n"
    assert main(["eval", "beir/tiny", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ef eval: error: beir/tiny (split test) is not on this machine; looked in, in order: ")
    assert err.endswith("fetch it with: ef datasets fetch beir/tiny\n")
    assert err.count("\n") == 1


def test_ef_eval_takes_a_name_and_the_dataset_s_facts(homes: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    monkeypatch.setitem(_KNOWN, "beir/tiny", replace(KNOWN["beir/tiny"], query_ids_are_doc_ids=True))
    write_folder(homes["ef"] / "datasets" / "beir" / "tiny")
    out = tmp_path / "report.json"
    assert main(["eval", "beir/tiny", "--quiet", "--k", "1", "--metrics", "ndcg", "--json", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.err == ("ef eval: note: beir/tiny's queries are documents of its corpus; each query's own "
                            "document is dropped from its ranking (--ignore-identical-ids)\n")
    report = json.loads(out.read_text())
    assert (report["dataset"], report["split"], report["n_queries"]) == ("beir/tiny", "test", 2)
    # q2's only relevant document is q2 itself, dropped from its own ranking: NDCG@1 0 there; q1 finds d1.
    assert report["per_query"]["q2"]["ndcg@1"] == 0.0
    assert report["per_query"]["q1"]["ndcg@1"] == 1.0


@pytest.mark.skipif(not SCIFACT.is_dir(), reason="needs ../shared/data/beir/scifact")
def test_ef_eval_beir_scifact_from_ef_s_cache(homes: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    folder = homes["ef"] / "datasets" / "beir" / "scifact"
    folder.mkdir(parents=True)
    for name in ("corpus.jsonl", "queries.jsonl", "qrels"):
        (folder / name).symlink_to(SCIFACT / name)  # the data is linked, never copied
    assert main(["eval", "beir/scifact", "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("beir/scifact, split test: 5183 documents (5183 segments), 300 queries scored")
    assert lines[4].split() == ["ndcg", "0.5433", "0.6400", "0.6531", "0.6791", "0.7036"]


def test_msmarco_dev_small_from_the_tar_archive_in_ef_s_cache(homes: dict[str, Path],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    import tarfile

    members = {"collection.tsv": b"0\tThe sky is blue.\n1\tGrass is green.\n",
               "queries.dev.small.tsv": b"5\tsky colour\n", "qrels.dev.small.tsv": b"5\t0\t0\t1\n"}
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    path = homes["ef"] / "datasets" / "msmarco-passage" / "collectionandqueries.tar.gz"
    path.parent.mkdir(parents=True)
    path.write_bytes(buffer.getvalue())
    known = KNOWN["msmarco-passage/dev/small"]
    md5 = hashlib.md5(buffer.getvalue()).hexdigest()
    parts = tuple(replace(part, download=replace(part.download, md5=md5)) for part in known.parts)
    monkeypatch.setitem(_KNOWN, known.name, replace(known, parts=parts))
    dataset = load("msmarco-passage/dev/small")
    assert (dataset.split, triple(dataset)) == (
        "dev", ({"0": "The sky is blue.", "1": "Grass is green."}, {"5": "sky colour"}, {"5": {"0": 1}}))
    assert dataset.source == "; ".join(f"{role}: {path}[{member}]" for role, member in
                                       zip(("corpus", "queries", "qrels"), members, strict=True))
    assert dataset.verified == "; ".join(f"{role}: md5 {md5} (ir_datasets' table)"
                                         for role in ("corpus", "queries", "qrels"))
    streamed = load("msmarco-passage/dev/small", corpus=False)  # the corpus read from the tar as it goes
    assert list(streamed.iter_corpus(block_size=1)) == [[("0", "The sky is blue.")], [("1", "Grass is green.")]]
    assert (streamed.queries, streamed.qrels) == (dataset.queries, dataset.qrels)


def test_a_checked_archive_is_remembered_until_it_changes(homes: dict[str, Path]) -> None:
    path = homes["ef"] / "datasets" / "beir" / "tiny.zip"
    path.parent.mkdir(parents=True)
    path.write_bytes(TINY_ZIP)
    assert triple(load("beir/tiny")) == TRIPLE
    memo = homes["ef"] / "datasets" / ".verified" / TINY_MD5
    status = path.stat()
    assert memo.read_text() == f"{path}\t{status.st_size}\t{status.st_mtime_ns}\t{status.st_ino}\n"
    path.write_bytes(TINY_ZIP.replace(b"Berlin", b"Bonn!!"))  # same size, changed in place
    os.utime(path, ns=(status.st_atime_ns, status.st_mtime_ns + 1))
    with pytest.raises(ChecksumError, match=rf"^{path}: md5 [0-9a-f]{{32}} is not the published md5 {TINY_MD5}"):
        load("beir/tiny")


def test_ef_eval_names_trec_dl_s_relevance_level(homes: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    base = homes["irds"] / "msmarco-passage"
    (base / "trec-dl-2020").mkdir(parents=True)
    (base / "collection.tsv").write_text("0\tThe sky is blue.\n1\tGrass is green.\n")
    queries = b"7\twhat colour is the sky\n"
    (base / "trec-dl-2020" / "queries.tsv.gz").write_bytes(gzip.compress(queries))
    qrels = b"7 0 0 3\n7 0 1 1\n"
    (base / "trec-dl-2020" / "qrels").write_bytes(qrels)
    known = KNOWN["trec-dl-2020"]
    md5s = {"queries": hashlib.md5((base / "trec-dl-2020" / "queries.tsv.gz").read_bytes()).hexdigest(),
            "qrels": hashlib.md5(qrels).hexdigest()}
    parts = tuple(replace(p, download=replace(p.download, md5=md5s[p.role])) if p.role in md5s else p
                  for p in known.parts)
    monkeypatch.setitem(_KNOWN, "trec-dl-2020", replace(known, parts=parts))
    assert main(["eval", "trec-dl-2020", "--quiet", "--k", "1", "--metrics", "ndcg"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ("ef eval: note: trec-dl-2020's official binary measures count grade >= 2 as relevant, "
                            "so recall, precision, mrr and map here do too (-l 2, the dataset's default; -l 1 counts "
                            "every positive grade)\n")
    assert captured.out.splitlines()[0].startswith("trec-dl-2020, split test: 2 documents (2 segments), 1 queries")


def _trec_dl_2020(homes: dict[str, Path], monkeypatch: pytest.MonkeyPatch, qrels: bytes) -> None:
    """trec-dl-2020 in the ir_datasets cache: 3 passages, query 7, `qrels`; the md5s made to match."""
    base = homes["irds"] / "msmarco-passage"
    (base / "trec-dl-2020").mkdir(parents=True)
    (base / "collection.tsv").write_text("0\tThe sky is blue.\n1\tThe sky is blue today.\n2\tGrass is green.\n")
    (base / "trec-dl-2020" / "queries.tsv.gz").write_bytes(gzip.compress(b"7\tsky blue\n"))
    (base / "trec-dl-2020" / "qrels").write_bytes(qrels)
    known = KNOWN["trec-dl-2020"]
    md5s = {"queries": hashlib.md5((base / "trec-dl-2020" / "queries.tsv.gz").read_bytes()).hexdigest(),
            "qrels": hashlib.md5(qrels).hexdigest()}
    parts = tuple(replace(p, download=replace(p.download, md5=md5s[p.role])) if p.role in md5s else p
                  for p in known.parts)
    monkeypatch.setitem(_KNOWN, "trec-dl-2020", replace(known, parts=parts))


def test_ef_eval_takes_trec_dl_s_level_as_its_default_l(homes: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # Passage 0 graded 1, passage 1 graded 3: at level 2 only passage 1 is relevant.
    _trec_dl_2020(homes, monkeypatch, b"7 0 0 1\n7 0 1 3\n")
    reports: dict[str, tuple[dict[str, Any], str]] = {}
    for flags in ([], ["-l", "1"], ["-l", "2"], ["--level", "3"]):
        out = tmp_path / f"report{len(reports)}.json"
        args = ["eval", "trec-dl-2020", "--quiet", "--k", "3", "--metrics", "recall,ndcg", "--json", str(out), *flags]
        assert main(args) == 0
        reports[" ".join(flags)] = (json.loads(out.read_text()), capsys.readouterr().err)
    default, err = reports[""]
    assert default["options"]["relevance_level"] == 2
    assert err.startswith("ef eval: note: trec-dl-2020's official binary measures count grade >= 2 as relevant")
    one, err = reports["-l 1"]
    assert err == ("ef eval: note: -l 1: recall, precision, mrr and map count grade >= 1; trec-dl-2020's official "
                   "binary measures count grade >= 2 (its default, -l 2)\n")
    assert (one["options"]["relevance_level"], one["metrics"]["recall@3"]) == (1, 1.0)  # both passages were retrieved
    assert default["metrics"]["recall@3"] == 1.0  # the one passage of grade >= 2
    given, err = reports["-l 2"]  # the default, given: the same numbers and options, no note
    assert (given["metrics"], given["options"], err) == (default["metrics"], default["options"], "")
    # No passage of grade >= 3 but passage 1: recall 1 still; ndcg uses the grades, whatever -l is.
    three = reports["--level 3"][0]
    assert three["options"]["relevance_level"] == 3
    assert {r[0]["metrics"]["ndcg@3"] for r in reports.values()} == {default["metrics"]["ndcg@3"]}


def test_the_level_changes_binary_measures_only(homes: dict[str, Path], monkeypatch: pytest.MonkeyPatch,
                                                 tmp_path: Path) -> None:
    # Grades 1 and 2 on passages 0 and 2; passage 2 (grass) is not retrieved for 'sky blue'.
    _trec_dl_2020(homes, monkeypatch, b"7 0 0 1\n7 0 2 2\n")
    found = {}
    for level in ("1", "2"):
        out = tmp_path / f"l{level}.json"
        assert main(["eval", "trec-dl-2020", "--quiet", "--k", "3", "--metrics", "recall,precision,ndcg",
                     "-l", level, "--json", str(out)]) == 0
        found[level] = json.loads(out.read_text())["metrics"]
    # At -l 1 passage 0 counts (1 of 2 relevant found); at -l 2 only passage 2, which BM25 misses.
    assert (found["1"]["recall@3"], found["2"]["recall@3"]) == (0.5, 0.0)
    assert (round(found["1"]["precision@3"], 4), found["2"]["precision@3"]) == (0.3333, 0.0)
    assert found["1"]["ndcg@3"] == found["2"]["ndcg@3"] > 0


def test_evaluate_retrieval_takes_a_dataset_name_and_its_facts(homes: dict[str, Path],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from ef.evaluation import evaluate_retrieval

    _trec_dl_2020(homes, monkeypatch, b"7 0 0 1\n7 0 2 2\n")
    ranking = ["0", "1", "2"]
    by_name = evaluate_retrieval(lambda query, limit: ranking[:limit], "trec-dl-2020", k_values=(1,),
                                 metrics=("precision",))
    assert by_name.metrics == {"precision@1": 0.0}  # passage 0 has grade 1 < 2, the dataset's level
    dataset = load("trec-dl-2020", corpus=False)
    assert evaluate_retrieval(lambda query, limit: ranking[:limit], dataset, k_values=(1,), metrics=("precision",),
                              relevance_level=1).metrics == {"precision@1": 1.0}
    assert dataset.evaluate(lambda query, limit: ranking[:limit], k_values=(1,),
                            metrics=("precision",)).metrics == {"precision@1": 0.0}
    with pytest.raises(TypeError, match=r"^'queries' must be left out when 'qrels' is a dataset \(trec-dl-2020\): "
                                        r"its queries are used \(a qrels file is read with ef.trec.read_qrels\)$"):
        evaluate_retrieval(lambda query, limit: ranking, dataset, {"7": "sky"})
    with pytest.raises(TypeError, match=r"^'queries' must be left out when 'qrels' is a dataset \('qrels.tsv'\)"):
        evaluate_retrieval(lambda query, limit: ranking, "qrels.tsv", {"7": "sky"})
    with pytest.raises(TypeError, match=r"^'qrels' must be a mapping \{query_id: \{doc_id: grade\}\}, a dataset "
                                        r"name or path, or an ef.datasets.Dataset \(got list\)$"):
        evaluate_retrieval(lambda query, limit: ranking, [], {"7": "sky"})  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^'queries' is required when 'qrels' is a mapping"):
        evaluate_retrieval(lambda query, limit: ranking, {"7": {"0": 1}})
    with pytest.raises(ValueError, match=r"^'relevance_level' must be a finite number > 0 \(got 0\)$"):
        evaluate_retrieval(lambda query, limit: ranking, dataset, relevance_level=0)


def test_bad_argument_types_are_named() -> None:
    with pytest.raises(TypeError, match=r"^'name_or_path' must be a dataset name or a path \(got int\)$"):
        load(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"^'split' must be a str or None \(got int\)$"):
        load("beir/scifact", split=1)  # type: ignore[arg-type]


@pytest.mark.skipif(not SCIFACT.is_dir(), reason="needs ../shared/data/beir/scifact")
def test_a_scifact_zip_built_here_is_not_the_published_one(homes: dict[str, Path], tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "scifact.zip"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
            archive.write(SCIFACT / name, f"scifact/{name}")
    cached = homes["ef"] / "datasets" / "beir" / "scifact.zip"
    cached.parent.mkdir(parents=True)
    cached.symlink_to(path)
    # In ef's cache a zip must be BEIR's own: this one has other bytes (no train split, other timestamps).
    assert main(["eval", "beir/scifact", "--quiet"]) == 2
    assert capsys.readouterr().err.startswith(
        f"ef eval: error: {cached}: md5 {hashlib.md5(path.read_bytes()).hexdigest()} is not the published md5 "
        "5f7d1de60b170fc8027bb7898e2efca1 of scifact.zip; it has "
    )
    # Named by its path it is read as it is, unverified, with the reference numbers.
    assert main(["eval", str(path), "--quiet"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"{path}, split test: 5183 documents (5183 segments), 300 queries scored")
    assert lines[4].split() == ["ndcg", "0.5433", "0.6400", "0.6531", "0.6791", "0.7036"]


_ID = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp")), min_size=1, max_size=6).filter(
    lambda value: not value.startswith('"'))
_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    corpus=st.dictionaries(_ID, _TEXT, min_size=1, max_size=4),
    queries=st.dictionaries(_ID, _TEXT, min_size=1, max_size=3),
    grades=st.lists(st.integers(-1, 3), min_size=1, max_size=6),
    block=st.integers(1, 3),
)
def test_every_layout_reads_the_same_triple(tmp_path_factory: pytest.TempPathFactory, corpus: dict[str, str],
                                            queries: dict[str, str], grades: list[int], block: int) -> None:
    from ef.evaluation import write_beir

    doc_ids, query_ids = list(corpus), list(queries)
    qrels: dict[str, dict[str, float]] = {}
    for i, grade in enumerate(grades):
        qrels.setdefault(query_ids[i % len(query_ids)], {})[doc_ids[i % len(doc_ids)]] = grade
    root = tmp_path_factory.mktemp("layouts")
    folder = root / "folder"
    write_beir(folder, corpus, queries, qrels)
    path = root / "data.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for name in ("corpus.jsonl", "queries.jsonl"):
            archive.write(folder / name, f"ds/{name}")
        archive.write(folder / "qrels.tsv", "ds/qrels/test.tsv")
    hub = root / "hub"
    hub_snapshot(hub, "BeIR/prop", {
        "corpus/corpus-00000-of-00001.parquet": (parquet_bytes(
            {"_id": doc_ids, "title": [""] * len(doc_ids), "text": list(corpus.values())}), "sha256"),
        "queries/queries-00000-of-00001.parquet": (parquet_bytes(
            {"_id": query_ids, "text": list(queries.values())}), "sha256"),
    })
    hub_snapshot(hub, "BeIR/prop-qrels", {"test.tsv": ((folder / "qrels.tsv").read_bytes(), "git")})
    known = replace(KNOWN["beir/scifact"], name="beir/prop", archive=None, hf_repo="BeIR/prop")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_CACHE", str(hub))
        patch.setenv("EF_HOME", str(root / "ef"))
        patch.setitem(_KNOWN, "beir/prop", known)
        from_hub = load("beir/prop")
        streamed_hub = load("beir/prop", corpus=False)
    expected = (corpus, queries, qrels)
    assert triple(load(folder)) == expected
    assert triple(load(path)) == expected
    assert triple(from_hub) == expected
    # The same corpus streamed, in blocks of `block` (the last one shorter), in file order.
    sizes = [block] * (len(corpus) // block) + ([len(corpus) % block] if len(corpus) % block else [])
    for streamed in (load(folder, corpus=False), load(path, corpus=False), streamed_hub, from_hub):
        blocks = list(streamed.iter_corpus(block_size=block))
        assert [len(b) for b in blocks] == sizes
        assert [pair for b in blocks for pair in b] == list(corpus.items())
        assert (streamed.queries, streamed.qrels) == (queries, qrels)
    # (a later grade of the same pair replaces an earlier one: the qrels, not `grades`, say what is judged)
    assert from_hub.facts.judges_non_relevant == (min(g for judged in qrels.values() for g in judged.values()) <= 0)


def test_cli_list_as_json(homes: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    write_folder(homes["ef"] / "datasets" / "beir" / "tiny")
    assert main(["datasets", "list", "beir/tiny", "beir/robust04", "--json"]) == 0
    folder = sum(len(text.encode()) for text in beir_files("").values())
    assert json.loads(capsys.readouterr().out) == {"ef_cache": str(homes["ef"] / "datasets"), "datasets": [
        {"name": "beir/tiny", "splits": ["train", "test"], "relevance_level": 1, "query_ids_are_doc_ids": False,
         "files": [{"url": "http://127.0.0.1:1/tiny.zip", "md5": TINY_MD5, "size": len(TINY_ZIP),
                    "cache_path": "beir/tiny.zip"}],
         "present": [f"ef cache folder ({folder / 1e6:,.1f} MB)"]},
        {"name": "beir/robust04", "splits": ["test"], "relevance_level": 1, "query_ids_are_doc_ids": False,
         "files": [], "present": [], "note": KNOWN["beir/robust04"].note},
    ]}


# --- ef compare on a dataset ------------------------------------------------------------------


def _runs(tmp_path: Path) -> tuple[str, str]:
    """Two runs of beir/tiny's test queries: `a` ranks q1's d1 and q2's q2 first, `b` neither."""
    a, b = tmp_path / "a.trec", tmp_path / "b.trec"
    a.write_text("q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\nq2 Q0 q2 1 2.0 a\nq2 Q0 d2 2 1.0 a\n")
    b.write_text("q1 Q0 d2 1 2.0 b\nq1 Q0 d1 2 1.0 b\nq2 Q0 d2 1 2.0 b\nq2 Q0 q2 2 1.0 b\n")
    return str(a), str(b)


def _compare_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[dict[str, Any], str]:
    assert main(["compare", *args, "-m", "P_1,ndcg_cut_10", "--format", "json", "--resamples", "100"]) == 0
    captured = capsys.readouterr()
    return json.loads(captured.out)["per_query"], captured.err


def test_ef_compare_judges_the_runs_with_a_dataset_s_qrels(homes: dict[str, Path], tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_folder(homes["ef"] / "datasets" / "beir" / "tiny")
    a, b = _runs(tmp_path)
    by_file, _ = _compare_json(capsys, str(folder / "qrels" / "test.tsv"), a, b)
    assert by_file == {"a": {"P_1": [1.0, 1.0], "ndcg_cut_10": [1.0, 1.0]},
                       "b": {"P_1": [0.0, 0.0], "ndcg_cut_10": [0.6309297535714575, 0.6309297535714575]}}
    for arguments in (["--dataset", "beir/tiny", a, b], ["beir/tiny", a, b], ["--dataset", str(folder), a, b],
                  [str(folder), a, b]):
        assert _compare_json(capsys, *arguments) == (by_file, "")
    # --split train reads the train qrels, which judge one query (q2): too few to compare.
    assert main(["compare", "--dataset", "beir/tiny", "--split", "train", a, b]) == 2
    assert capsys.readouterr().err == ("ef compare: error: only 1 queries to compare (missing='zero'): a paired "
                                       "test needs at least 2\n")


def test_ef_compare_takes_the_dataset_s_level_as_its_default_l(homes: dict[str, Path], tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(_KNOWN, "beir/tiny", replace(KNOWN["beir/tiny"], relevance_level=2))
    write_folder(homes["ef"] / "datasets" / "beir" / "tiny")
    a, b = _runs(tmp_path)
    # q1's d1 has grade 2, q2's q2 grade 1: at level 2 run a's first hit for q2 is not relevant.
    per_query, err = _compare_json(capsys, "--dataset", "beir/tiny", a, b)
    assert per_query["a"]["P_1"] == [1.0, 0.0]
    assert err == ("ef compare: note: beir/tiny's official binary measures count grade >= 2 as relevant, so they "
                   "do here (-l 2, the dataset's default; -l 1 counts every positive grade)\n")
    per_query, err = _compare_json(capsys, "--dataset", "beir/tiny", "-l", "1", a, b)
    assert (per_query["a"]["P_1"], err) == ([1.0, 1.0], "")


def test_ef_compare_html_shows_the_dataset_s_queries_and_passages(homes: dict[str, Path], tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    write_folder(homes["ef"] / "datasets" / "beir" / "tiny")
    a, b = _runs(tmp_path)
    page = tmp_path / "page.html"
    assert main(["compare", "--dataset", "beir/tiny", a, b, "-m", "P_1", "--baseline", "a", "--resamples", "100",
                 "--html", str(page)]) == 0
    html = page.read_text()
    # b loses both queries to a: the drill-down shows each query's text and the passages ranked.
    for text in ("where is paris", "where is rome", "Paris Paris is in France.", "Berlin is in Germany.",
                 "Rome Rome is in Italy."):
        assert text in html
    assert "beir/tiny" in html


def test_ef_compare_split_needs_a_dataset(homes: dict[str, Path], tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    folder = write_folder(tmp_path / "tiny")
    a, b = _runs(tmp_path)
    assert main(["compare", str(folder / "qrels" / "test.tsv"), a, b, "--split", "train"]) == 2
    assert capsys.readouterr().err == ("ef compare: error: --split needs a dataset: --dataset NAME, or a dataset "
                                       "name as QRELS\n")
    assert main(["compare", "--dataset", "beir/tiny", a, b]) == 2
    assert capsys.readouterr().err.startswith("ef compare: error: beir/tiny (split test) is not on this machine")


# --- streaming a large corpus -------------------------------------------------------------------


def _big_folder(folder: Path, n: int, width: int) -> Path:
    """A BEIR folder of `n` documents of `width` characters each; one query, one judgement."""
    folder.mkdir(parents=True)
    with open(folder / "corpus.jsonl", "w") as out:
        for i in range(n):
            out.write(json.dumps({"_id": f"d{i}", "title": "", "text": f"{i:08d}" + "x" * (width - 8)}) + "\n")
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "x"}\n')
    (folder / "qrels").mkdir()
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")
    return folder


def _consume(dataset: Dataset, block: int, seen: list[int]) -> None:
    """As a streaming consumer does: use each block (check it is in file order), keep nothing of it."""
    for chunk in dataset.iter_corpus(block_size=block):
        assert chunk[0][1].startswith(f"{sum(seen):08d}")
        seen.append(len(chunk))


def _peak(work: Any) -> int:
    import tracemalloc

    tracemalloc.start()
    try:
        work()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("layout", ["folder", "zip"])
def test_a_streamed_corpus_holds_one_block_not_the_corpus(tmp_path: Path, layout: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import ef.io._source

    # ef's line reader takes 8 MB at a time (a constant); 64 kB here, so that small corpora show the bound.
    monkeypatch.setattr(ef.io._source.iter_chunks, "__defaults__", (1 << 16,))
    width, block = 2_000, 100  # documents of 2 kB, read in blocks of 200 kB of text
    peaks: dict[int, tuple[int, int]] = {}
    for n in (2_000, 4_000):  # 4 MB and 8 MB corpora
        source = _big_folder(tmp_path / f"big{n}", n, width)
        if layout == "zip":
            source = tmp_path / f"big{n}.zip"
            with zipfile.ZipFile(source, "w", zipfile.ZIP_DEFLATED) as archive:
                for name in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
                    archive.write(tmp_path / f"big{n}" / name, f"big/{name}")
        dataset = load(source, corpus=False)
        seen: list[int] = []
        streamed = _peak(lambda: _consume(dataset, block, seen))  # noqa: B023 - called at once, in this iteration
        assert seen == [block] * (n // block)
        whole = _peak(lambda: load(source))  # noqa: B023 - called at once, in this iteration
        assert whole > n * width
        peaks[n] = streamed, whole
    # Twice the corpus: loading it whole holds 4 MB more; streaming it, only the 2,000 more ids seen.
    (streamed_small, whole_small), (streamed_large, whole_large) = peaks[2_000], peaks[4_000]
    assert whole_large - whole_small > 2_000 * width
    assert streamed_large - streamed_small < 500_000
    assert streamed_large < whole_large // 2


def test_the_ray_feed_makes_one_arrow_block_at_a_time() -> None:
    """What ``_encoded_batches`` hands Ray Data is made block by block: at each ``ray.put`` (what
    ``ray.data.from_arrow`` does with each table it takes) the Arrow memory in use is one block,
    not the corpus (50 blocks of 32 texts of 1 kB here)."""
    pa = pytest.importorskip("pyarrow")
    from ef.source_manager import _ray

    texts = [f"{i:06d}" + "x" * 994 for i in range(1_600)]
    at_put: list[int] = []
    rows_put: list[np.ndarray] = []

    class Data:
        def map_batches(self, fn: object, **options: object) -> Data:
            return self

        def iter_batches(self, **_: object) -> Iterator[dict[str, np.ndarray]]:
            for rows in rows_put:
                yield {"row": rows, "embedding": np.zeros((len(rows), 2), dtype=np.float32)}

    def put(table: Any) -> int:
        at_put.append(pa.total_allocated_bytes())
        rows_put.append(np.array(table.column("row").to_pylist()))  # the rows, not the texts
        assert table.column("text").to_pylist()[0] == texts[rows_put[-1][0]]
        return len(rows_put)

    class FakeRay:
        class data:  # noqa: N801 - ray.data's own spelling
            ActorPoolStrategy = staticmethod(lambda size: ("pool", size))

            @staticmethod
            def from_arrow(tables: Any) -> Data:
                [put(t) for t in tables]  # ray.data.from_arrow: from_arrow_refs([ray.put(t) for t in tables])
                return Data()

        @staticmethod
        def cluster_resources() -> dict[str, float]:
            return {"CPU": 2.0}

    before = pa.total_allocated_bytes()
    got = list(_ray._encoded_batches(FakeRay, texts, [(0, 1_600)], model="m", device="cpu", batch_size=8,
                                     workers=None))
    block_bytes = 32 * 1_000  # batch_size 8 x 4 model batches per actor call, 1 kB each
    assert len(at_put) == 50
    assert max(at_put) - before < 2 * block_bytes  # one block in memory (a list would hold 50)
    assert np.concatenate([rows for rows, _ in got]).tolist() == list(range(1_600))


def test_a_dataset_loaded_without_its_corpus_says_how_to_read_it(tmp_path: Path) -> None:
    folder = write_folder(tmp_path / "tiny")
    dataset = load(folder, corpus=False)
    message = (f"{folder} was loaded with corpus=False: read its corpus block by block with iter_corpus(), "
               "or load it with corpus=True")
    with pytest.raises(ValueError) as info:
        _ = dataset.corpus
    assert str(info.value) == message
    with pytest.raises(ValueError, match=re.escape(message)):
        triple(dataset)
    assert repr(dataset).startswith(f"Dataset({str(folder)!r}, split='test': corpus not read, 2 queries, 2 judged;")
    assert dataset != load(folder) == load(folder)  # the corpus read is part of what a Dataset is
    with pytest.raises(ValueError, match=r"^'block_size' must be a positive integer \(got 0\)$"):
        dataset.iter_corpus(block_size=0)
    with pytest.raises(TypeError, match=r"^'corpus' must be a bool"):
        load(folder, corpus="no")  # type: ignore[arg-type]
