"""ef.fusion: hand-computed cases, a plain per-query reference for every method and norm, parity
with ranx where its definitions agree, the defined edge cases, properties, tuning and the CLI.

Deliberate deviations from ranx (so excluded from parity, and pinned here instead):
- ties rank in trec_eval's order (score descending, doc id descending byte-wise), not dict order;
- a degenerate list (one doc, or all scores equal) gets 1 under min-max/min-max-inverted and
  1/n under sum (ranx: 0, from its 1e-9 floor); z-score gives 0 (ranx too); dbsf gives 0.5 (Qdrant too);
- norm='max' refuses a list whose top score is <= 0 (ranx divides by 1e-9: scores x 1e9);
- Condorcet scores are Copeland scores (wins + draws / 2), deterministic on cycles (ranx sorts with
  a non-transitive comparator from set order); the order agrees where the majorities are transitive;
- BayesFuse gives a doc ranked beyond 1000 the log-odds of a missing doc (ranx indexes past its table);
- rank-based methods refuse a norm other than 'none' (ranx applies it and ranks by dict order).
"""

from __future__ import annotations

import copy
import json
import math
import random
import re
import statistics
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ef.evaluation import _kernel
from ef.fusion import METHODS, NORMS, fit, fuse, tune, weight_grid
from ef.fusion._order import trec_order

Run = dict[str, dict[str, float]]


# --- a plain per-query reference, written from the formulas in docs/fusion.md ------------------


def _ranked(docs: dict[str, float]) -> list[str]:
    """trec_eval's order: score descending, then doc id descending on UTF-8 bytes."""
    return sorted(docs, key=lambda d: (-docs[d], [-b for b in d.encode()] + [1]))


def _ref_norm(docs: dict[str, float], norm: str, candidates: int) -> dict[str, float]:
    s = list(docs.values())
    n = len(s)
    lo, hi = min(s), max(s)
    order = _ranked(docs)
    rank = {d: i + 1 for i, d in enumerate(order)}
    mean = sum(s) / n
    std = math.sqrt(sum((x - mean) ** 2 for x in s) / n)
    out = {}
    for d, x in docs.items():
        if norm == "none":
            v = x
        elif norm == "min-max":
            v = (x - lo) / (hi - lo) if hi != lo else 1.0
        elif norm == "min-max-inverted":
            v = (hi - x) / (hi - lo) if hi != lo else 1.0
        elif norm == "max":
            v = x / hi
        elif norm == "sum":
            total = sum(y - lo for y in s)
            v = (x - lo) / total if total else 1 / n
        elif norm == "z-score":
            v = (x - mean) / std if std else 0.0
        elif norm == "rank":
            v = 1 - (rank[d] - 1) / n
        elif norm == "borda":
            v = 1 - (rank[d] - 1) / candidates
        elif norm == "l2":
            length = math.sqrt(sum(y * y for y in s))
            v = x / length if length else 0.0
        elif norm == "dbsf":  # Qdrant's: the sample deviation
            sample = math.sqrt(sum((y - mean) ** 2 for y in s) / (n - 1)) if n > 1 else 0.0
            v = (x - (mean - 3 * sample)) / (6 * sample) if sample else 0.5
        elif norm == "sigmoid":
            v = 1 / (1 + math.exp(-x))
        out[d] = v
    return out


def _reference(runs: list[Run], method: str, norm: str | None = None, weights: list[float] | None = None,
               params: dict[str, float] | None = None, missing: str = "zero") -> Run:
    spec = METHODS[method]
    norm = norm or spec.default_norm
    p = dict(spec.defaults) | (params or {})
    w = weights or [1.0] * len(runs)
    queries = list(dict.fromkeys(q for run in runs for q, docs in run.items() if docs))
    out: Run = {}
    for q in queries:
        lists = [run.get(q, {}) for run in runs]
        cands = sorted({d for docs in lists for d in docs})
        c = len(cands)
        normed = [_ref_norm(docs, norm, c) if docs else {} for docs in lists]
        ranks = [{d: i + 1 for i, d in enumerate(_ranked(docs))} for docs in lists]
        fused = {}
        for d in cands:
            listed = [r for r in range(len(runs)) if d in lists[r]]
            vals: dict[int, float] = {r: normed[r][d] for r in listed}
            if norm == "borda":
                for r in range(len(runs)):
                    if r not in vals:
                        vals[r] = 0.5 - (len(lists[r]) - 1) / (2 * c)
            elif missing == "min":
                for r in range(len(runs)):
                    if r not in vals and lists[r]:
                        vals[r] = min(normed[r].values())
            if norm == "borda":  # Borda's fill places d in every list
                listed = list(range(len(runs)))
            nl = len(listed)
            total = sum(vals.values())
            rk = {r: ranks[r][d] for r in listed if d in ranks[r]}
            if method == "combsum":
                f = total
            elif method == "combmnz":
                f = total * nl
            elif method == "combanz":
                f = total / len(vals)
            elif method == "combmax":
                f = max(vals.values())
            elif method == "combmin":
                f = min(vals.values())
            elif method == "combmed":
                f = statistics.median(vals.values())
            elif method == "combgmnz":
                f = total * nl ** p["gamma"]
            elif method == "wsum":
                f = sum(w[r] * v for r, v in vals.items())
            elif method == "wmnz":
                f = total * sum(w[r] for r in listed)
            elif method == "mixed":
                f = sum(w[r] * v for r, v in vals.items()) * math.sqrt(nl)
            elif method == "rrf":
                f = sum(w[r] / (p["k"] + rk[r]) for r in rk)
            elif method == "isr":
                f = sum(1 / rk[r] ** 2 for r in listed) * nl
            elif method == "log_isr":
                f = sum(1 / rk[r] ** 2 for r in listed) * math.log(nl)
            elif method == "logn_isr":
                f = sum(1 / rk[r] ** 2 for r in listed) * math.log(nl + p["sigma"])
            elif method == "rbc":
                f = sum((1 - p["phi"]) * p["phi"] ** (rk[r] - 1) for r in listed)
            elif method in ("borda", "wborda"):
                f = sum(w[r] * ((c - rk[r] + 1) if r in rk else (c - len(lists[r]) + 1) / 2) for r in range(len(runs)))
            elif method in ("condorcet", "wcondorcet"):
                f = 0.0
                for e in cands:
                    if e == d:
                        continue
                    big = 10**9
                    for_d = sum(w[r] for r in range(len(runs)) if ranks[r].get(d, big) < ranks[r].get(e, big))
                    for_e = sum(w[r] for r in range(len(runs)) if ranks[r].get(e, big) < ranks[r].get(d, big))
                    f += 1.0 if for_d > for_e else 0.5 if for_d == for_e else 0.0
            fused[d] = f
        out[q] = {d: fused[d] for d in _ranked(fused)}
    return out


