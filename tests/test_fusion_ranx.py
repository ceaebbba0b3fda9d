"""ranx's own fusion and normalisation tests, ported one by one to ef.fusion.

Source: github.com/AmenRa/ranx, ``tests/unit/ranx/fusion/*_test.py``, ``tests/unit/ranx/fusion_test.py``,
``tests/unit/ranx/normalization/*_test.py`` and ``tests/unit/ranx/normalize_test.py`` (the versions of
commits 578a8b56, 7a55106c, 0372dc82, 1a078b75, 22d2866e and 2c52fdf3; the ranx 0.3.21 sdist ships
no tests). Each test below takes ranx's exact inputs (its integer scores included) and asserts the
values ranx's test asserts, written as ranx writes them. ranx's low-level functions (``comb_sum(runs)``
and so on) fuse the scores as given, so the ports pass ``norm="none"``.

Where ef deviates on purpose the test says so and asserts ef's value:

- ties: ranx's tests assert values only, and its output lists ties in dict order; ef lists every
  query in trec_eval's order (score descending, then doc id descending), asserted here as well;
- Condorcet: ranx scores a query's docs by their position in its Condorcet order (n, n - 1 ... 1);
  ef gives Copeland scores (pairwise wins + draws / 2). The order is the same on these fixtures
  (transitive majorities), so the ports assert ranx's order and ef's Copeland values;
- trained tables: ranx's BayesFuse table has one log-odds per rank, ef's one per rank segment
  (the same value repeated in ranx); ef's ``fit`` returns the fitted tables as ``params["tables"]``;
- norm names: ranx accepts ``"min_max_inverted"`` beside ``"min-max-inverted"``; ef has one spelling
  per norm and refuses the other by name;
- ranx's parallel helpers (``max_norm_parallel``, ``min_max_norm_parallel``) and internals
  (``get_candidates``, ``get_results``, ``_estimate_log_odds``) have no ef counterpart: the ports
  assert the same facts through ``fuse`` and ``fit``.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import numpy as np
import pytest

from ef.fusion import fit, fuse

Run = dict[str, dict[str, Any]]

# The three runs most of ranx's fusion tests share (its fixtures run_1, run_2, run_3).
RUN_1: Run = {"q1": {"d1": 1, "d2": 2, "d3": 3}, "q2": {"d1": 1, "d2": 2}}
RUN_2: Run = {"q1": {"d1": 3, "d2": 2}, "q2": {"d1": 1, "d3": 3}}
RUN_3: Run = {"q1": {"d3": 1}, "q2": {"d2": 2, "d3": 3}}
RUNS = [RUN_1, RUN_2, RUN_3]
# ranx's one-query qrels for the trained methods (posfuse, probfuse, segfuse, slidefuse, mapfuse).
QRELS = {"q1": {"d1": 1}, "q2": {"d1": 1}}


def _trec_ordered(run: dict[str, dict[str, float]]) -> None:
    """Each query's docs in trec_eval's order (score descending, doc id descending) -- ef's, not ranx's."""
    for docs in run.values():
        assert list(docs) == sorted(docs, key=lambda d: (docs[d], d), reverse=True)


def _shape(run: dict[str, dict[str, float]], sizes: dict[str, int]) -> None:
    """ranx's ``len(combined_run) == ...`` and ``len(combined_run[q]) == ...`` assertions."""
    assert {q: len(docs) for q, docs in run.items()} == sizes
    _trec_ordered(run)


# --- fusion/comb_*_test.py --------------------------------------------------------------------------


def test_comb_sum() -> None:
    got = fuse(RUNS, method="combsum", norm="none")
    _shape(got, {"q1": 3, "q2": 3})
    assert got["q1"]["d1"] == RUN_1["q1"]["d1"] + RUN_2["q1"]["d1"]
    assert got["q1"]["d2"] == RUN_1["q1"]["d2"] + RUN_2["q1"]["d2"]
    assert got["q1"]["d3"] == RUN_1["q1"]["d3"] + RUN_3["q1"]["d3"]
    assert got["q2"]["d1"] == RUN_1["q2"]["d1"] + RUN_2["q2"]["d1"]
    assert got["q2"]["d2"] == RUN_1["q2"]["d2"] + RUN_3["q2"]["d2"]
    assert got["q2"]["d3"] == RUN_2["q2"]["d3"] + RUN_3["q2"]["d3"]
    # Deviation (ties): q1's three docs all score 4; ef lists them d3, d2, d1 (doc id descending).
    assert list(got["q1"]) == ["d3", "d2", "d1"]


def test_comb_anz() -> None:
    got = fuse(RUNS, method="combanz", norm="none")
    _shape(got, {"q1": 3, "q2": 3})
    assert got["q1"]["d1"] == np.mean([1, 3])
    assert got["q1"]["d2"] == np.mean([2, 2])
    assert got["q1"]["d3"] == np.mean([3, 1])
    assert got["q2"]["d1"] == np.mean([1, 1])
    assert got["q2"]["d2"] == np.mean([2, 2])
    assert got["q2"]["d3"] == np.mean([3, 3])


