"""What a ranx / PyTerrier user switching to ef found wrong in fusion (each case worked by hand)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ef.fusion import fit, fuse, tune

# Two runs of two queries; d4 is b's top document for q1 and absent from a's list.
A = {"q1": {"d1": 3.0, "d2": 2.0, "d3": 1.0}, "q2": {"d1": 3.0, "d4": 1.0}}
B = {"q1": {"d4": 0.9, "d1": 0.5}, "q2": {"d4": 2.0, "d2": 1.0}}
QRELS = {"q1": {"d1": 1}, "q2": {"d4": 1}}


def test_segfuse_after_borda_gives_an_unlisted_doc_nothing_not_the_raw_borda_fill() -> None:
    # The tables: each run's first segment [0, 5) holds 1 relevant of 5 places: P = 0.2 for both.
    params = fit([A, B], QRELS, method="segfuse")
    assert [t.tolist()[0] for t in params["tables"]] == [0.2, 0.2]
    # q1 has c = 4 candidates; borda of rank r is 1 - (r - 1) / 4; SegFuse scores P * (borda + 1).
    # d1: a rank 1 -> 0.2 * 2, b rank 2 -> 0.2 * 1.75; d4: b rank 1 -> 0.2 * 2; d2: a rank 2 -> 0.2 * 1.75;
    # d3: a rank 3 -> 0.2 * 1.5. A run that does not list a doc gives it nothing: it was given the
    # borda norm's raw fill (d4 0.25 from a, d2 0.375 from b), a value of another scale that put
    # b's top document last.
    got = fuse([A, B], method="segfuse", norm="borda", params=params)["q1"]
    assert list(got) == ["d1", "d4", "d2", "d3"]
    assert dict(got) == pytest.approx({"d1": 0.75, "d4": 0.4, "d2": 0.35, "d3": 0.3}, rel=1e-12)


@pytest.mark.parametrize(("flags", "message"), [
    (["-p", "k=-1"], "-p k must be a finite number >= 0 (got -1.0)"),
    (["--method", "rbc", "-p", "phi=1"], "-p phi must be a number in (0, 1) (got 1.0)"),
    (["-p", "kk=3"], "-p of method 'rrf' are ['k'] (got 'kk')"),
    (["--method", "posfuse", "--qrels", "QRELS", "-l", "5"],
     "--qrels grade no document of the runs' queries relevant at relevance_level 5 (their highest grade is 1): "
     "method 'posfuse' has nothing to fit on"),
    (["--run-id", "my run"], "--run-id must not hold a space, which separates TREC columns (got 'my run')"),
    (["--run-id", ""], "--run-id must be a non-empty str (got '')"),
    (["--missing-doc", "min"], "--missing-doc 'min' imputes a normalised score, for score-based methods; method "
                               "'rrf' is rank-based: leave it out"),
])
def test_cli_fuse_names_the_param_flag_the_user_typed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], message: str
) -> None:
    # The messages said 'params['k']' and 'params', the Python keyword ef fuse has no flag for.
    from ef.cli import main
    from ef.trec import write_qrels, write_run

    write_run(tmp_path / "a.trec", A)
    write_run(tmp_path / "b.trec", B)
    write_qrels(tmp_path / "qrels.txt", QRELS)
    flags = [str(tmp_path / "qrels.txt") if flag == "QRELS" else flag for flag in flags]
    assert main(["fuse", str(tmp_path / "a.trec"), str(tmp_path / "b.trec"), *flags, "-o", "-"]) == 2
    assert capsys.readouterr().err == f"ef fuse: error: {message}\n"


def test_segfuse_refuses_min_max_inverted_whose_ranks_it_would_read_worst_first() -> None:
    # SegFuse scores the segment of each doc's rank, ranked highest score first; min-max-inverted is
    # for runs where lower is better, whose best doc that order puts last: every segment was read
    # from the wrong end (ranx ranks by the inverted scores). Negating the scores is the way.
    params = fit([A, B], QRELS, method="segfuse")
    with pytest.raises(ValueError) as raised:
        fuse([A, B], method="segfuse", norm="min-max-inverted", params=params)
    assert str(raised.value) == (
        "'norm' 'min-max-inverted' does not apply to method 'segfuse', whose segments are of the ranks, highest "
        "score first: negate the scores of a run where lower is better instead")


@pytest.mark.parametrize("method", ["rrf", "borda", "condorcet", "posfuse"])
def test_missing_min_is_refused_where_no_normalised_score_is_imputed(method: str) -> None:
    # missing='min' is for score-based methods (docs/fusion.md, ef fuse --help): under RRF it gave a
    # doc a run does not list that run's last 1 / (k + rank) (d4 of the docstring's runs: 1/1 + 1/3
    # with k = 0 instead of 1/1), under Borda and Condorcet it was ignored; all silently.
    with pytest.raises(ValueError) as raised:
        fuse([A, B], method=method, missing="min", qrels=QRELS if method == "posfuse" else None)
    kind = "trained" if method == "posfuse" else "rank-based"
    assert str(raised.value) == (
        f"'missing' 'min' imputes a normalised score, for score-based methods; method {method!r} is {kind}: "
        "leave it out")


def test_tune_refuses_missing_min_for_a_method_it_does_not_apply_to() -> None:
    with pytest.raises(ValueError) as raised:
        tune([A, B], QRELS, method=["wsum", "rrf"], missing="min", folds=2)
    assert str(raised.value) == (
        "'missing' 'min' imputes a normalised score, for score-based methods; method 'rrf' is rank-based: "
        "leave it out")


def test_cli_tune_prints_the_comparisons_warnings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Judged queries no run retrieves for are scored 0 and counted in the verdict's held-out queries;
    # ef.compare says so in its warnings, which ef fuse --tune left unprinted (ef compare prints them).
    import random

    from ef.cli import main
    from ef.trec import write_qrels, write_run

    rng = random.Random(5)
    docs = [f"d{i}" for i in range(12)]
    qrels = {f"q{q}": {d: rng.randint(0, 1) for d in rng.sample(docs, 5)} for q in range(30)}
    a = {q: {d: rng.random() for d in docs} for q in list(qrels)[:28]}
    b = {q: {d: rng.random() + 0.5 * qrels[q].get(d, 0) for d in docs} for q in list(qrels)[:28]}
    write_run(tmp_path / "a.trec", a)
    write_run(tmp_path / "b.trec", b)
    write_qrels(tmp_path / "qrels.txt", qrels)
    argv = ["fuse", str(tmp_path / "a.trec"), str(tmp_path / "b.trec"), "--method", "wsum", "--step", "0.5",
            "--tune", str(tmp_path / "qrels.txt"), "--folds", "3"]
    assert main(argv) == 0
    assert capsys.readouterr().err == "".join(
        f"ef fuse: warning: '{name}' lacked 2 of the 30 queries: scored 0 (missing='zero')\n"
        for name in ("fused", "a", "b"))
    assert main([*argv, "-q"]) == 0
    assert capsys.readouterr().err == ""


def test_a_rank_method_given_min_max_inverted_says_how_to_fuse_a_lower_is_better_run() -> None:
    # ranx.fuse(runs, norm="min-max-inverted", method="rrf") ranks a distance run by its inverted
    # scores; ef ranks by score, highest first, and said only "pass none", which fuses it upside down.
    with pytest.raises(ValueError) as raised:
        fuse([A, B], method="rrf", norm="min-max-inverted")
    assert str(raised.value) == (
        "'norm' does not apply to method 'rrf', which uses ranks, highest score first (got 'min-max-inverted'; "
        "pass none, and negate the scores of a run where lower is better)")