def _random_runs(rng: random.Random, n_runs: int, *, n_queries: int = 4, pool: int = 12, distinct: bool = False,
                 positive: bool = False) -> list[Run]:
    runs = []
    for _ in range(n_runs):
        run: Run = {}
        for q in range(n_queries):
            docs = rng.sample([f"d{i}" for i in range(pool)], rng.randint(2 if distinct else 1, pool - 2))
            if distinct:
                values = rng.sample(range(1, 10_000), len(docs))
                run[f"q{q}"] = {d: v / 100 for d, v in zip(docs, values, strict=True)}
            else:
                low = 1 if positive else -3
                run[f"q{q}"] = {d: float(rng.randint(low, 5)) / 2 for d in docs}
        runs.append(run)
    return runs


def _same(got: Run, expected: Run) -> None:
    """The same queries and scores (to rounding: the sums run in another order), each query in trec_eval's order."""
    assert list(got) == list(expected)
    for q in expected:
        assert got[q] == pytest.approx(expected[q], rel=1e-12, abs=1e-12), q
        assert list(got[q]) == _ranked(got[q]), q


# --- hand-computed cases ------------------------------------------------------------------------

A = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}}
B = {"q1": {"d3": 0.9, "d1": 0.5}}


@pytest.mark.parametrize(
    ("method", "options", "expected"),
    [
        # RRF k=0: d1 1/1 + 1/2, d3 1/3 + 1/1, d2 1/2
        ("rrf", {"params": {"k": 0}}, {"d1": 1.5, "d3": 4 / 3, "d2": 0.5}),
        ("rrf", {"params": {"k": 0}, "weights": [2, 1]}, {"d1": 2.5, "d3": 5 / 3, "d2": 1.0}),
        # min-max: A -> d1 1, d2 .5, d3 0; B -> d3 1, d1 0. d1 and d3 tie at 1: d3 (the larger id) first.
        ("combsum", {}, {"d3": 1.0, "d1": 1.0, "d2": 0.5}),
        ("combmnz", {}, {"d3": 2.0, "d1": 2.0, "d2": 0.5}),
        ("combanz", {}, {"d3": 0.5, "d2": 0.5, "d1": 0.5}),
        ("combmin", {}, {"d2": 0.5, "d3": 0.0, "d1": 0.0}),
        ("wsum", {"weights": [0.25, 0.75]}, {"d3": 0.75, "d1": 0.25, "d2": 0.125}),
        ("combsum", {"norm": "none"}, {"d1": 3.5, "d2": 2.0, "d3": 1.9}),
        # Borda: 3 candidates; A gives 3, 2, 1; B gives d3 3, d1 2 and the unlisted d2 (3 - 2 + 1) / 2 = 1
        ("borda", {}, {"d1": 5.0, "d3": 4.0, "d2": 3.0}),
        # Copeland: d1 beats d2 (2 runs to 0), draws with d3; d3 draws with both; d2 draws with d3
        ("condorcet", {}, {"d1": 1.5, "d3": 1.0, "d2": 0.5}),
        # ISR: d1 (1 + 1/4) * 2, d3 (1/9 + 1) * 2, d2 1/4 * 1
        ("isr", {}, {"d1": 2.5, "d3": 20 / 9, "d2": 0.25}),
    ],
)
def test_hand_computed(method: str, options: dict[str, Any], expected: dict[str, float]) -> None:
    got = fuse([A, B], method=method, **options)["q1"]
    assert list(got) == list(expected)
    assert list(got.values()) == pytest.approx(list(expected.values()))


def test_str_subclass_ids_fuse_as_their_str() -> None:
    # numpy.str_ keys (a frame's column turned into a dict) are str: read as plain str.
    run = {np.str_("q1"): {np.str_("d1"): 2.0, "d2": 1.0}}
    fused = fuse([run], method="rrf", params={"k": 0})
    assert fused == {"q1": {"d1": 1.0, "d2": 0.5}}
    assert [type(q) for q in fused] == [str]
    assert [type(d) for d in fused["q1"]] == [str, str]


def test_ties_rank_by_doc_id_descending_on_utf8_bytes() -> None:
    run = {"q": {"d10": 1.0, "d9": 1.0, "é": 1.0, "z": 1.0, "d1": 2.0}}
    assert list(fuse([run], method="combsum", norm="none")["q"]) == ["d1", "é", "z", "d9", "d10"]
    codes = np.array([0, 1], dtype=np.uint64)
    assert trec_order(np.array([0, 0]), np.array([1.0, 1.0]), np.array([0, 1]), codes).tolist() == [1, 0]


@settings(max_examples=200, deadline=None)
@given(data=st.data(), n=st.integers(0, 200))
def test_trec_order_is_one_lexsort_whatever_path_it_takes(data: Any, n: int) -> None:
    # Sorted input, groups in blocks (in any order) and scattered groups take three paths.
    layout = data.draw(st.sampled_from(["sorted", "blocks", "scattered"]))
    if layout == "scattered":
        group = np.array(data.draw(st.lists(st.integers(0, 4), min_size=n, max_size=n)), dtype=np.int64)
    else:
        sizes = data.draw(st.lists(st.integers(1, 80), min_size=1, max_size=6))
        group = np.repeat(np.arange(len(sizes)), sizes)[:n]
        if layout == "blocks":
            group = np.array(data.draw(st.permutations(range(len(sizes)))), dtype=np.int64)[group]
    n = len(group)
    score = np.array(data.draw(st.lists(st.sampled_from([-1.0, -0.0, 0.0, 0.5, 2.0]), min_size=n, max_size=n)))
    doc = np.array(data.draw(st.permutations(range(n))), dtype=np.int64)
    expected = np.lexsort((-doc, -score, group))
    heads = np.arange(n, dtype=np.uint64)  # codes that order alone: doc d's head is d
    assert trec_order(group, score, doc, heads).tolist() == expected.tolist()
    assert trec_order(group[expected], score[expected], doc[expected], heads).tolist() == list(range(n))