def test_comb_gmnz() -> None:
    # ranx: comb_gmnz(gamma=1) == comb_mnz and comb_gmnz(gamma=0) == comb_sum, run for run.
    one = fuse(RUNS, method="combgmnz", norm="none", params={"gamma": 1.0})
    assert one == fuse(RUNS, method="combmnz", norm="none")
    zero = fuse(RUNS, method="combgmnz", norm="none", params={"gamma": 0.0})
    assert zero == fuse(RUNS, method="combsum", norm="none")
    # ef's dict equality ignores order; the order is trec_eval's in both (and so equal too).
    assert [list(d) for d in one.values()] == [list(d) for d in fuse(RUNS, method="combmnz", norm="none").values()]


def test_comb_max() -> None:
    got = fuse(RUNS, method="combmax", norm="none")
    _shape(got, {"q1": 3, "q2": 3})
    assert got == {"q1": {"d1": 3, "d2": 2, "d3": 3}, "q2": {"d1": 1, "d2": 2, "d3": 3}}


def test_comb_med() -> None:
    got = fuse(RUNS, method="combmed", norm="none")
    _shape(got, {"q1": 3, "q2": 3})
    assert got["q1"]["d1"] == np.median([1, 3])
    assert got["q1"]["d2"] == np.median([2, 2])
    assert got["q1"]["d3"] == np.median([3, 1])
    assert got["q2"]["d1"] == np.median([1, 1])
    assert got["q2"]["d2"] == np.median([2, 2])
    assert got["q2"]["d3"] == np.median([3, 3])


def test_comb_min() -> None:
    got = fuse(RUNS, method="combmin", norm="none")
    _shape(got, {"q1": 3, "q2": 3})
    assert got == {"q1": {"d1": 1, "d2": 2, "d3": 1}, "q2": {"d1": 1, "d2": 2, "d3": 3}}


def test_comb_mnz() -> None:
    got = fuse(RUNS, method="combmnz", norm="none")
    _shape(got, {"q1": 3, "q2": 3})
    assert got["q1"]["d1"] == sum([1, 3]) * 2
    assert got["q1"]["d2"] == sum([2, 2]) * 2
    assert got["q1"]["d3"] == sum([3, 1]) * 2
    assert got["q2"]["d1"] == sum([1, 1]) * 2
    assert got["q2"]["d2"] == sum([2, 2]) * 2
    assert got["q2"]["d3"] == sum([3, 3]) * 2


# --- fusion/isr, log_isr, logn_isr, rrf, rbc ----------------------------------------------------------
# Ranks: q1 run_1 d3 d2 d1, run_2 d1 d2, run_3 d3; q2 run_1 d2 d1, run_2 d3 d1, run_3 d3 d2.


def test_isr() -> None:
    got = fuse(RUNS, method="isr")
    _shape(got, {"q1": 3, "q2": 3})
    assert got["q1"]["d1"] == ((1 / (3**2)) + (1 / (1**2))) * 2
    assert got["q1"]["d2"] == ((1 / (2**2)) + (1 / (2**2))) * 2
    assert got["q1"]["d3"] == ((1 / (1**2)) + (1 / (1**2))) * 2
    assert got["q2"]["d1"] == ((1 / (2**2)) + (1 / (2**2))) * 2
    assert got["q2"]["d2"] == ((1 / (1**2)) + (1 / (2**2))) * 2
    assert got["q2"]["d3"] == ((1 / (1**2)) + (1 / (1**2))) * 2


def test_log_isr() -> None:
    got = fuse(RUNS, method="log_isr")
    _shape(got, {"q1": 3, "q2": 3})
    assert got["q1"]["d1"] == ((1 / (3**2)) + (1 / (1**2))) * np.log(2)
    assert got["q1"]["d2"] == ((1 / (2**2)) + (1 / (2**2))) * np.log(2)
    assert got["q1"]["d3"] == ((1 / (1**2)) + (1 / (1**2))) * np.log(2)
    assert got["q2"]["d1"] == ((1 / (2**2)) + (1 / (2**2))) * np.log(2)
    assert got["q2"]["d2"] == ((1 / (1**2)) + (1 / (2**2))) * np.log(2)
    assert got["q2"]["d3"] == ((1 / (1**2)) + (1 / (1**2))) * np.log(2)


def test_logn_isr() -> None:
    sigma = 0.1
    got = fuse(RUNS, method="logn_isr", params={"sigma": sigma})
    _shape(got, {"q1": 3, "q2": 3})
    assert got["q1"]["d1"] == ((1 / (3**2)) + (1 / (1**2))) * np.log(2 + sigma)
    assert got["q1"]["d2"] == ((1 / (2**2)) + (1 / (2**2))) * np.log(2 + sigma)
    assert got["q1"]["d3"] == ((1 / (1**2)) + (1 / (1**2))) * np.log(2 + sigma)
    assert got["q2"]["d1"] == ((1 / (2**2)) + (1 / (2**2))) * np.log(2 + sigma)
    assert got["q2"]["d2"] == ((1 / (1**2)) + (1 / (2**2))) * np.log(2 + sigma)
    assert got["q2"]["d3"] == ((1 / (1**2)) + (1 / (1**2))) * np.log(2 + sigma)


