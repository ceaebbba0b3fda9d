"""`ef trec-eval` against trec_eval 10.0's own conformance suite (../shared/data/trec_eval)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ef.cli import main

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "trec_eval"

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason="needs ../shared/data/trec_eval")


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    status = main(["trec-eval", *args])
    captured = capsys.readouterr()
    assert (status, captured.err) == (0, "")
    return captured.out


def test_default_measures_print_out_test_byte_for_byte(capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(capsys, str(DATA / "qrels.test"), str(DATA / "results.test"))
    assert out == (DATA / "out.test").read_text()


def test_all_trec_summary_prints_out_test_a_byte_for_byte(capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(capsys, "-m", "all_trec", str(DATA / "qrels.test"), str(DATA / "results.test"))
    assert out == (DATA / "out.test.a").read_text()


MEAS_PARAMS = [
    "-q",
    "-miprec_at_recall..10,.20,.25,.75,.50",
    "-m",
    "P.5,7,3",
    "-m",
    "recall.20,2000",
    "-m",
    "Rprec_mult.5.0,0.2,0.35",
    "-mutility.2,-1,0,0",
    "-m",
    "11pt_avg..25,.5,.75",
    "-mndcg.1=3,2=9,4=4.5",
    "-mndcg_cut.10,20,23.4",
    "-msuccess.2,5,20",
    "qrels.test",
    "results.test",
]


@pytest.mark.parametrize(
    ("golden", "args", "n_lines"),
    [
        ("out.test.aq", ["-m", "all_trec", "-q", "qrels.test", "results.test"], 387),
        ("out.test.aqc", ["-m", "all_trec", "-q", "-c", "qrels.test", "results.trunc"], 387),
        ("out.test.aql", ["-m", "all_trec", "-mrelstring.20", "-q", "-l2", "qrels.rel_level", "results.test"], 387),
        ("out.test.meas_params", MEAS_PARAMS, 88),
    ],
)
def test_every_line_matches_trec_eval_byte_for_byte(
    capsys: pytest.CaptureFixture[str], golden: str, args: list[str], n_lines: int
) -> None:
    paths = [str(DATA / a) if (DATA / a).is_file() else a for a in args]
    produced = _run(capsys, *paths)
    expected = (DATA / golden).read_text()
    assert produced == expected
    assert len(expected.splitlines()) == n_lines


def test_all_trec_prints_every_trec_eval_family_in_its_order(capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(capsys, "-m", "all_trec", "-q", str(DATA / "qrels.test"), str(DATA / "results.test"))
    families = []
    for line in out.splitlines():
        name = line.split("\t")[0].strip()
        family = name.rsplit("_", 1)[0] if name[-1].isdigit() and "_" in name else name
        if family not in families:
            families.append(family)
    assert families == [
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "Rprec",
        "bpref",
        "recip_rank",
        "iprec_at_recall",
        "P",
        "relstring",
        "recall",
        "infAP",
        "Rprec_mult",
        "utility",
        "11pt_avg",
        "binG",
        "G",
        "ndcg",
        "ndcg_rel",
        "Rndcg",
        "ndcg_cut",
        "map_cut",
        "relative_P",
        "success",
        "set_P",
        "set_relative_P",
        "set_recall",
        "set_map",
        "set_F",
        "num_nonrel_judged_ret",
        "rbp",
        "rbp_resid",
        "unj",
        "runid",
        "num_q",
        "gm_map",
        "gm_bpref",
    ]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        # trec_eval reads cutoffs with atol: "1e1" is 1, "23.4" is 23.
        (["-m", "P.1e1"], "P_1                   \tall\t0.3333\n"),
        (["-m", "ndcg_cut.23.4"], "ndcg_cut_23           \tall\t0.3429\n"),
        # A measure without parameters ignores them: recip_rank.10 is the full recip_rank.
        (["-m", "recip_rank.10"], "recip_rank            \tall\t0.4064\n"),
        # The first parameters given for a family win; a later -m for it adds nothing.
        (["-m", "P.5", "-m", "P.10", "-m", "P"], "P_5                   \tall\t0.2667\n"),
        # ef's names still mean what they say.
        (["-m", "mrr@10", "-m", "P@10"], "recip_rank_10         \tall\t0.3889\nP_10                  \tall\t0.3000\n"),
    ],
)
def test_trec_eval_parameter_parsing_is_matched(
    capsys: pytest.CaptureFixture[str], args: list[str], expected: str
) -> None:
    assert _run(capsys, *args, str(DATA / "qrels.test"), str(DATA / "results.test")) == expected


def test_missing_query_is_skipped_without_c(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["trec-eval", "-m", "num_q", "-m", "num_rel", str(DATA / "qrels.test"), str(DATA / "results.trunc")])
    captured = capsys.readouterr()
    # results.trunc has no line for 302 (77 relevant): skipped, so 474 + 10 relevant remain; trec_eval
    # 10.0 would stop with exit 4, ef says so once on stderr and scores the rest.
    assert (status, captured.out) == (0, "num_q                 \tall\t2\nnum_rel               \tall\t484\n")
    assert captured.err == (
        "ef trec-eval: 1 of 3 judged queries is not in the run: left out, the summary is over 2 (trec_eval 10.0 "
        "stops here; -c, like evaluate_run's default missing='zero', counts it as 0 over 3)\n"
    )


def test_fast_path_file_gives_the_same_output(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # results.test pads scores with two spaces, so it takes the line-by-line path; the same run
    # written with single separators takes the numpy path and must print the same bytes.
    lines = (DATA / "results.test").read_text().splitlines()
    regular = tmp_path / "results.regular"
    regular.write_text("".join(" ".join(line.split()) + "\n" for line in lines))
    out = _run(capsys, "-m", "all_trec", "-q", str(DATA / "qrels.test"), str(regular))
    assert out == _run(capsys, "-m", "all_trec", "-q", str(DATA / "qrels.test"), str(DATA / "results.test"))


# --- the rest of the command line: JSON, CSV, -M, errors -------------------------------------


def test_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    out = _run(
        capsys, "-q", "-m", "P.5", "-m", "num_rel", "--json", str(DATA / "qrels.test"), str(DATA / "results.test")
    )
    document = json.loads(out)
    assert document["measures"] == {"num_rel": 561, "P_5": pytest.approx(0.26666666666666666)}
    assert (document["run_id"], document["n_queries"]) == ("STANDARD", 3)
    assert document["per_query"]["302"] == {"num_rel": 77, "P_5": 0.8}


def test_csv_output(capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(capsys, "-q", "-m", "P.5", "--csv", str(DATA / "qrels.test"), str(DATA / "results.test"))
    assert out == "measure,query,value\nP_5,301,0.0000\nP_5,302,0.8000\nP_5,303,0.0000\nP_5,all,0.2667\n"


def test_max_docs_per_query(capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(capsys, "-M", "10", "-m", "num_ret", "-m", "P.10", str(DATA / "qrels.test"), str(DATA / "results.test"))
    assert out == "num_ret               \tall\t30\nP_10                  \tall\t0.3000\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["-m", "prefs_simp"],
            "ef trec-eval: error: measure 'prefs_simp': trec_eval measure 'prefs_simp' is not computed by ef "
            "(it needs preference or jg qrels) (every spelling:",
        ),
        (
            ["-m", "utility.1,2"],
            "ef trec-eval: error: measure 'utility.1,2': utility takes 4 numbers a,b,c,d (got 2) (every spelling:",
        ),
        (["-m", "P."], "ef trec-eval: error: measure 'P.': no parameters after the '.' (every spelling:"),
        (["-m", "P.5,5"], "ef trec-eval: error: measure 'P.5,5': a parameter is given twice (every spelling:"),
        (
            ["-m", "ndcg.1:3"],
            "ef trec-eval: error: measure 'ndcg.1:3': parameters must be name=value pairs (got '1:3') "
            "(every spelling:",
        ),
        (
            ["-m", "P.0"],
            "ef trec-eval: error: measure 'P.0': cutoff must be a positive integer (got '0') (every spelling:",
        ),
    ],
)
def test_bad_measures_exit_2_naming_the_problem(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["trec-eval", *args, str(DATA / "qrels.test"), str(DATA / "results.test")]) == 2
    assert capsys.readouterr().err.startswith(message)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["-l", "0"],
            "ef trec-eval: error: argument -l/--level_for_rel: expected an integer grade >= 1, such as 1 or 2 "
            "(got '0')\n",
        ),
        (
            ["-l", "1.5"],
            "ef trec-eval: error: argument -l/--level_for_rel: expected an integer grade >= 1, such as 1 or 2 "
            "(got '1.5')\n",
        ),
        (
            ["-M", "x"],
            "ef trec-eval: error: argument -M/--Max_retrieved_per_topic: expected an integer >= 1 (got 'x')\n",
        ),
        (
            ["-N", "-1"],
            "ef trec-eval: error: argument -N/--Number_docs_in_coll: expected an integer >= 0 (got '-1')\n",
        ),
    ],
)
def test_bad_flag_values_exit_2_like_argparse(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    with pytest.raises(SystemExit) as info:
        main(["trec-eval", *args, str(DATA / "qrels.test"), str(DATA / "results.test")])
    assert info.value.code == 2
    assert capsys.readouterr().err.endswith(message)


def test_malformed_run_line_is_reported_with_file_and_line(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    run = tmp_path / "run.txt"
    run.write_text("301 Q0 a 1 1.5 r\n301 Q0 b 2 oops r\n")
    assert main(["trec-eval", str(DATA / "qrels.test"), str(run)]) == 2
    assert capsys.readouterr().err == f"ef trec-eval: error: {run}:2: score 'oops' is not a number\n"


def test_missing_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["trec-eval", str(DATA / "qrels.test"), str(tmp_path / "nope")]) == 2
    assert "No such file or directory" in capsys.readouterr().err