@settings(max_examples=120, deadline=None)
@given(data=st.data(), n=st.integers(33, 3000), spread=st.sampled_from(["ulps", "cluster", "outlier", "wide"]))
def test_trec_order_sorts_long_lists_of_close_far_and_tied_scores(data: Any, n: int, spread: str) -> None:
    # Lists over 32 are bucket-sorted on the bits their keys do not share, level by level: keys a
    # few ulps apart, a tight cluster with ties, one far outlier, scores of every sign and size.
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    if spread == "ulps":
        score = np.nextafter(np.full(n, 0.25), 1.0) + rng.integers(0, 40, n) * np.spacing(0.25)
    elif spread == "cluster":
        score = 1.0 / (60 + rng.integers(1, 1000, n))
    elif spread == "outlier":
        score = rng.integers(0, 5, n) * 1e-12
        score[rng.integers(0, n)] = 1e300
    else:
        score = rng.standard_normal(n) * 10.0 ** rng.integers(-300, 300, n)
        score[rng.random(n) < 0.1] = 0.0
    group = np.sort(rng.integers(0, 3, n)) if data.draw(st.booleans()) else rng.integers(0, 3, n)
    doc = rng.permutation(n).astype(np.int64)
    heads = np.arange(n, dtype=np.uint64)
    assert trec_order(group, score, doc, heads).tolist() == np.lexsort((-doc, -score, group)).tolist()


def test_trained_methods_by_hand() -> None:
    a = {"q1": {"x": 3.0, "y": 2.0, "z": 1.0}, "q2": {"u": 2.0, "v": 1.0}}
    qrels = {"q1": {"y": 1}, "q2": {"u": 1, "v": 0}}
    # PosFuse: rank 1 relevant in 1 of 2 lists, rank 2 in 1 of 2, rank 3 in 0 of 1
    assert fit([a], qrels, method="posfuse")["tables"][0].tolist() == [0.5, 0.5, 0.0]
    # MAPFuse: AP q1 = 1/2 (y at rank 2), q2 = 1 -> MAP 0.75; scores MAP / rank
    assert fit([a], qrels, method="mapfuse")["tables"] == [0.75]
    assert fuse([a], method="mapfuse", qrels=qrels)["q1"] == {"x": 0.75, "y": 0.375, "z": 0.25}
    # ProbFuse with 2 segments: q1 sizes ceil(3/2)=2 -> [x y] 1/2, [z] 0; q2 [u] 1, [v] 0 -> (0.75, 0) / 1..2
    table = fit([a], qrels, method="probfuse", params={"segments": 2})["tables"][0]
    assert table.tolist() == [0.75, 0.0]
    # BayesFuse: first segment [0, 5): precision (1/5 + 1/5) / 2 = 0.2 -> log(0.2 / 0.8)
    odds = fit([a], qrels, method="bayesfuse")["tables"][0]
    assert odds[0] == pytest.approx(math.log(0.25))
    assert odds[1] == pytest.approx(math.log(0.001 / 0.999))


# --- every method and norm against the reference -------------------------------------------------

SCORE_METHODS = [m for m, spec in METHODS.items() if spec.kind == "score"]
RANK_METHODS = [m for m, spec in METHODS.items() if spec.kind == "rank"]


@pytest.mark.parametrize("method", SCORE_METHODS)
@pytest.mark.parametrize("norm", sorted(NORMS))
@pytest.mark.parametrize("missing", ["zero", "min"])
def test_score_methods_equal_the_reference(method: str, norm: str, missing: str) -> None:
    rng = random.Random(hash((method, norm, missing)) % 1000)
    for _ in range(3):
        runs = _random_runs(rng, rng.randint(1, 3), positive=norm == "max")
        weights = [rng.randint(0, 4) / 4 for _ in runs] if METHODS[method].weighted else None
        params = {"gamma": 0.5} if method == "combgmnz" else None
        got = fuse(runs, method=method, norm=norm, weights=weights, params=params, missing=missing)  # type: ignore[arg-type]
        _same(got, _reference(runs, method, norm, weights, params, missing))


@pytest.mark.parametrize("method", RANK_METHODS)
def test_rank_methods_equal_the_reference(method: str) -> None:
    rng = random.Random(len(method))
    for _ in range(4):
        runs = _random_runs(rng, rng.randint(1, 4))
        weights = [float(rng.randint(1, 4)) for _ in runs] if METHODS[method].weighted else None
        options: dict[str, dict[str, float]] = {"rrf": {"k": 10}, "rbc": {"phi": 0.6}, "logn_isr": {"sigma": 0.5}}
        params = options.get(method)
        expected = _reference(runs, method, None, weights, params)
        _same(fuse(runs, method=method, weights=weights, params=params), expected)


# --- parity with ranx where the definitions agree -------------------------------------------------


def _ranx(runs: list[Run]) -> list[Any]:
    from ranx import Run as RanxRun

    return [RanxRun(copy.deepcopy(run), name=f"r{i}") for i, run in enumerate(runs)]


RANX_NAMES = {"combsum": "sum", "combmnz": "mnz", "combanz": "anz", "combmax": "max", "combmin": "min",
              "combmed": "med", "combgmnz": "gmnz", "wborda": "w_bordafuse", "borda": "bordafuse",
              "wcondorcet": "w_condorcet"}
RANX_NORMS = {"none": None, "min-max": "min-max", "max": "max", "sum": "sum", "z-score": "zmuv", "rank": "rank",
              "borda": "borda"}


@pytest.mark.slow  # numba compiles each ranx method on first use: minutes on a shared machine
@pytest.mark.parametrize("method", [m for m in SCORE_METHODS + RANK_METHODS if "condorcet" not in m])
def test_parity_with_ranx_on_random_runs(method: str) -> None:
    from ranx import fuse as ranx_fuse

    rng = random.Random(7)
    norms = RANX_NORMS if METHODS[method].kind == "score" else {"none": None}
    for norm, ranx_norm in norms.items():
        # Distinct positive scores, every query in every run, lists of 2+ docs: no tie, no degenerate list.
        runs = _random_runs(rng, 3, distinct=True)
        weights = [0.2, 0.3, 0.5] if METHODS[method].weighted else None
        options: dict[str, dict[str, float]] = {
            "combgmnz": {"gamma": 0.5}, "rbc": {"phi": 0.6}, "logn_isr": {"sigma": 0.1}, "rrf": {"k": 60}
        }
        params = options.get(method, {})
        ranx_params = dict(params) | ({"weights": weights} if weights else {})
        if method == "rrf":
            weights = None
            ranx_params = {"k": 60}
        expected = ranx_fuse(_ranx(runs), norm=ranx_norm, method=RANX_NAMES.get(method, method),
                             params=ranx_params).to_dict()
        got = fuse(runs, method=method, norm=norm, weights=weights, params=params or None)
        for q in got:
            assert got[q] == pytest.approx(expected[q], rel=1e-9), (norm, q)


