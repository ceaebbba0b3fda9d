"""ef.pipeline: the pipeline as data, its content id, grids, and collapsing chunk runs to sources."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import fields

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.pipeline import Pipeline, collapse_to_sources, content_id, expand_grid


@st.composite
def pipelines(draw: st.DrawFn) -> Pipeline:
    retriever = draw(st.sampled_from(["bm25", "dense", "hybrid"]))
    values: dict[str, object] = {"retriever": retriever}
    if retriever != "bm25":
        values["model"] = draw(st.sampled_from(["all-MiniLM-L6-v2", "/models/e5", "bge-small"]))
    if retriever != "dense":
        values["k1"] = draw(st.sampled_from([0.0, 0.9, 1.2, 1.2000001, 1.5, 2.0]))
        values["b"] = draw(st.sampled_from([0.0, 0.4, 0.75, 1.0]))
        values["stemmer"] = draw(st.sampled_from(["english", "none"]))
        values["stopwords"] = draw(st.sampled_from(["english", "none"]))
    size = draw(st.sampled_from([None, 50, 100, 200]))
    values["size"] = size
    if size is not None:
        values["unit"] = draw(st.sampled_from(["words", "chars"]))
        values["overlap"] = draw(st.sampled_from([0, 10, 40]))
    k = draw(st.sampled_from([1, 5, 10, 100]))
    values["k"] = k
    if draw(st.booleans()):
        values["rerank"] = draw(st.sampled_from(["minilm", "bi:/models/x", "cross:/models/ce"]))
        values["rerank_depth"] = draw(st.sampled_from([d for d in (10, 50, 100) if d >= k]))
    if retriever == "hybrid":
        need = values.get("rerank_depth", k)
        values["fusion_depth"] = draw(st.sampled_from([d for d in (100, 200) if d >= need]))
    return Pipeline(**values)  # type: ignore[arg-type]


@settings(max_examples=300, deadline=None)
@given(pipelines(), pipelines())
def test_the_id_is_equal_exactly_when_the_parameters_are(a: Pipeline, b: Pipeline) -> None:
    assert (a.id == b.id) == (a.to_dict() == b.to_dict())
    assert (a.label == b.label) == (a.id == b.id)  # a sweep names its cells by label
    assert (a == b) == (a.to_dict() == b.to_dict())


@settings(max_examples=200, deadline=None)
@given(pipelines())
def test_the_id_round_trips_through_its_dict_and_json(p: Pipeline) -> None:
    again = Pipeline.from_dict(json.loads(json.dumps(p.to_dict())))
    assert again == p
    assert again.id == p.id
    assert again.label == p.label


# One changed parameter per row, from a base where it applies: each must change the id.
_CHANGES = [
    ("bm25", "k1", 0.9), ("bm25", "b", 0.5), ("bm25", "stemmer", "none"), ("bm25", "stopwords", "none"),
    ("dense", "model", "/models/other"), ("bm25", "unit", "chars"), ("bm25", "size", 300), ("bm25", "overlap", 20),
    ("bm25", "rerank", "cross:/m"), ("bm25", "rerank_depth", 50), ("hybrid", "fusion_depth", 150), ("bm25", "k", 5),
    ("bm25", "retriever", "hybrid"),
]


@pytest.mark.parametrize(("retriever", "name", "value"), _CHANGES)
def test_any_parameter_changes_the_id(retriever: str, name: str, value: object) -> None:
    base = Pipeline(retriever, size=200, overlap=40, rerank="minilm", rerank_depth=100, k=10)
    changed = base.replace(**{name: value})
    assert changed.id != base.id
    assert getattr(changed, name) == value


def test_every_field_is_covered_by_the_change_table() -> None:
    assert {f.name for f in fields(Pipeline)} == {name for _, name, _ in _CHANGES}


def test_the_id_is_the_same_in_another_process() -> None:
    cells = expand_grid([
        {"retriever": ["bm25", "dense", "hybrid"], "size": [100, None], "rerank": [None, "minilm"], "k": [10, 100]},
        {"retriever": "bm25", "k1": [0.5, 2.0], "b": [0.3], "stemmer": ["none"], "unit": "chars", "size": 500},
    ])
    script = (
        "import json, sys\nfrom ef.pipeline import Pipeline\n"
        "print(json.dumps([Pipeline.from_dict(d).id for d in json.load(sys.stdin)]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], input=json.dumps([c.to_dict() for c in cells]),
        capture_output=True, text=True, check=True, env={"PYTHONHASHSEED": "123", "PATH": ""},
    )
    assert json.loads(done.stdout) == [c.id for c in cells]
    assert len({c.id for c in cells}) == len(cells) == 3 * 2 * 2 * 2 + 2


def test_content_id_is_sha256_of_the_canonical_json() -> None:
    import hashlib

    expected = hashlib.sha256(b'["s/1",{"a":1.5,"b":[null,"x"]}]').hexdigest()[:16]
    assert content_id("s/1", {"b": [None, "x"], "a": 1.5}) == expected


@pytest.mark.parametrize(
    ("values", "error", "message"),
    [
        ({"retriever": "bm25", "model": "x"}, ValueError,
         "'model' applies to retriever 'dense' or 'hybrid', not 'bm25' (got 'x')"),
        ({"retriever": "dense", "stemmer": "none"}, ValueError,
         "'stemmer' applies to retriever 'bm25' or 'hybrid', not 'dense' (got stemmer='none')"),
        ({"retriever": "sparse"}, ValueError, "'retriever' must be one of 'bm25', 'dense', 'hybrid' (got 'sparse')"),
        ({"b": 1.5}, ValueError, "'b' must be a number between 0.0 and 1.0 (got 1.5)"),
        ({"k1": float("nan")}, ValueError, "'k1' must be a number >= 0.0 (got nan)"),
        ({"k1": "1.2"}, TypeError, "'k1' must be a number >= 0.0 (got '1.2')"),
        ({"overlap": 5}, ValueError, "'overlap' needs a chunk 'size' (got overlap=5, size=None)"),
        ({"size": 10, "overlap": 10}, ValueError, "'overlap' must be smaller than 'size' (got overlap=10, size=10)"),
        ({"k": 0}, ValueError, "'k' must be a positive integer (got 0)"),
        ({"rerank_depth": 50}, ValueError, "'rerank_depth' applies only with a 'rerank' model (got rerank_depth=50)"),
        ({"rerank": "minilm", "rerank_depth": 20, "k": 100}, ValueError,
         "'k' must be at most 'rerank_depth': the reranker orders only its top 20 (got k=100)"),
        ({"fusion_depth": 50}, ValueError, "'fusion_depth' applies to retriever 'hybrid', not 'bm25'"),
        ({"retriever": "hybrid", "fusion_depth": 50, "k": 60}, ValueError,
         "hybrid fuses each list's top 50 ('fusion_depth'): k must be at most that (got 60)"),
    ],
)
def test_bad_pipelines_are_refused_with_the_parameter_named(values: dict, error: type, message: str) -> None:
    with pytest.raises(error) as caught:
        Pipeline(**values)
    assert str(caught.value) == message


def test_labels_name_every_parameter_that_is_not_a_default_of_the_stage() -> None:
    p = Pipeline("hybrid", model="/m", k1=0.9, stemmer="none", unit="chars", size=500, overlap=50,
                 rerank="cross:/ce", rerank_depth=40, fusion_depth=120, k=5)
    assert p.label == "hybrid /m k1=0.9 b=0.75 stemmer=none fusion@120 | 500 chars/50 | rerank cross:/ce@40 | k=5"


def test_a_grid_is_its_cartesian_product_less_the_combinations_that_coincide() -> None:
    cells = expand_grid({
        "retriever": ["bm25", "dense"], "size": [100, "whole"], "overlap": [0, 20],
        "rerank": ["none", "minilm"], "rerank_depth": [50, 100], "k": 10,
    })
    # bm25 and dense alike: sizes (100 with overlap 0 or 20, whole once) x rerank (none once, minilm at 2 depths)
    assert len(cells) == 2 * 3 * 3
    assert len({c.id for c in cells}) == len(cells)
    assert [c.label for c in cells[:4]] == [
        "bm25 k1=1.2 b=0.75 | 100 words | k=10",
        "bm25 k1=1.2 b=0.75 | 100 words | rerank bi:all-MiniLM-L6-v2@50 | k=10",
        "bm25 k1=1.2 b=0.75 | 100 words | rerank bi:all-MiniLM-L6-v2@100 | k=10",
        "bm25 k1=1.2 b=0.75 | 100 words/20 | k=10",
    ]


def test_grid_errors_name_the_combination_or_the_key() -> None:
    with pytest.raises(ValueError) as caught:
        expand_grid({"rerank": "minilm", "rerank_depth": [20], "k": [10, 50]})
    assert str(caught.value) == (
        "grid combination (rerank='minilm', rerank_depth=20, k=50): 'k' must be at most 'rerank_depth': "
        "the reranker orders only its top 20 (got k=50)"
    )
    with pytest.raises(ValueError, match=r"^unknown grid parameter\(s\) 'chunk_size'; known: retriever, model"):
        expand_grid({"chunk_size": [100]})
    with pytest.raises(ValueError, match=r"^grid parameter 'k' has no value$"):
        expand_grid({"k": []})
    # One value twice in a list is a typo that would sweep the cell once, silently.
    with pytest.raises(ValueError, match=r"^grid parameter 'size' lists 16 twice$"):
        expand_grid({"size": [16, 32, 16]})
    with pytest.raises(ValueError, match=r"^grid parameter 'size' lists None twice$"):  # "whole" is None
        expand_grid({"size": ["whole", None]})
    assert len(expand_grid({"size": [16, 32], "k1": [0.9, 1.2]})) == 4
    with pytest.raises(ValueError) as caught:
        expand_grid([Pipeline(k=10), {"k": [5, 10]}])
    assert str(caught.value) == "'grid' lists pipeline 'bm25 k1=1.2 b=0.75 | whole docs | k=10' twice (items 0 and 1)"
    with pytest.raises(TypeError, match=r"^'grid'\[1\] must be a mapping or a Pipeline \(got 3\)$"):
        expand_grid([Pipeline(), 3])


def test_collapsing_a_chunk_run_to_sources_by_hand() -> None:
    # Chunks of three sources; by hand: A's best chunk 0.8, B's 0.9, C's 0.1; D's chunk is in no query.
    source = {"A#0": "A", "A#1": "A", "A#2": "A", "B#0": "B", "B#1": "B", "C#0": "C", "D#0": "D"}
    run = {
        "q1": {"A#0": 0.5, "B#1": 0.9, "A#2": 0.8, "C#0": 0.1, "B#0": 0.2},
        "q2": [("C#0", 3.0), ("A#1", -1.0), ("A#0", -2.0)],
        "q3": {},
    }
    assert collapse_to_sources(run, source) == {
        "q1": {"B": 0.9, "A": 0.8, "C": 0.1},
        "q2": {"C": 3.0, "A": -1.0},
        "q3": {},
    }
    assert list(collapse_to_sources(run, source)["q1"]) == ["B", "A", "C"]


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(
    st.sampled_from(["q1", "q2", "q3"]),
    st.dictionaries(st.tuples(st.sampled_from("ABCDE"), st.integers(0, 5)).map(lambda t: f"{t[0]}#{t[1]}"),
                    st.floats(-10, 10, allow_nan=False), max_size=12),
))
def test_collapsing_equals_the_max_of_each_sources_chunks(run: dict[str, dict[str, float]]) -> None:
    collapsed = collapse_to_sources(run, lambda chunk: chunk.split("#")[0])
    for query, ranking in run.items():
        reference: dict[str, list[float]] = {}
        for chunk, score in ranking.items():
            reference.setdefault(chunk.split("#")[0], []).append(score)
        assert collapsed[query] == {s: max(v) for s, v in reference.items()}
        assert list(collapsed[query].values()) == sorted(collapsed[query].values(), reverse=True)


def test_numpy_numbers_are_taken_as_the_plain_numbers_they_equal() -> None:
    import numpy as np

    made = Pipeline("bm25", k1=np.int64(1), b=np.float32(0.75))
    assert (made.k1, made.b) == (1.0, 0.75)
    assert (type(made.k1), type(made.b)) == (float, float)
    assert made.id == Pipeline("bm25", k1=1.0, b=0.75).id
    with pytest.raises(TypeError, match=r"^'b' must be a number between 0.0 and 1.0 \(got np.True_\)$"):
        Pipeline("bm25", b=np.bool_(True))
