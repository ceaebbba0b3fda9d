"""One ``--json [FILE]`` on every command: bare ``--json`` prints the JSON (as ``--json -``, the human
text then on standard error), ``--json FILE`` writes FILE, and a bare ``--json`` before the
command's own arguments leaves them to the command (``ef compare --json QRELS A B``).

ef eval, gate, sweep and compare required FILE: ``ef compare QRELS A B --json`` was refused
("argument --json: expected one argument") where ef rag, trec-eval and datasets list printed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _cli import run, write_files
from ef.cli import main
from ef.datasets import demo_dataset

QRELS = "".join(f"q{i} 0 d{i} 1\n" for i in range(6))
A = "".join(f"q{i} Q0 d{i} 1 3 a\nq{i} Q0 x{i} 2 2 a\n" for i in range(6))
B = "".join(f"q{i} Q0 x{i} 1 3.5 b\nq{i} Q0 d{i} 2 0.5 b\nq{i} Q0 y{i} 3 0.25 b\n" for i in range(6))
DEMO = str(demo_dataset())


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    return write_files(tmp_path, {"qrels": QRELS, "a": A, "b": B})


def _sweep_result(text: str) -> tuple[object, ...]:
    """What a sweep's JSON says that two runs share (not the seconds each took, nor its folder)."""
    doc = json.loads(text)
    return (doc["measures"], doc["best"], doc["baseline"], doc["summary"],
            [(cell["label"], cell["metrics"]) for cell in doc["cells"]])


# --- ef compare -----------------------------------------------------------------------------------------------


def test_compare_bare_json_is_json_dash_wherever_it_stands(
    capsys: pytest.CaptureFixture[str], files: dict[str, str], tmp_path: Path
) -> None:
    opts = ["-m", "mrr", "--resamples", "100"]
    positionals = [files["qrels"], files["a"], files["b"]]
    dash = run(capsys, "compare", *positionals, *opts, "--json", "-")
    assert dash[0] == 0
    assert json.loads(dash[1])["systems"] == ["a", "b"]
    assert dash[2].startswith("paired Student t-test over 6 queries")
    assert run(capsys, "compare", *positionals, *opts, "--json") == dash  # last
    assert run(capsys, "compare", "--json", *positionals, *opts) == dash  # before QRELS A B: they stay positional
    assert run(capsys, "compare", files["qrels"], "--json", files["a"], files["b"], *opts) == dash
    # --json FILE before the positionals writes FILE, as before
    saved = tmp_path / "c.json"
    assert run(capsys, "compare", "--json", str(saved), *positionals, *opts) == (0, dash[2], "")
    assert saved.read_text() == dash[1]


