"""ef.sweep.sweep and its Workspace probed with arguments of the wrong kind: each is an exception
naming the argument, raised before any cell is scored; a flag is a bool, not a truthy str; a
measure summarised as a sum is refused (its "mean" was a sum, beside an interval of means)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from ef.datasets import demo_dataset
from ef.evaluation import read_beir
from ef.pipeline_stages import Workspace
from ef.sweep import read_config, sweep
from ef.sweep._report import pareto_front

CORPUS, QUERIES, QRELS = read_beir(demo_dataset())
FIRST = sorted(QRELS)[0]


def exactly(message: str) -> str:
    return "^" + re.escape(message) + "$"


@pytest.mark.parametrize(
    ("keywords", "error", "message"),
    [
        ({"measures": None}, TypeError, "'measures' must be a measure name or a list of them (got NoneType)"),
        ({"measures": ["num_ret"]}, ValueError, "'measures': 'num_ret' is summarised as a sum, not a mean over "
                                                "queries; a sweep reports and compares per-query means, so pick a "
                                                "per-query score"),
        ({"measures": ["ndcg@10", "gm_map"]}, ValueError, "'measures': 'gm_map' is summarised as a geometric mean, "
                                                          "not a mean over queries; a sweep reports and compares "
                                                          "per-query means, so pick a per-query score"),
        ({"out": 3}, TypeError, "'out' must be a folder path (str or os.PathLike[str]) or None (got int)"),
        ({"out": b"folder"}, TypeError, "'out' must be a folder path (str or os.PathLike[str]) or None (got bytes)"),
        ({"out": ""}, ValueError, "'out' must be a folder path, not an empty str"),
        ({"cache_dir": 3}, TypeError, "'cache_dir' must be a folder path (str or os.PathLike[str]) or None (got int)"),
        ({"resume": "no"}, TypeError, "'resume' must be a bool (got 'no')"),  # was read as True
        ({"show_progress": "no"}, TypeError, "'show_progress' must be a bool (got 'no')"),  # printed progress
        ({"workspace": 3}, TypeError, "'workspace' must be an ef.pipeline_stages.Workspace or None (got int)"),
        ({"split": None}, TypeError, "'split' must be a non-empty str (got None)"),  # read qrels/None.tsv
        ({"device": 3}, TypeError,
         "'device' must be a torch device or its name such as 'cpu' or 'cuda:0', or None (got 3)"),
        ({"batch_size": 0}, ValueError, "'batch_size' must be a positive integer (got 0)"),
    ],
)
def test_a_bad_option_is_named(keywords: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=exactly(message)):
        sweep({"k": 10}, demo_dataset(), show_progress=keywords.pop("show_progress", False), **keywords)


def test_an_empty_dataset_path_is_not_the_current_folder() -> None:
    with pytest.raises(ValueError, match=exactly("'dataset' must be a folder path, not an empty str")):
        sweep({"k": 10}, "", show_progress=False)


@pytest.mark.parametrize(
    ("qrels", "error", "message"),
    [
        ({**QRELS, FIRST: {"x": float("nan")}}, ValueError,
         f"'dataset' qrels[{FIRST!r}]['x'] must be a finite number (got nan)"),  # JSON's "Out of range float"
        ({**QRELS, FIRST: {"x": "1"}}, TypeError,
         f"'dataset' qrels[{FIRST!r}]['x'] must be a finite number (got '1')"),  # '>' between str and int
        ({**QRELS, FIRST: None}, TypeError, f"'dataset' qrels[{FIRST!r}] must be a mapping {{doc_id: grade}} "
                                            "(got NoneType)"),
        ({1: {"x": 1}}, TypeError, "'dataset' qrels must have str query ids (got 1)"),
        ([("q", {"x": 1})], TypeError, "'dataset' qrels must be a mapping {query_id: {doc_id: grade}} (got list)"),
    ],
)
def test_a_tuples_qrels_are_checked(qrels: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=exactly(message)):
        sweep({"k": 10}, (CORPUS, QUERIES, qrels), show_progress=False)


def test_a_tuples_queries_are_checked() -> None:
    with pytest.raises(TypeError, match=exactly("'dataset' queries must map str ids to str texts (got 'q01': None)")):
        sweep({"k": 10}, (CORPUS, {**QUERIES, "q01": None}, QRELS), show_progress=False)  # type: ignore[dict-item]
    with pytest.raises(TypeError, match=exactly("'dataset' queries must be a mapping {query_id: text} (got list)")):
        sweep({"k": 10}, (CORPUS, list(QUERIES), QRELS), show_progress=False)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("keywords", "error", "message"),
    [
        ({"batch_size": 0}, ValueError, "'batch_size' must be a positive integer (got 0)"),
        ({"batch_size": "32"}, TypeError, "'batch_size' must be a positive integer (got '32')"),
        ({"show_progress": 1}, TypeError, "'show_progress' must be a bool (got 1)"),
        ({"device": ["cpu"]}, TypeError,
         "'device' must be a torch device or its name such as 'cpu' or 'cuda:0', or None (got list)"),
        ({"cache_dir": 3}, TypeError, "'cache_dir' must be a folder path or None (got int)"),
    ],
)
def test_workspace_checks_what_it_keeps(keywords: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=exactly(message)):
        Workspace({"d1": "cats purr"}, **keywords)


def test_the_sweep_still_sweeps() -> None:
    result = sweep({"k": 10}, (CORPUS, QUERIES, QRELS), show_progress=False, measures="ndcg@10")
    assert [round(row["mean"], 4) for row in result.rows()] == [0.8078]


@pytest.mark.parametrize(
    ("points", "error", "message"),
    [
        ([(1.0, float("nan")), (2.0, 0.5)], ValueError,
         "'points'[0] must be a (latency, quality) pair of numbers, not NaN (got (1.0, nan))"),
        # not NaN: said only of a NaN (a short point or a str was said to be one)
        ([(1.0,)], ValueError, "'points'[0] must be a (latency, quality) pair of numbers (got (1.0,))"),
        ([(1.0, "0.5")], ValueError, "'points'[0] must be a (latency, quality) pair of numbers "
                                     "(got (1.0, '0.5'))"),
        (None, TypeError, "'points' must be a sequence of (latency, quality) pairs (got NoneType)"),
    ],
)
def test_pareto_front_refuses_what_it_cannot_order(points: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=exactly(message)):  # a NaN point was on the front, undominated
        pareto_front(points)


def test_a_workspace_of_another_corpus_is_refused() -> None:
    from ef.pipeline import Pipeline
    from ef.pipeline_stages import PipelineRetriever
    from ef.sweep import benchmark_grid

    other = Workspace({"x1": "cats purr", "x2": "dogs bark"})
    message = ("'workspace' was made for another corpus than 'dataset' (2 documents, 'dataset' has 100): make a "
               "Workspace of this corpus, or pass none")
    with pytest.raises(ValueError, match=exactly(message)):  # its corpus was searched with the dataset's qrels
        sweep({"k": 10}, (CORPUS, QUERIES, QRELS), workspace=other, show_progress=False)
    corpus = {"d1": "cats purr", "d2": "dogs bark"}
    message = ("'workspace' was made for another corpus than 'corpus' (2 documents, 'corpus' has 2): make a "
               "Workspace of this corpus, or pass none")
    with pytest.raises(ValueError, match=exactly(message)):
        PipelineRetriever(Pipeline(k=1), corpus, workspace=other)
    with pytest.raises(ValueError, match=exactly(message)):
        benchmark_grid({"k": 1}, corpus, [], [], workspace=other)
    with pytest.raises(TypeError, match=exactly("'workspace' must be a Workspace or None (got int)")):
        PipelineRetriever(Pipeline(k=1), corpus, workspace=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=exactly("'pipeline' must be an ef.pipeline.Pipeline (got dict)")):
        PipelineRetriever({"k": 1}, corpus)  # type: ignore[arg-type]
    same = Workspace(dict(corpus))
    hits = PipelineRetriever(Pipeline(k=1), corpus, workspace=same).search_many(["dogs"], limit=1)
    assert [[h.segment.source_id for h in row] for row in hits] == [["d2"]]


@pytest.mark.parametrize(
    ("text", "suffix", "problem"),
    [
        ("split = 3\n[grid]\nk = 10\n", ".toml", "'split' must be a split name such as 'test' (got 3)"),  # read as '3'
        ('alpha = "x"\n[grid]\nk = 10\n', ".toml", "'alpha' must be a number between 0 and 1, exclusive (got 'x')"),
        ('test = "bogus"\n[grid]\nk = 10\n', ".toml",
         "'test' must be one of t, randomization, bootstrap, wilcoxon (got 'bogus')"),
        ('measures = ["ndcg@10", "ndcg@10"]\n[grid]\nk = 10\n', ".toml", "'measures' lists 'ndcg@10' twice"),
        ('measures = [""]\n[grid]\nk = 10\n', ".toml", "'measures': measure '': unknown measure (every spelling: "
                                                       "ef.measures.valid_forms(), ef trec-eval --help)"),
        ("baseline = 3\n[grid]\nk = 10\n", ".toml",
         "'baseline' must be a cell's id or label, or a table of its parameters (got 3)"),
        ('{"grid": {"k": 10, "k": 20}}', ".json", "not valid JSON (key 'k' appears twice in one object)"),  # 20 won
    ],
)
def test_read_config_refuses_what_sweep_would_later(tmp_path: Path, text: str, suffix: str, problem: str) -> None:
    path = tmp_path / f"sweep{suffix}"
    path.write_text(text)
    with pytest.raises(ValueError, match=exactly(f"{path}: {problem}")):
        read_config(path)


def test_read_config_still_reads(tmp_path: Path) -> None:
    folder = tmp_path
    (folder / "s.toml").write_text('split = "dev"\nmeasures = "mrr@10"\nalpha = 0.01\n[grid]\nk = [5, 10]\n')
    config = read_config(folder / "s.toml")
    assert (config.split, config.measures, dict(config.options), len(config.pipelines())) == (
        "dev", ("mrr@10",), {"alpha": 0.01}, 2
    )


@pytest.mark.parametrize(
    ("baseline", "error", "message"),
    [
        ({"bogus": 1}, ValueError, "'baseline': unknown pipeline parameter(s) 'bogus'; known: retriever, model, k1, "
                                   "b, stemmer, stopwords, unit, size, overlap, rerank, rerank_depth, fusion_depth, k"),
        ({"k": "x"}, TypeError, "'baseline': 'k' must be a positive integer (got 'x')"),
        ({"k": 5}, ValueError, "'baseline' 'bm25 k1=1.2 b=0.75 | whole docs | k=5' (id 5fcc99d72bb66941) is not a "
                               "cell of this sweep (give a cell's id or label)"),  # was its id alone
    ],
)
def test_a_baseline_given_by_its_fields_is_named(baseline: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=exactly(message)):
        sweep({"k": 10}, demo_dataset(), baseline=baseline, show_progress=False)