@pytest.mark.slow
def test_condorcet_order_equals_ranx_where_majorities_are_transitive() -> None:
    from ranx import fuse as ranx_fuse

    rng = random.Random(3)
    checked = 0
    for _ in range(30):
        docs = [f"d{i}" for i in range(6)]
        orders = [rng.sample(docs, 6) for _ in range(3)]
        runs = [{"q": {d: float(6 - i) for i, d in enumerate(order)}} for order in orders]
        got = fuse(runs, method="condorcet")["q"]
        scores = sorted(got.values())
        if scores != [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]:
            continue  # a cycle: ranx's order then depends on set order
        expected = ranx_fuse(_ranx(runs), norm=None, method="condorcet").to_dict()["q"]
        assert list(got) == sorted(expected, key=lambda d: -expected[d])
        checked += 1
    assert checked >= 10


@pytest.mark.slow
@pytest.mark.parametrize("method", ["posfuse", "probfuse", "segfuse", "slidefuse", "bayesfuse", "mapfuse"])
def test_trained_parity_with_ranx(method: str) -> None:
    import ranx.fusion as rf
    from ranx import Qrels
    from ranx import fuse as ranx_fuse

    rng = random.Random(11)
    runs = _random_runs(rng, 2, n_queries=6, pool=30, distinct=True)
    qrels = {f"q{q}": {f"d{i}": rng.randint(0, 2) for i in rng.sample(range(30), 8)} for q in range(6)}
    params: dict[str, Any] = {"probfuse": {"segments": 3}, "slidefuse": {"w": 2}}.get(method, {})
    ranx_qrels = Qrels(copy.deepcopy(qrels))
    train = getattr(rf, f"{method}_train")
    tables = train(ranx_qrels, _ranx(runs), *([3] if method == "probfuse" else []))
    key = {"posfuse": "probs", "probfuse": "probs", "segfuse": "probs", "slidefuse": "probs",
           "bayesfuse": "log_odds", "mapfuse": "map_scores"}[method]
    ranx_params = {key: tables} | ({"w": 2} if method == "slidefuse" else {})
    norm = "min-max" if method == "segfuse" else None
    expected = ranx_fuse(_ranx(runs), norm=norm, method=method, params=ranx_params).to_dict()
    got = fuse(runs, method=method, params=params or None, qrels=qrels)
    for q in got:
        assert got[q] == pytest.approx(expected[q], rel=1e-9), q


# ranx's own fusion tests (tests/unit/ranx/fusion/*_test.py) share these three runs.
RANX_FIXTURE = [
    {"q1": {"d1": 1.0, "d2": 2.0, "d3": 3.0}, "q2": {"d1": 1.0, "d2": 2.0}},
    {"q1": {"d1": 3.0, "d2": 2.0}, "q2": {"d1": 1.0, "d3": 3.0}},
    {"q1": {"d3": 1.0}, "q2": {"d2": 2.0, "d3": 3.0}},
]


def test_ranx_own_fusion_cases() -> None:
    # The values ranx's comb_mnz_test.py and bordafuse_test.py assert, recomputed by hand.
    mnz = fuse(RANX_FIXTURE, method="combmnz", norm="none")
    assert mnz == {"q1": {"d3": 8.0, "d2": 8.0, "d1": 8.0}, "q2": {"d3": 12.0, "d2": 8.0, "d1": 4.0}}
    borda = fuse(RANX_FIXTURE, method="borda")
    assert borda == {"q1": {"d3": 7.0, "d2": 5.5, "d1": 5.5}, "q2": {"d3": 7.0, "d2": 6.0, "d1": 5.0}}


@pytest.mark.slow
@pytest.mark.parametrize("method", [m for m in SCORE_METHODS + RANK_METHODS if "condorcet" not in m])
def test_ranx_fixture_runs_fuse_as_in_ranx(method: str) -> None:
    from ranx import fuse as ranx_fuse

    weights = [0.2, 0.3, 0.5] if METHODS[method].weighted and method != "rrf" else None
    params: dict[str, float] = {"combgmnz": {"gamma": 0.5}, "rbc": {"phi": 0.6}}.get(method, {})
    ranx_params = dict(params) | ({"weights": weights} if weights else {})
    expected = ranx_fuse(_ranx(RANX_FIXTURE), norm=None, method=RANX_NAMES.get(method, method),
                         params=ranx_params).to_dict()
    got = fuse(RANX_FIXTURE, method=method, norm="none", weights=weights, params=params or None)
    assert got == {q: pytest.approx(expected[q], rel=1e-12) for q in expected}


# --- defined edge cases --------------------------------------------------------------------------


def test_degenerate_lists_get_defined_values() -> None:
    one = {"q": {"a": -4.0}}
    equal = {"q": {"a": 2.0, "b": 2.0}}
    assert fuse([one], method="combsum", norm="min-max") == {"q": {"a": 1.0}}
    assert fuse([equal], method="combsum", norm="min-max") == {"q": {"b": 1.0, "a": 1.0}}
    assert fuse([equal], method="combsum", norm="sum") == {"q": {"b": 0.5, "a": 0.5}}
    assert fuse([equal], method="combsum", norm="z-score") == {"q": {"b": 0.0, "a": 0.0}}
    assert fuse([equal], method="combsum", norm="dbsf") == {"q": {"b": 0.5, "a": 0.5}}
    assert fuse([one], method="combsum", norm="dbsf") == {"q": {"a": 0.5}}
    assert fuse([{"q": {"a": 0.0}}], method="combsum", norm="l2") == {"q": {"a": 0.0}}


# The four norms ranx 0.3.21 lacks or that ef defines after another peer, by hand on one run:
# q1 = a 4, b 1, c -2 (mean 1, squares 16 + 1 + 4 = 21, deviations 3, 0, -3); q2 = x 3 alone.
HAND = {"q1": {"a": 4.0, "b": 1.0, "c": -2.0}, "q2": {"x": 3.0}}