def test_rrf() -> None:
    got = fuse(RUNS, method="rrf")
    _shape(got, {"q1": 3, "q2": 3})
    assert got["q1"]["d1"] == ((1 / (60 + 3)) + (1 / (60 + 1)))
    assert got["q1"]["d2"] == ((1 / (60 + 2)) + (1 / (60 + 2)))
    assert got["q1"]["d3"] == ((1 / (60 + 1)) + (1 / (60 + 1)))
    assert got["q2"]["d1"] == ((1 / (60 + 2)) + (1 / (60 + 2)))
    assert got["q2"]["d2"] == ((1 / (60 + 1)) + (1 / (60 + 2)))
    assert got["q2"]["d3"] == ((1 / (60 + 1)) + (1 / (60 + 1)))


# rbc_test.py's own four runs (one query, seven docs), from Bailey et al. 2017's worked example.
RBC_RUNS: list[Run] = [
    {"q1": {"A": 7, "D": 6, "B": 5, "C": 4, "G": 3, "F": 2}},
    {"q1": {"B": 7, "D": 6, "E": 5, "C": 4}},
    {"q1": {"A": 7, "B": 6, "D": 5, "C": 4, "G": 3, "F": 2, "E": 1}},
    {"q1": {"G": 7, "D": 6, "E": 5, "A": 4, "F": 3, "C": 2}},
]


@pytest.mark.parametrize(
    ("phi", "expected"),
    [
        (0.6, {"A": 0.89, "D": 0.86, "B": 0.78, "G": 0.50, "E": 0.31, "C": 0.29, "F": 0.11}),
        (0.8, {"D": 0.61, "A": 0.50, "B": 0.49, "C": 0.37, "G": 0.36, "E": 0.31, "F": 0.21}),
        (0.9, {"D": 0.35, "C": 0.28, "A": 0.27, "B": 0.27, "G": 0.23, "E": 0.22, "F": 0.18}),
    ],
)
def test_rbc(phi: float, expected: dict[str, float]) -> None:
    got = fuse(RBC_RUNS, method="rbc", params={"phi": phi})
    _shape(got, {"q1": 7})
    assert {d: round(v, 2) for d, v in got["q1"].items()} == expected
    # ranx lists its expectations best first; ef's order is the same (A and B at phi 0.9 differ
    # beyond the second decimal: A 0.2727..., B 0.2680..., so A first, as ranx writes them).
    assert list(got["q1"]) == list(expected)


# --- fusion/mixed, wsum (and fusion_test.py's weighted_sum), wmnz ------------------------------------------


def test_mixed() -> None:
    got = fuse(RUNS, method="mixed", norm="none", weights=[1, 1, 1])
    _shape(got, {"q1": 3, "q2": 3})
    assert got["q1"]["d1"] == (RUN_1["q1"]["d1"] + RUN_2["q1"]["d1"]) * np.sqrt(2)
    assert got["q1"]["d2"] == (RUN_1["q1"]["d2"] + RUN_2["q1"]["d2"]) * np.sqrt(2)
    assert got["q1"]["d3"] == (RUN_1["q1"]["d3"] + RUN_3["q1"]["d3"]) * np.sqrt(2)
    assert got["q2"]["d1"] == (RUN_1["q2"]["d1"] + RUN_2["q2"]["d1"]) * np.sqrt(2)
    assert got["q2"]["d2"] == (RUN_1["q2"]["d2"] + RUN_3["q2"]["d2"]) * np.sqrt(2)
    assert got["q2"]["d3"] == (RUN_2["q2"]["d3"] + RUN_3["q2"]["d3"]) * np.sqrt(2)

    w = [0.3, 0.2, 0.5]
    got = fuse(RUNS, method="mixed", norm="none", weights=w)
    _shape(got, {"q1": 3, "q2": 3})
    assert got["q1"]["d1"] == (w[0] * RUN_1["q1"]["d1"] + w[1] * RUN_2["q1"]["d1"]) * np.sqrt(2)
    assert got["q1"]["d2"] == (w[0] * RUN_1["q1"]["d2"] + w[1] * RUN_2["q1"]["d2"]) * np.sqrt(2)
    assert got["q1"]["d3"] == (w[0] * RUN_1["q1"]["d3"] + w[2] * RUN_3["q1"]["d3"]) * np.sqrt(2)
    assert got["q2"]["d1"] == (w[0] * RUN_1["q2"]["d1"] + w[1] * RUN_2["q2"]["d1"]) * np.sqrt(2)
    assert got["q2"]["d2"] == (w[0] * RUN_1["q2"]["d2"] + w[2] * RUN_3["q2"]["d2"]) * np.sqrt(2)
    assert got["q2"]["d3"] == (w[1] * RUN_2["q2"]["d3"] + w[2] * RUN_3["q2"]["d3"]) * np.sqrt(2)