def test_compare_bare_json_before_runs_judged_by_a_dataset(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    dense = tmp_path / "dense.trec"
    bm25 = tmp_path / "bm25.trec"
    lines = [line.split("\t") for line in (Path(DEMO) / "qrels" / "test.tsv").read_text().splitlines()[1:]]
    bm25.write_text("".join(f"{q} Q0 {d} 1 1 bm25\n" for q, d, _ in lines))
    dense.write_text("".join(f"{q} Q0 none 1 1 dense\n" for q in dict.fromkeys(q for q, _, _ in lines)))
    opts = ["--dataset", DEMO, "-m", "mrr", "--resamples", "100"]
    dash = run(capsys, "compare", str(bm25), str(dense), *opts, "--json", "-")
    assert dash[2].startswith("paired Student t-test over 27 queries")
    assert dash[0] == 0
    assert json.loads(dash[1])["systems"] == ["bm25", "dense"]
    assert run(capsys, "compare", "--json", str(bm25), str(dense), *opts) == dash


def test_compare_still_says_what_is_missing(capsys: pytest.CaptureFixture[str], files: dict[str, str]) -> None:
    # one word short either way: the reading of --json FILE stands, and so does argparse's error
    with pytest.raises(SystemExit) as caught:
        main(["compare", "--json", files["qrels"], files["a"]])
    assert caught.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == "ef compare: error: the following arguments are required: RUN"


# --- ef gate --------------------------------------------------------------------------------------------------


def test_gate_bare_json_is_json_dash_wherever_it_stands(
    capsys: pytest.CaptureFixture[str], files: dict[str, str], tmp_path: Path
) -> None:
    opts = ["--qrels", files["qrels"], "-m", "mrr", "--resamples", "100"]
    dash = run(capsys, "gate", files["a"], files["b"], *opts, "--json", "-")
    assert dash[0] == 1  # b is worse on mrr: the outcome is the exit status
    assert json.loads(dash[1])["outcome"] == "fail"
    assert dash[2].splitlines()[-1] == "outcome: FAIL (exit 1)"
    assert run(capsys, "gate", files["a"], files["b"], *opts, "--json") == dash
    assert run(capsys, "gate", "--json", files["a"], files["b"], *opts) == dash  # BASELINE CANDIDATE stay
    saved = tmp_path / "g.json"
    assert run(capsys, "gate", "--json", str(saved), files["a"], files["b"], *opts) == (1, dash[2], "")
    assert saved.read_text() == dash[1]


def test_gate_still_says_what_is_missing(capsys: pytest.CaptureFixture[str], files: dict[str, str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["gate", "--qrels", files["qrels"], "--json", files["a"]])
    assert caught.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "ef gate: error: the following arguments are required: BASELINE, CANDIDATE"
    )


# --- ef sweep -------------------------------------------------------------------------------------------------


def test_sweep_bare_json_is_json_dash_wherever_it_stands(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = tmp_path / "s.toml"
    config.write_text("grid = [{k = 10}, {k = 10, k1 = 0.6}]\n", encoding="utf-8")

    def sweep(*argv: str) -> tuple[int, str, str]:
        out = str(tmp_path / f"out{len(list(tmp_path.iterdir()))}")  # a new folder: every cell is scored
        return run(capsys, "sweep", *argv, "--dataset", DEMO, "--out", out, "-q")

    status, out, err = sweep(str(config), "--json", "-")
    assert status == 0
    assert len(json.loads(out)["cells"]) == 2
    assert err.startswith(f"{DEMO}: 2 cells (2 scored, 0 read back from {tmp_path / 'out1'}), 27 queries")
    expected = _sweep_result(out)
    for argv in ([str(config), "--json"], ["--json", str(config)]):  # CONFIG stays CONFIG
        status, out, err = sweep(*argv)
        assert (status, _sweep_result(out)) == (0, expected)
        assert err.startswith(f"{DEMO}: 2 cells (2 scored")
    saved = tmp_path / "sw.json"
    status, out, err = sweep("--json", str(saved), str(config))
    assert (status, err) == (0, "")
    assert out.startswith(f"{DEMO}: 2 cells (2 scored")
    assert _sweep_result(saved.read_text()) == expected


# --- ef eval --------------------------------------------------------------------------------------------------


def _metrics(text: str) -> dict[str, float]:
    return dict(json.loads(text)["metrics"])


def test_eval_bare_json_is_json_dash(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    dash = run(capsys, "eval", DEMO, "-q", "-m", "ndcg@10", "--json", "-")
    assert dash[0] == 0
    assert list(_metrics(dash[1])) == ["ndcg@10"]
    assert "27 queries scored; embedder bm25" in dash[2]
    status, out, err = run(capsys, "eval", DEMO, "--json", "-q", "-m", "ndcg@10")
    assert (status, _metrics(out)) == (0, _metrics(dash[1]))
    assert err.splitlines()[0] == dash[2].splitlines()[0]
    # DATASET is optional: the word after --json is its FILE, as before
    saved = tmp_path / "e.json"
    status, out, err = run(capsys, "eval", "--json", str(saved), DEMO, "-q", "-m", "ndcg@10")
    assert (status, err, out.splitlines()[0]) == (0, "", dash[2].splitlines()[0])
    assert _metrics(saved.read_text()) == _metrics(dash[1])


def test_eval_json_before_a_dataset_and_no_other_is_the_dataset(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # `ef eval --json beir/scifact` evaluated the demo and wrote its JSON to a file beir/scifact.
    from ef.cli import _json_words, _parser

    assert _json_words(_parser(), ["eval", "--json", "beir/scifact"]) == ["eval", "--json=-", "beir/scifact"]
    assert _json_words(_parser(), ["eval", "--json", "beir/scifact", DEMO]) == ["eval", "--json", "beir/scifact", DEMO]
    assert _json_words(_parser(), ["eval", "--json", "scifact.json"]) == ["eval", "--json", "scifact.json"]
    dash = run(capsys, "eval", DEMO, "-q", "-m", "ndcg@10", "--json", "-")
    status, out, err = run(capsys, "eval", "-q", "-m", "ndcg@10", "--json", DEMO)  # a folder: the DATASET
    assert (status, _metrics(out), err.splitlines()[0]) == (0, _metrics(dash[1]), dash[2].splitlines()[0])
    monkeypatch.chdir(tmp_path)
    status, out, err = run(capsys, "eval", "-q", "-m", "ndcg@10", "--json", "./beir")  # a path: the FILE
    assert (status, err) == (0, "")
    assert _metrics((tmp_path / "beir").read_text()) == _metrics(dash[1])


# --- the usage of every command says --json [FILE] -----------------------------------------------------------


@pytest.mark.parametrize("command", [["eval"], ["gate"], ["sweep"], ["compare"], ["rag"], ["trec-eval"],
                                     ["datasets", "list"]])
def test_every_usage_says_json_takes_an_optional_file(capsys: pytest.CaptureFixture[str], command: list[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main([*command, "--help"])
    assert caught.value.code == 0
    usage = " ".join(capsys.readouterr().out.split())
    assert "[--json [FILE]]" in usage or "[--json [FILE] |" in usage