@pytest.mark.parametrize(
    ("norm", "expected"),
    [
        # (max - s) / (max - min), max - min = 6; a lone doc gets 1 (ranx's min-max-inverted gives 0)
        ("min-max-inverted", {"q1": {"c": 1.0, "b": 0.5, "a": 0.0}, "q2": {"x": 1.0}}),
        # s / sqrt(sum s^2): sqrt(21); the lone 3 over sqrt(9)
        ("l2", {"q1": {"a": 4 / math.sqrt(21), "b": 1 / math.sqrt(21), "c": -2 / math.sqrt(21)}, "q2": {"x": 1.0}}),
        # Qdrant's DBSF: sample std sqrt((9 + 0 + 9) / 2) = 3, limits 1 -/+ 9: (s + 8) / 18; a lone doc 0.5
        ("dbsf", {"q1": {"a": 12 / 18, "b": 9 / 18, "c": 6 / 18}, "q2": {"x": 0.5}}),
        # 1 / (1 + e^-s), list by list alike
        ("sigmoid", {"q1": {"a": 1 / (1 + math.exp(-4)), "b": 1 / (1 + math.exp(-1)), "c": 1 / (1 + math.exp(2))},
                     "q2": {"x": 1 / (1 + math.exp(-3))}}),
    ],
)
def test_norms_without_a_ranx_twin_by_hand(norm: str, expected: dict[str, dict[str, float]]) -> None:
    got = fuse([HAND], method="combsum", norm=norm)
    assert [list(docs) for docs in got.values()] == [list(docs) for docs in expected.values()]
    assert got == {q: pytest.approx(docs, rel=1e-15) for q, docs in expected.items()}


def test_max_norm_refuses_a_list_with_no_positive_score() -> None:
    logprobs = {"q1": {"a": 0.5}, "q2": {"a": -0.1, "b": -2.3}}
    with pytest.raises(ValueError, match=r"^runs\[0\], query 'q2': norm='max' needs a positive top score "
                                         r"\(got -0.1\); use 'min-max'"):
        fuse([logprobs], method="combsum", norm="max")


def test_missing_queries_empty_runs_and_missing_docs() -> None:
    a = {"q1": {"x": 1.0, "y": 0.0}, "q2": {"x": 5.0}}
    b = {"q1": {"z": 3.0, "x": 1.0}}
    # q2 is in a only: b gives nothing there; q3 has no documents anywhere and is left out
    got = fuse([a, b, {"q3": {}}], method="combsum", norm="min-max")
    assert got == {"q1": {"x": 1.0, "z": 1.0, "y": 0.0}, "q2": {"x": 1.0}}
    # missing='min': y takes b's lowest (0.0), z takes a's lowest (0.0): they then count in CombANZ
    assert fuse([a, b], method="combanz")["q1"] == {"x": 0.5, "z": 1.0, "y": 0.0}
    assert fuse([a, b], method="combanz", missing="min")["q1"] == {"z": 0.5, "x": 0.5, "y": 0.0}
    with pytest.raises(ValueError, match=r"^runs\[0\] holds no query: an empty run adds nothing to a fusion"):
        fuse([{}], method="rrf")  # as evaluate_run({}) and a run file of no line: refused


def test_depth_cuts_each_run_before_fusing() -> None:
    a = {"q": {"a": 3.0, "b": 2.0, "c": 1.0}}
    assert fuse([a], method="rrf", params={"k": 0}, depth=2) == {"q": {"a": 1.0, "b": 0.5}}


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: fuse([A], method="combfoo"), ValueError, r"'method' must be one of 'combsum', .* \(got 'combfoo'\)"),
        (lambda: fuse([A], norm="min-max"), ValueError,
         r"'norm' does not apply to method 'rrf', which uses ranks \(got 'min-max'; pass none\)"),
        (lambda: fuse([A], method="combsum", norm="minmax"), ValueError, r"'norm' must be one of .* \(got 'minmax'\)"),
        (lambda: fuse([A], method="combsum", weights=[1.0]), ValueError, r"'weights' do not apply to method 'combsum'"),
        (lambda: fuse([A, B], method="wsum", weights=[1.0]), ValueError,
         r"'weights' must hold one weight per run \(2\) \(got 1\)"),
        (lambda: fuse([A], method="rrf", params={"kk": 1}), ValueError, r"'params' of method 'rrf' are \['k'\]"),
        (lambda: fuse([A], method="rbc", params={"phi": 1}), ValueError, r"'params\['phi'\]' must be a number in"),
        (lambda: fuse([A], method="posfuse"), ValueError, r"method 'posfuse' is trained: pass qrels="),
        (lambda: fuse([{"q": {"a": float("nan")}}]), ValueError,
         r"runs\[0\]\['q'\]\['a'\]: a score must be a finite number \(got nan\)"),
        (lambda: fuse([{"q": {"a": "1"}}]), TypeError, r"runs\[0\]\['q'\]\['a'\]: a score must be a real number"),
        (lambda: fuse([{"q": {"a": True}}]), TypeError, r"a score must be a real number \(got True of type bool\)"),
        (lambda: fuse([{"q": {1: 1.0}}]), TypeError, r"runs\[0\] must have str doc ids \(got 1\)"),
        (lambda: fuse([]), ValueError, r"'runs' must hold at least one run \(got none\)"),
        (lambda: fuse([3]), TypeError, r"runs\[0\] must be a \{query_id: \{doc_id: score\}\} mapping"),
        (lambda: fuse([A], missing="max"), ValueError,  # type: ignore[arg-type]
         r"'missing' must be one of 'zero', 'min' \(got 'max'\)"),
        (lambda: fuse([A], depth=0), ValueError, r"'depth' must be a positive integer or None \(got 0\)"),
    ],
)
def test_bad_input_is_refused_by_name(call: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        call()


def test_files_and_frames_are_read_like_mappings(tmp_path: Path) -> None:
    import pandas as pd  # type: ignore[import-untyped]

    from ef.trec import write_run

    write_run(tmp_path / "a.trec", A)
    frame = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d3", "d1"], "score": [0.9, 0.5]})
    assert fuse([tmp_path / "a.trec", frame], method="combsum") == fuse([A, B], method="combsum")


@pytest.mark.parametrize(
    ("second", "error"),
    [
        (b"q2 Q0 e 1 3 r\nq1 Q0 d3 1 0.5 r\nq1 Q0 d1 2 -1 r\n", None),  # read straight into columns
        (b"q1 Q0 d3 1 0.5 r\nq2 Q0 e 1 3 r\nq1 Q0 d1 2 -1 r\n", None),  # scattered: read_run's mappings
        (b"q1 Q0 d3 1 inf r\n", r"^runs\[1\]\['q1'\]\['d3'\]: a score must be a finite number \(got inf\)$"),
        (b"q1 Q0 d3 1 1 r\nq1 Q0 d3 2 0 r\n",
         r"b\.trec:2: doc id 'd3' appears twice in query 'q1' \(first at line 1\)$"),
        (b"q1 Q0 d3 1 1 r\nq1 Q0 d1 x\n",
         r"b\.trec:2: expected 6 columns 'query_id iter doc_id rank score run_id', got 4$"),
    ],
    ids=["grouped", "scattered", "infinite", "twice", "columns"],
)
def test_fusing_files_equals_fusing_their_mappings_or_names_the_same_fault(
    tmp_path: Path, second: bytes, error: str | None
) -> None:
    from ef.trec import read_run, write_run

    write_run(tmp_path / "a.trec", {**A, "q3": {"x": 1.0}})
    (tmp_path / "b.trec").write_bytes(second)
    paths = [tmp_path / "a.trec", tmp_path / "b.trec"]
    direct = _kernel.stack_text([p.read_bytes() for p in paths])  # None: read_run's mappings are made
    assert (direct is not None) == (second.startswith(b"q2") or "finite" in str(error))
    for method, norm in (("rrf", None), ("combmnz", "z-score"), ("condorcet", None)):
        if error is None:
            mappings = [read_run(p) for p in paths]
            assert fuse(paths, method=method, norm=norm) == fuse(mappings, method=method, norm=norm)
        else:
            with pytest.raises((ValueError, TypeError), match=error):
                fuse(paths, method=method, norm=norm)


# --- properties ----------------------------------------------------------------------------------

_scores = st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.5])
_lists = st.dictionaries(st.sampled_from(["a", "b", "c", "d", "e", "f"]), _scores, min_size=1)
_runs = st.dictionaries(st.sampled_from(["q1", "q2", "q3"]), _lists, min_size=1)
UNWEIGHTED = [m for m, spec in METHODS.items() if spec.kind != "trained" and not spec.weighted]