@pytest.mark.parametrize("source", ["fusion/wsum_test.py", "fusion_test.py (weighted_sum)"])
def test_wsum(source: str) -> None:
    w = [0.3, 0.2, 0.5]
    got = fuse(RUNS, method="wsum", norm="none", weights=w)
    _shape(got, {"q1": 3, "q2": 3})
    assert got["q1"]["d1"] == w[0] * RUN_1["q1"]["d1"] + w[1] * RUN_2["q1"]["d1"]
    assert got["q1"]["d2"] == w[0] * RUN_1["q1"]["d2"] + w[1] * RUN_2["q1"]["d2"]
    assert got["q1"]["d3"] == w[0] * RUN_1["q1"]["d3"] + w[2] * RUN_3["q1"]["d3"]
    assert got["q2"]["d1"] == w[0] * RUN_1["q2"]["d1"] + w[1] * RUN_2["q2"]["d1"]
    assert got["q2"]["d2"] == w[0] * RUN_1["q2"]["d2"] + w[2] * RUN_3["q2"]["d2"]
    assert got["q2"]["d3"] == w[1] * RUN_2["q2"]["d3"] + w[2] * RUN_3["q2"]["d3"]


def test_wmnz() -> None:
    got = fuse(RUNS, method="wmnz", norm="none", weights=[1, 1, 1])
    _shape(got, {"q1": 3, "q2": 3})
    assert got["q1"]["d1"] == sum([1, 3]) * 2
    assert got["q1"]["d2"] == sum([2, 2]) * 2
    assert got["q1"]["d3"] == sum([3, 1]) * 2
    assert got["q2"]["d1"] == sum([1, 1]) * 2
    assert got["q2"]["d2"] == sum([2, 2]) * 2
    assert got["q2"]["d3"] == sum([3, 3]) * 2

    w = [0.3, 0.2, 0.5]
    got = fuse(RUNS, method="wmnz", norm="none", weights=w)
    _shape(got, {"q1": 3, "q2": 3})
    assert got["q1"]["d1"] == (RUN_1["q1"]["d1"] + RUN_2["q1"]["d1"]) * (w[0] + w[1])
    assert got["q1"]["d2"] == (RUN_1["q1"]["d2"] + RUN_2["q1"]["d2"]) * (w[0] + w[1])
    assert got["q1"]["d3"] == (RUN_1["q1"]["d3"] + RUN_3["q1"]["d3"]) * (w[0] + w[2])
    assert got["q2"]["d1"] == (RUN_1["q2"]["d1"] + RUN_2["q2"]["d1"]) * (w[0] + w[1])
    assert got["q2"]["d2"] == (RUN_1["q2"]["d2"] + RUN_3["q2"]["d2"]) * (w[0] + w[2])
    assert got["q2"]["d3"] == (RUN_2["q2"]["d3"] + RUN_3["q2"]["d3"]) * (w[1] + w[2])


# --- fusion/bordafuse, weighted_bordafuse ---------------------------------------------------------------


def test_bordafuse() -> None:
    got = fuse(RUNS, method="borda")
    _shape(got, {"q1": 3, "q2": 3})
    assert got["q1"]["d1"] == 1 + 3 + 1.5
    assert got["q1"]["d2"] == 2 + 2 + 1.5
    assert got["q1"]["d3"] == 3 + 1 + 3
    assert got["q2"]["d1"] == 2 + 2 + 1
    assert got["q2"]["d2"] == 3 + 1 + 2
    assert got["q2"]["d3"] == 1 + 3 + 3
    # Deviation (ties): q1's d1 and d2 both score 5.5; ef puts d2 (the larger id) first.
    assert list(got["q1"]) == ["d3", "d2", "d1"]


def test_weighted_bordafuse() -> None:
    got = fuse(RUNS, method="wborda", weights=[1, 1, 1])
    _shape(got, {"q1": 3, "q2": 3})
    assert got["q1"]["d1"] == 1 + 3 + 1.5
    assert got["q1"]["d2"] == 2 + 2 + 1.5
    assert got["q1"]["d3"] == 3 + 1 + 3
    assert got["q2"]["d1"] == 2 + 2 + 1
    assert got["q2"]["d2"] == 3 + 1 + 2
    assert got["q2"]["d3"] == 1 + 3 + 3

    got = fuse(RUNS, method="wborda", weights=[3, 2, 1])
    _shape(got, {"q1": 3, "q2": 3})
    assert got["q1"]["d1"] == 3 * 1 + 2 * 3 + 1.5
    assert got["q1"]["d2"] == 3 * 2 + 2 * 2 + 1.5
    assert got["q1"]["d3"] == 3 * 3 + 2 * 1 + 3
    assert got["q2"]["d1"] == 3 * 2 + 2 * 2 + 1
    assert got["q2"]["d2"] == 3 * 3 + 2 * 1 + 2
    assert got["q2"]["d3"] == 3 * 1 + 2 * 3 + 3