@settings(max_examples=60, deadline=None)
@given(runs=st.lists(_runs, min_size=2, max_size=3), method=st.sampled_from(UNWEIGHTED), seed=st.integers(0, 99))
def test_permuting_runs_leaves_unweighted_methods_unchanged(runs: list[Run], method: str, seed: int) -> None:
    shuffled = runs[:]
    random.Random(seed).shuffle(shuffled)
    a, b = fuse(runs, method=method), fuse(shuffled, method=method)
    assert set(a) == set(b)
    for q in a:
        assert a[q] == pytest.approx(b[q], rel=1e-12, abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(lists=st.lists(st.lists(_scores, min_size=4, max_size=4), min_size=2, max_size=3), data=st.data())
def test_weights_summing_to_one_keep_the_sum_within_the_inputs(lists: list[list[float]], data: Any) -> None:
    runs = [{"q": dict(zip("abcd", scores, strict=True))} for scores in lists]
    weights = data.draw(st.sampled_from(weight_grid(len(runs), 0.25)))
    fused = fuse(runs, method="wsum", norm="none", weights=weights)["q"]
    for d, value in fused.items():
        inputs = [run["q"][d] for run in runs]
        assert min(inputs) - 1e-12 <= value <= max(inputs) + 1e-12


@settings(max_examples=60, deadline=None)
@given(run=_runs, method=st.sampled_from([m for m, s in METHODS.items() if s.kind != "trained"]))
def test_a_run_fused_with_itself_ranks_as_itself(run: Run, method: str) -> None:
    fused = fuse([run, run], method=method)
    assert {q: list(docs) for q, docs in fused.items()} == {q: _ranked(docs) for q, docs in run.items()}


@settings(max_examples=30, deadline=None)
@given(runs=st.lists(_runs, min_size=1, max_size=3), method=st.sampled_from(sorted(METHODS)))
def test_no_input_is_mutated_and_the_output_is_deterministic(runs: list[Run], method: str) -> None:
    before = copy.deepcopy(runs)
    # qrels judging none of the runs' queries are refused (test_api_probe2_fusion): judge theirs
    qrels = {q: {"a": 1} for run in runs for q in run} or {"q1": {"a": 1}}
    first = fuse(runs, method=method, qrels=qrels if METHODS[method].kind == "trained" else None)
    assert runs == before
    again = fuse(runs, method=method, qrels=qrels if METHODS[method].kind == "trained" else None)
    assert json.dumps(first.to_dict()) == json.dumps(again.to_dict())


# --- tuning --------------------------------------------------------------------------------------


def test_weight_grid_is_exact() -> None:
    grid = weight_grid(3, 0.1)
    assert len(grid) == 66
    assert all(round(sum(w) * 10) == 10 for w in grid)
    assert len(set(grid)) == 66
    a, b = ({f"q{i}": {"a": 1.0, "b": 0.5} for i in range(5)}, {f"q{i}": {"b": 1.0} for i in range(5)})
    judged = {f"q{i}": {"a": 1} for i in range(5)}
    for step in (0.3, 0, -0.1, float("nan"), float("inf"), 1e-9, "0.1", True):
        message = f"'step' must be 1 / n for a whole n >= 1, such as 0.1 or 0.05 (got {step!r})"
        with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
            weight_grid(2, step)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):  # tune says so before any fusion
            tune([a, b], judged, method="wsum", step=step)  # type: ignore[arg-type]
    assert weight_grid(2, 1) == [(0.0, 1.0), (1.0, 0.0)]
    assert weight_grid(2, Decimal("0.5")) == weight_grid(2, np.float64(0.5)) == weight_grid(2, Fraction(1, 2))
    assert weight_grid(2, np.int64(1)) == [(0.0, 1.0), (1.0, 0.0)]
    for method in ("rrf", "combsum"):  # methods without weights check the step too
        with pytest.raises(ValueError, match=r"^'step' must be 1 / n for a whole n >= 1, .* \(got 0\)$"):
            tune([a, b], judged, method=method, step=0)


def _tuning_data() -> tuple[Run, Run, dict[str, dict[str, int]]]:
    rng = random.Random(5)
    a: Run = {}
    b: Run = {}
    qrels: dict[str, dict[str, int]] = {}
    for q in range(30):
        docs = [f"d{i}" for i in range(12)]
        qrels[f"q{q}"] = {d: rng.randint(0, 1) for d in rng.sample(docs, 5)}
        a[f"q{q}"] = {d: rng.random() for d in docs}
        b[f"q{q}"] = {d: rng.random() + 0.5 * qrels[f"q{q}"].get(d, 0) for d in docs}
    return a, b, qrels


def test_tune_chooses_on_training_folds_and_scores_held_out() -> None:
    from ef.evaluation import evaluate_run

    a, b, qrels = _tuning_data()
    report = tune({"a": a, "b": b}, qrels, method="wsum", folds=3, step=0.5)
    queries = sorted(qrels)
    order = np.random.default_rng(0).permutation(len(queries))
    fold_of = {queries[i]: f % 3 for f, i in enumerate(order)}
    grid = weight_grid(2, 0.5)
    per_query = {w: evaluate_run(fuse([a, b], method="wsum", weights=w), qrels, ["ndcg@10"]).per_query for w in grid}
    for f in range(3):
        train = [q for q in queries if fold_of[q] != f]
        means = {w: np.mean([per_query[w][q]["ndcg@10"] for q in train]) for w in grid}
        best = max(grid, key=lambda w: (means[w], -grid.index(w)))
        assert report.chosen[f].weights == best
        for q in queries:
            if fold_of[q] == f:
                assert report.held_out[q] == per_query[best][q]["ndcg@10"]
    c = report.comparison.get("fused", "ndcg@10", baseline="b")
    assert c.system_mean == pytest.approx(np.mean(list(report.held_out.values())))
    assert report.best_input == "b"
    assert report.verdict().startswith(("fusion beat the best input (b) on ndcg@10: ",
                                        "fusion did not beat the best input (b) on ndcg@10: "))


def test_tune_sweeps_methods_and_norms_in_one_call_and_fits_trained_methods_per_fold() -> None:
    a, b, qrels = _tuning_data()
    report = tune([a, b], qrels, method=["combsum", "rrf", "posfuse"], norm=["min-max", "z-score"], folds=2)
    assert list(report.sweep) == [("combsum", "min-max"), ("combsum", "z-score"), ("rrf", "none"),
                                  ("posfuse", "none")]
    assert set(report.inputs) == {"run1", "run2"}
    assert all(0.0 <= v <= 1.0 for v in report.sweep.values())


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.text(alphabet=st.characters(max_codepoint=127), max_size=10),
                          st.text(max_size=3)), max_size=30))
def test_tied_ids_rank_in_byte_order_by_head_or_by_bytes(ids: list[str]) -> None:
    # Ids that differ in their first 8 bytes are ordered by their heads, the rest by their bytes.
    from ef.fusion._order import heads_of

    n = len(ids)
    order = trec_order(np.zeros(n, np.int64), np.ones(n), np.arange(n), heads_of(ids), ids).tolist()
    # Greater bytes first; equal ids keep their order.
    assert order == sorted(range(n), key=lambda i: (ids[i].encode("utf-8", "surrogatepass"), -i), reverse=True)


# --- the fused run written as TREC text, straight from its arrays ---------------------------------


@pytest.mark.parametrize("method", ["rrf", "combsum", "borda", "combmed", "wsum"])
def test_a_fused_run_writes_what_its_dicts_write(tmp_path: Path, method: str) -> None:
    from ef.io.trec import run_lines
    from ef.trec import write_run

    rng = random.Random(7)
    runs = _random_runs(rng, 3, n_queries=6)  # half-integer scores: many ties, negative and zero scores
    runs[0]["q#"] = {"d9": 1.0, "d10": 1.0}  # '#' inside an id is fine; ties by byte order (d9 first)
    for norm in ("none", "z-score"):
        options: dict[str, Any] = {"method": method}
        if METHODS[method].kind == "score":
            options["norm"] = norm
        if METHODS[method].weighted:
            options["weights"] = [0.5, 0.25, 0.25]
        fused = fuse(runs, **options)
        write_run(tmp_path / "expected.trec", fused.to_dict(), run_id="x1")
        write_run(tmp_path / "fused.trec", fused, run_id="x1")
        expected = (tmp_path / "expected.trec").read_text()
        assert expected.count("\n") == sum(map(len, fused.values()))
        assert (tmp_path / "fused.trec").read_text() == expected
        assert "".join(run_lines(fused, run_id="x1")) == expected


@pytest.mark.parametrize(
    ("runs", "message"),
    [
        ([{"q1": {"d 1": 1.0}}], r"^a doc id of query 'q1' must not hold a space, which separates TREC columns"),
        ([{"#q": {"d1": 1.0}}], r"^a query id must not start with '#'"),
        ([{"q1": {"": 1.0}}], r"^a doc id of query 'q1' must be a non-empty str"),
        ([{"q1": {"d\ud800": 1.0}}], r"^a doc id of query 'q1' holds a lone surrogate"),
    ],
)
def test_a_fused_run_is_refused_as_write_run_refuses_its_dicts(tmp_path: Path, runs: list[Run], message: str) -> None:
    from ef.io.trec import format_run, run_lines
    from ef.trec import write_run

    with pytest.raises(ValueError, match=message):
        "".join(format_run(fuse(runs, method="rrf").to_dict(), run_id="r"))
    with pytest.raises(ValueError, match=message):
        "".join(run_lines(fuse(runs, method="rrf"), run_id="r"))
    with pytest.raises(ValueError, match=message):
        write_run(tmp_path / "out.trec", fuse(runs, method="rrf"), run_id="r")
    assert not (tmp_path / "out.trec").exists()


def test_writing_a_fused_run_checks_the_run_id() -> None:
    from ef.io.trec import run_lines

    with pytest.raises(ValueError, match=r"^'run_id' must not hold a space"):
        run_lines(fuse([A]), run_id="my run")
    with pytest.raises(TypeError, match="unexpected keyword argument 'nope'"):
        fuse([A], nope=1)  # type: ignore[call-arg]
    assert len(fuse([{"q1": {}}])) == 0  # a query with no document is no query of the fused run
    with pytest.raises(ValueError, match=r"^'run' holds no query: its file would hold no ranking line"):
        run_lines(fuse([{"q1": {}}]), run_id="r")  # an empty file, which evaluate_run refuses


# --- the command line ----------------------------------------------------------------------------


def test_cli_fuses_to_a_file_and_to_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ef.cli import main
    from ef.trec import read_run, write_run

    write_run(tmp_path / "a.trec", A)
    write_run(tmp_path / "b.trec", B)
    assert main(["fuse", str(tmp_path / "a.trec"), str(tmp_path / "b.trec"), "--method", "rrf", "-p", "k=0",
                 "-o", str(tmp_path / "out.trec")]) == 0
    assert read_run(tmp_path / "out.trec") == {"q1": {"d1": 1.5, "d3": 4 / 3, "d2": 0.5}}
    assert main(["fuse", str(tmp_path / "a.trec"), str(tmp_path / "b.trec"), "--method", "combsum", "-o", "-"]) == 0
    assert capsys.readouterr().out == "q1 Q0 d3 1 1.0 fused\nq1 Q0 d1 2 1.0 fused\nq1 Q0 d2 3 0.5 fused\n"
    assert main(["fuse", str(tmp_path / "a.trec"), "--method", "nope", "-o", "-"]) == 2
    names = ", ".join(map(repr, METHODS))
    assert capsys.readouterr().err == f"ef fuse: error: --method must be one of {names} (got 'nope')\n"