# --- fusion/condorcet, weighted_condorcet -----------------------------------------------------------------

# condorcet_test.py's and weighted_condorcet_test.py's own run_2 and run_3 (run_1 is RUN_1).
CONDORCET_RUNS: list[Run] = [
    RUN_1,
    {"q1": {"d1": 2, "d2": 3}, "q2": {"d1": 1, "d3": 3}},
    {"q1": {"d3": 3}, "q2": {"d2": 2, "d3": 3}},
]


def test_condorcet_candidates_and_results() -> None:
    # ranx's get_candidates: every query's candidates are {d1, d2, d3}; get_results: each run's
    # lists best first. ef has neither function: the candidates are the fused query's docs, and a
    # run fused alone lists its docs in the order ef ranks them.
    fused = fuse(CONDORCET_RUNS, method="condorcet")
    assert {q: set(docs) for q, docs in fused.items()} == {"q1": {"d1", "d2", "d3"}, "q2": {"d1", "d2", "d3"}}
    results = [[list(docs) for docs in fuse([run], method="rrf").values()] for run in CONDORCET_RUNS]
    assert results == [
        [["d3", "d2", "d1"], ["d2", "d1"]],
        [["d2", "d1"], ["d3", "d1"]],
        [["d3"], ["d3", "d2"]],
    ]


def test_condorcet() -> None:
    got = fuse(CONDORCET_RUNS, method="condorcet")
    _shape(got, {"q1": 3, "q2": 3})
    # ranx: d1 1, d2 2, d3 3 in both queries (the position in the Condorcet order). Deviation: ef's
    # Copeland scores; the order is ranx's. q1: d3 beats d2 (runs 1, 3) and d1 (runs 1, 3), d2 beats
    # d1 (runs 1, 2; run 3 abstains). q2: d3 beats d2 (runs 2, 3) and d1 (2, 3), d2 beats d1 (1, 3).
    ranx = {"q1": {"d1": 1, "d2": 2, "d3": 3}, "q2": {"d1": 1, "d2": 2, "d3": 3}}
    for q, docs in ranx.items():
        assert list(got[q]) == sorted(docs, key=docs.__getitem__, reverse=True)
    assert got == {"q1": {"d3": 2.0, "d2": 1.0, "d1": 0.0}, "q2": {"d3": 2.0, "d2": 1.0, "d1": 0.0}}


@pytest.mark.parametrize(
    ("weights", "ranx", "copeland"),
    [
        (
            [1, 1, 1],
            {"q1": {"d1": 1, "d2": 2, "d3": 3}, "q2": {"d1": 1, "d2": 2, "d3": 3}},
            {"q1": {"d3": 2.0, "d2": 1.0, "d1": 0.0}, "q2": {"d3": 2.0, "d2": 1.0, "d1": 0.0}},
        ),
        # q1: run 2 (weight 5) alone outvotes runs 1 and 3 (1 + 2): d2 > d1 > d3. q2: d3 beats both
        # (5 + 2 against 1); d1 beats d2 (5 against 1 + 2).
        (
            [1, 5, 2],
            {"q1": {"d1": 2, "d2": 3, "d3": 1}, "q2": {"d1": 2, "d2": 1, "d3": 3}},
            {"q1": {"d2": 2.0, "d1": 1.0, "d3": 0.0}, "q2": {"d3": 2.0, "d1": 1.0, "d2": 0.0}},
        ),
    ],
)
def test_weighted_condorcet(weights: list[float], ranx: Run, copeland: Run) -> None:
    got = fuse(CONDORCET_RUNS, method="wcondorcet", weights=weights)
    _shape(got, {"q1": 3, "q2": 3})
    for q, docs in ranx.items():  # ranx's order; ef's Copeland values (see test_condorcet)
        assert list(got[q]) == sorted(docs, key=docs.__getitem__, reverse=True)
    assert got == copeland


# --- fusion/bayesfuse_test.py --------------------------------------------------------------------------

BAYES_QRELS = {
    "q1": {"d1": 1, "d2": 1, "d8": 1, "d9": 1, "d10": 1},
    "q2": {"d2": 1, "d4": 1, "d7": 1},
    "q3": {"d1": 1, "d3": 1, "d4": 1, "d5": 1, "d6": 1, "d8": 1, "d9": 1},
}
_TEN = [f"d{i}" for i in range(1, 11)]
BAYES_RUN_1: Run = {q: {d: 10 - i for i, d in enumerate(_TEN)} for q in ("q1", "q2", "q3")}
BAYES_RUN_2: Run = {
    "q1": {d: 10 - i for i, d in enumerate(["d1", "d2", "d8", "d9", "d10", "d3", "d4", "d5", "d6", "d7"])},
    "q2": {d: 10 - i for i, d in enumerate(["d2", "d4", "d7", "d1", "d3", "d5", "d6", "d8", "d9", "d10"])},
    "q3": {d: 10 - i for i, d in enumerate(_TEN)},
}