def test_cli_tune_prints_the_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from ef.cli import main
    from ef.trec import write_qrels, write_run

    a, b, qrels = _tuning_data()
    write_run(tmp_path / "a.trec", a)
    write_run(tmp_path / "b.trec", b)
    write_qrels(tmp_path / "qrels.txt", qrels)
    assert main(["fuse", str(tmp_path / "a.trec"), str(tmp_path / "b.trec"), "--method", "wsum", "--step", "0.5",
                 "--tune", str(tmp_path / "qrels.txt"), "--folds", "3"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("fold 1: wsum norm=min-max weights=")
    assert out[-1].startswith(("fusion beat the best input (b) on ndcg@10: ", "fusion did not beat the best input"))


SCIFACT = Path(__file__).resolve().parents[2] / "shared" / "data" / "beir" / "scifact"


@pytest.mark.slow
@pytest.mark.skipif(not SCIFACT.is_dir(), reason="needs the SciFact data under shared/data")
def test_scifact_bm25_fused_with_itself_scores_as_bm25_and_tune_says_no_gain() -> None:
    from ef.evaluation import evaluate_run, read_beir
    from ef.source_manager import ingest

    corpus, queries, qrels = read_beir(SCIFACT)
    ids = [q for q in queries if q in qrels]
    hits = ingest(corpus, show_progress=False).search_many([queries[q] for q in ids], limit=100)
    bm25 = {q: {h.segment.source_id: h.score for h in hs} for q, hs in zip(ids, hits, strict=True) if hs}
    assert round(evaluate_run(bm25, qrels, ["ndcg@10"]).metrics["ndcg@10"], 4) == 0.6791
    fused = fuse({"a": bm25, "b": bm25}, method="rrf")
    assert {q: list(docs) for q, docs in fused.items()} == {q: _ranked(docs) for q, docs in bm25.items()}
    report = tune({"a": bm25, "b": bm25}, qrels, method="rrf", folds=5)
    assert np.mean(list(report.held_out.values())) == pytest.approx(0.6791, abs=5e-5)
    assert report.verdict().startswith("fusion did not beat the best input (a) on ndcg@10: +0.0000")


@pytest.mark.parametrize("method", ["rrf", "combsum", "combmed"])
def test_fusion_through_the_pure_python_engine_is_the_same(monkeypatch: pytest.MonkeyPatch, method: str) -> None:
    # Without the extension, ef.fusion runs on the reference engine (the door's fallback): it takes
    # the same numpy arrays and gives the same run and the same text.
    from ef.evaluation import _engine, _hits, _reference
    from ef.fusion import _order, _stack
    from ef.io.trec import run_lines

    runs = _random_runs(random.Random(11), 3, n_queries=5)
    expected = fuse(runs, method=method).to_dict()
    text = "".join(run_lines(fuse(runs, method=method), run_id="r"))
    for module in (_engine, _hits, _order, _stack):  # the writer and RankedRun take _engine.engine when called
        monkeypatch.setattr(module, "engine", _reference)
    assert fuse(runs, method=method).to_dict() == expected
    assert "".join(run_lines(fuse(runs, method=method), run_id="r")) == text


def test_a_query_with_only_empty_lists_fuses_without_a_warning() -> None:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's divide-by-zero RuntimeWarning included
        # as before the fix (2.0: Borda counts the doc in both runs), now without a warning
        assert fuse([{"q1": {}}, {"q2": {"a": 1.0}}], method="combsum", norm="borda") == {"q2": {"a": 2.0}}


@pytest.mark.parametrize(
    ("name", "data", "error"),
    [("missing.trec", None, "No such file"), ("cut.trec.gz", b"\x1f\x8b\x08\x00", "truncated gzip stream")],
    ids=["missing", "truncated gzip"],
)
def test_fusing_files_names_a_files_fault_before_a_later_file_that_cannot_be_read(
    tmp_path: Path, name: str, data: bytes | None, error: str
) -> None:
    # Files are read one after the other, as fuse([read_run(p) for p in paths]) reads them: the
    # first file's fault is the error, not the later file's (read before the first was parsed).
    import re

    from ef.trec import read_run

    bad, later = tmp_path / "bad.trec", tmp_path / name
    bad.write_bytes(b"q1 Q0 x 1 1.0 r\nq1 Q0 y 2\n")
    if data is not None:
        later.write_bytes(data)
    with pytest.raises((OSError, ValueError), match=error):
        read_run(later)
    fault = f"^{re.escape(str(bad))}:2: expected 6 columns 'query_id iter doc_id rank score run_id', got 4$"
    with pytest.raises(ValueError, match=fault):
        fuse([read_run(p) for p in (bad, later)], method="rrf")
    with pytest.raises(ValueError, match=fault):
        fuse([bad, later], method="rrf")


def test_cli_tune_reads_a_run_from_stdin_once_and_fuses_it(tmp_path: Path) -> None:
    # --tune reads the runs to choose, then fuses them: a run on standard input (or a pipe, a FIFO)
    # can be read only once, so the output must not be the fusion of the other runs alone.
    import subprocess
    import sys

    from ef.cli import main
    from ef.trec import read_run, write_qrels, write_run

    a, b, qrels = _tuning_data()
    write_run(tmp_path / "a.trec", a)
    write_run(tmp_path / "b.trec", b)
    write_qrels(tmp_path / "qrels.txt", qrels)
    common = ["--method", "rrf", "--tune", str(tmp_path / "qrels.txt"), "--folds", "3", "-q"]
    assert main(["fuse", f"a={tmp_path / 'a.trec'}", str(tmp_path / "b.trec"), *common,
                 "-o", str(tmp_path / "files.trec")]) == 0
    command = [sys.executable, "-m", "ef", "fuse", "a=-", str(tmp_path / "b.trec"), *common]
    subprocess.run([*command, "-o", str(tmp_path / "stdin.trec")], input=(tmp_path / "a.trec").read_bytes(),
                   capture_output=True, check=True)
    assert read_run(tmp_path / "stdin.trec") == read_run(tmp_path / "files.trec")
    assert (tmp_path / "stdin.trec").read_bytes() == (tmp_path / "files.trec").read_bytes()