def test_bayesfuse_log_odds() -> None:
    # ranx's _estimate_log_odds: ranks 1-5 and 6-10 of run 1 hold 8 and 7 of 15 relevant docs, of
    # run 2 12 and 3; ranks past 10 hold none (a negative log-odds). ef keeps one value per segment.
    tables = fit([BAYES_RUN_1, BAYES_RUN_2], BAYES_QRELS, method="bayesfuse")["tables"]
    # ranx asserts three of these four exactly (the fourth with isclose). ef averages the per-query
    # shares, e.g. (3/5 + 1/5 + 3/5) / 3 for 7/15, which lands up to 3 ulp from ranx's pooled
    # fraction after the log: compared to 1e-14 here.
    for run, shares in ((0, (8 / 15, 7 / 15)), (1, (12 / 15, 3 / 15))):
        for segment, p_rel in enumerate(shares):
            p_nonrel = 1 - p_rel
            assert math.isclose(tables[run][segment], np.log(p_rel / p_nonrel), rel_tol=1e-14), (run, segment)
        assert all(x < 0 for x in tables[run][2:])


def test_bayesfuse() -> None:
    params = fit([BAYES_RUN_1, BAYES_RUN_2], BAYES_QRELS, method="bayesfuse")
    tables = params["tables"]

    def odds(run: int, index: int) -> float:  # ranx's log_odds[run][index]: ranks 0-4, 5-9 share a value
        return float(tables[run][index // 5])

    got = fuse([BAYES_RUN_1, BAYES_RUN_2], method="bayesfuse", params=params)
    _shape(got, {"q1": 10, "q2": 10, "q3": 10})
    # ranx's index pairs: run 1's rank of each doc (d_i at i - 1), run 2's from its own lists.
    second = {
        "q1": [0, 1, 5, 6, 7, 8, 8, 2, 3, 4],
        "q2": [3, 0, 4, 1, 5, 6, 2, 7, 8, 9],
        "q3": list(range(10)),
    }
    for q, indices in second.items():
        for i, (doc, j) in enumerate(zip(_TEN, indices, strict=True)):
            assert math.isclose(got[q][doc], odds(0, i) + odds(1, j)), (q, doc)


# --- fusion/mapfuse, posfuse, probfuse, segfuse, slidefuse --------------------------------------------------


def test_mapfuse() -> None:
    params = fit(RUNS, QRELS, method="mapfuse")
    m = params["tables"]
    # MAP by hand: run 1 ranks d1 3rd (q1) and 2nd (q2): (1/3 + 1/2) / 2; run 2 1st and 2nd; run 3 never.
    assert m == [pytest.approx((1 / 3 + 1 / 2) / 2, rel=1e-15), 0.75, 0.0]
    got = fuse(RUNS, method="mapfuse", params=params)
    _shape(got, {"q1": 3, "q2": 3})
    assert got["q1"]["d1"] == m[0] / 3 + m[1] / 1
    assert got["q1"]["d2"] == m[0] / 2 + m[1] / 2
    assert got["q1"]["d3"] == m[0] / 1 + m[2] / 1
    assert got["q2"]["d1"] == m[0] / 2 + m[1] / 2
    assert got["q2"]["d2"] == m[0] / 1 + m[2] / 2
    assert got["q2"]["d3"] == m[1] / 1 + m[2] / 1


def test_posfuse_train() -> None:
    probs = fit(RUNS, QRELS, method="posfuse")["tables"]
    assert np.array_equal(probs[0], np.array([0, 1 / 2, 1 / 1]))
    assert np.array_equal(probs[1], np.array([1 / 2, 1 / 2]))
    assert np.array_equal(probs[2], np.array([0, 0]))


def test_posfuse() -> None:
    params = fit(RUNS, QRELS, method="posfuse")
    probs = params["tables"]
    got = fuse(RUNS, method="posfuse", params=params)
    _shape(got, {"q1": 3, "q2": 3})
    assert got["q1"]["d1"] == probs[0][2] + probs[1][0]
    assert got["q1"]["d2"] == probs[0][1] + probs[1][1]
    assert got["q1"]["d3"] == probs[0][0] + probs[2][0]
    assert got["q2"]["d1"] == probs[0][1] + probs[1][1]
    assert got["q2"]["d2"] == probs[0][0] + probs[2][1]
    assert got["q2"]["d3"] == probs[1][0] + probs[2][0]


def test_probfuse_train() -> None:
    probs = fit(RUNS, QRELS, method="probfuse", params={"segments": 2})["tables"]
    assert probs[0].tolist() == [0.0, 1.0]
    assert probs[1].tolist() == [0.5, 0.5]
    assert probs[2].tolist() == [0, 0]


def test_probfuse() -> None:
    params = fit(RUNS, QRELS, method="probfuse", params={"segments": 2})
    probs = params["tables"]
    got = fuse(RUNS, method="probfuse", params=params)
    _shape(got, {"q1": 3, "q2": 3})
    assert got["q1"]["d1"] == probs[0][1] / 2 + probs[1][0]
    assert got["q1"]["d2"] == probs[0][0] + probs[1][1] / 2
    assert got["q1"]["d3"] == probs[0][0] + probs[2][0]
    assert got["q2"]["d1"] == probs[0][1] / 2 + probs[1][1] / 2
    assert got["q2"]["d2"] == probs[0][0] + probs[2][1] / 2
    assert got["q2"]["d3"] == probs[1][0] + probs[2][0]


def test_segfuse_train() -> None:
    probs = fit(RUNS, QRELS, method="segfuse")["tables"]
    assert np.array_equal(probs[0], np.array([0.2, 0, 0, 0, 0, 0, 0, 0, 0, 0]))
    assert np.array_equal(probs[1], np.array([0.2, 0, 0, 0, 0, 0, 0, 0, 0, 0]))
    assert np.array_equal(probs[2], np.array([0, 0, 0, 0, 0, 0, 0, 0, 0, 0]))


def test_segfuse() -> None:
    params = fit(RUNS, QRELS, method="segfuse")
    probs = params["tables"]
    # ranx's segfuse(runs, probs) takes the scores as given: norm="none" here (ef's default, as
    # ranx.fuse's, is min-max).
    got = fuse(RUNS, method="segfuse", norm="none", params=params)
    _shape(got, {"q1": 3, "q2": 3})
    r1, r2, r3 = RUNS
    assert got["q1"]["d1"] == probs[0][0] * (1 + r1["q1"]["d1"]) + probs[1][0] * (1 + r2["q1"]["d1"])
    assert got["q1"]["d2"] == probs[0][0] * (1 + r1["q1"]["d2"]) + probs[1][0] * (1 + r2["q1"]["d2"])
    assert got["q1"]["d3"] == probs[0][0] * (1 + r1["q1"]["d3"]) + probs[2][0] * (1 + r3["q1"]["d3"])
    assert got["q2"]["d1"] == probs[0][0] * (1 + r1["q2"]["d1"]) + probs[1][0] * (1 + r2["q2"]["d1"])
    assert got["q2"]["d2"] == probs[0][0] * (1 + r1["q2"]["d2"]) + probs[2][0] * (1 + r3["q2"]["d2"])
    assert got["q2"]["d3"] == probs[1][0] * (1 + r2["q2"]["d3"]) + probs[2][0] * (1 + r3["q2"]["d3"])


def test_slidefuse_train() -> None:
    probs = fit(RUNS, QRELS, method="slidefuse")["tables"]
    assert np.array_equal(probs[0], np.array([0, 1 / 2, 1 / 1]))
    assert np.array_equal(probs[1], np.array([1 / 2, 1 / 2]))
    assert np.array_equal(probs[2], np.array([0, 0]))


def test_slidefuse() -> None:
    params = fit(RUNS, QRELS, method="slidefuse", params={"w": 1})
    probs = params["tables"]
    got = fuse(RUNS, method="slidefuse", params=params)
    _shape(got, {"q1": 3, "q2": 3})
    assert got["q1"]["d1"] == sum(probs[0][1:3]) / 2 + sum(probs[1]) / 2
    assert got["q1"]["d2"] == sum(probs[0]) / 3 + sum(probs[1]) / 2
    assert got["q1"]["d3"] == sum(probs[0][:2]) / 2 + sum(probs[2]) / 2
    assert got["q2"]["d1"] == sum(probs[0][0:2]) / 2 + sum(probs[1]) / 2
    assert got["q2"]["d2"] == sum(probs[0][0:2]) / 2 + sum(probs[2]) / 2
    assert got["q2"]["d3"] == sum(probs[1]) / 2 + sum(probs[2]) / 2

    params = fit(RUNS, QRELS, method="slidefuse", params={"w": 2})
    probs = params["tables"]
    got = fuse(RUNS, method="slidefuse", params=params)
    _shape(got, {"q1": 3, "q2": 3})
    assert got["q1"]["d1"] == sum(probs[0]) / 3 + sum(probs[1]) / 2
    assert got["q1"]["d2"] == sum(probs[0]) / 3 + sum(probs[1]) / 2
    assert got["q1"]["d3"] == sum(probs[0]) / 3 + sum(probs[2]) / 2
    assert got["q2"]["d1"] == sum(probs[0][0:2]) / 2 + sum(probs[1]) / 2
    assert got["q2"]["d2"] == sum(probs[0][0:2]) / 2 + sum(probs[2]) / 2
    assert got["q2"]["d3"] == sum(probs[1]) / 2 + sum(probs[2]) / 2


# --- normalization/*_test.py and normalize_test.py ------------------------------------------------------
# ranx normalises one run; in ef a run fused alone by CombSUM is its normalised scores. Each ranx
# test also checks that the input run is left as it was.

NORM_RUN: Run = {"q1": {"d1": 1, "d2": 2, "d3": 3}, "q2": {"d1": 1, "d2": 2}}


def _normalised(norm: str) -> dict[str, dict[str, float]]:
    before = copy.deepcopy(NORM_RUN)
    got = fuse([NORM_RUN], method="combsum", norm=norm)
    assert before == NORM_RUN
    _shape(got, {"q1": 3, "q2": 2})
    return got


@pytest.mark.parametrize("source", ["normalization/min_max_norm_test.py", "normalize_test.py (parallel)"])
def test_min_max_norm(source: str) -> None:
    got = _normalised("min-max")
    assert got["q1"]["d1"] == (1 - 1) / (3 - 1)
    assert got["q1"]["d2"] == (2 - 1) / (3 - 1)
    assert got["q1"]["d3"] == (3 - 1) / (3 - 1)
    assert got["q2"]["d1"] == (1 - 1) / (2 - 1)
    assert got["q2"]["d2"] == (2 - 1) / (2 - 1)


@pytest.mark.parametrize("source", ["normalization/min_max_inverted_norm_test.py", "min_max_norm_test.py"])
def test_min_max_inverted_norm(source: str) -> None:
    got = _normalised("min-max-inverted")
    assert got["q1"]["d1"] == (3 - 1) / (3 - 1)
    assert got["q1"]["d2"] == (3 - 2) / (3 - 1)
    assert got["q1"]["d3"] == (3 - 3) / (3 - 1)
    assert got["q2"]["d1"] == (2 - 1) / (2 - 1)
    assert got["q2"]["d2"] == (2 - 2) / (2 - 1)


def test_min_max_inverted_has_one_spelling() -> None:
    # Deviation: ranx's norm_switch also takes "min_max_inverted"; ef refuses it, naming the norms.
    with pytest.raises(ValueError, match=r"'norm' must be one of .*'min-max-inverted'.* \(got 'min_max_inverted'\)"):
        fuse([NORM_RUN], method="combsum", norm="min_max_inverted")


@pytest.mark.parametrize("source", ["normalization/max_norm_test.py", "normalize_test.py (parallel)"])
def test_max_norm(source: str) -> None:
    got = _normalised("max")
    assert got["q1"]["d1"] == 1 / 3
    assert got["q1"]["d2"] == 2 / 3
    assert got["q1"]["d3"] == 3 / 3
    assert got["q2"]["d1"] == 1 / 2
    assert got["q2"]["d2"] == 2 / 2


def test_sum_norm() -> None:
    got = _normalised("sum")
    assert got["q1"]["d1"] == (1 - 1) / (1 + 2 + 3 - 1 * 3)
    assert got["q1"]["d2"] == (2 - 1) / (1 + 2 + 3 - 1 * 3)
    assert got["q1"]["d3"] == (3 - 1) / (1 + 2 + 3 - 1 * 3)
    assert got["q2"]["d1"] == (1 - 1) / (1 + 2 - 1 * 2)
    assert got["q2"]["d2"] == (2 - 1) / (1 + 2 - 1 * 2)


def test_zmuv_norm() -> None:
    got = _normalised("z-score")  # ranx's "zmuv"
    assert got["q1"]["d1"] == (1 - 2) / 0.816496580927726
    assert got["q1"]["d2"] == (2 - 2) / 0.816496580927726
    assert got["q1"]["d3"] == (3 - 2) / 0.816496580927726
    assert got["q2"]["d1"] == (1 - 1.5) / 0.5
    assert got["q2"]["d2"] == (2 - 1.5) / 0.5


def test_rank_norm() -> None:
    got = _normalised("rank")
    assert got["q1"]["d1"] == 1 - (2 / 3)
    assert got["q1"]["d2"] == 1 - (1 / 3)
    assert got["q1"]["d3"] == 1 - (0 / 3)
    assert got["q2"]["d1"] == 1 - (1 / 2)
    assert got["q2"]["d2"] == 1 - (0 / 2)


def test_borda_norm() -> None:
    # ranx's borda_norm returns each run normalised over the candidates of all three (an unlisted
    # candidate included); in ef a weighted sum with one weight of 1 shows one run's values.
    before = copy.deepcopy(RUNS)
    normed = [fuse(RUNS, method="wsum", norm="borda", weights=[float(i == r) for i in range(3)]) for r in range(3)]
    assert before == RUNS
    for run in normed:
        _shape(run, {"q1": 3, "q2": 3})
    expected = [
        {"q1": {"d1": 1 / 3, "d2": 2 / 3, "d3": 3 / 3}, "q2": {"d1": 2 / 3, "d2": 3 / 3, "d3": 1 / 3}},
        {"q1": {"d1": 3 / 3, "d2": 2 / 3, "d3": 1 / 3}, "q2": {"d1": 2 / 3, "d2": 1 / 3, "d3": 3 / 3}},
        {"q1": {"d1": 1.5 / 3, "d2": 1.5 / 3, "d3": 3 / 3}, "q2": {"d1": 1 / 3, "d2": 2 / 3, "d3": 3 / 3}},
    ]
    for got, want in zip(normed, expected, strict=True):
        for q, docs in want.items():
            for d, value in docs.items():
                assert math.isclose(got[q][d], value), (q, d)
