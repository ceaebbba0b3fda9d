"""A run file read by two processes, a half each, scores and fails exactly as one process does."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ef.evaluation import _split, evaluate_run
from ef.io.trec import query_boundary

MEASURES = ["ndcg@10", "map", "recall@100", "mrr", "P@5"]
_SPLITS = pytest.mark.skipif(
    sys.platform != "linux" or (os.cpu_count() or 1) < 2, reason="splits on Linux with 2+ cores"
)


def _lines(queries: range, docs: int, *, score: str = "{s}") -> list[str]:
    """Lines grouped by query, scores descending with ties (as trec_eval writes runs)."""
    return [
        f"q{q:04d} Q0 d{(q * 7 + d * 13) % 997:04d} {d + 1} {score.format(s=(docs - d) // 3)} run-{q % 3}\n"
        for q in queries
        for d in range(docs)
    ]


def _qrels(path: Path, queries: range) -> str:
    path.write_text("".join(f"q{q:04d} 0 d{(q * 7 + j * 91) % 997:04d} {j % 3}\n" for q in queries for j in range(8)))
    return str(path)


CASES: dict[str, str] = {
    "grouped": "".join(_lines(range(300), 40)),
    "long scores": "".join(_lines(range(300), 40, score="{s}.30000001192092896")),
    "bom, crlf and comments": "\ufeff# head\n"
    + "".join(line.replace("\n", "\r\n") if i % 5 == 0 else line for i, line in enumerate(_lines(range(300), 40)))
    + "# tail\n\n",
    "a query in both halves": "".join(_lines(range(300), 40)) + "q0001 Q0 dxyz 99 -1 r\n",
    "a bad score late": "".join(_lines(range(300), 40)[:11_000]) + "q0299 Q0 d1 1 x r\n",
    "a bad score early": "q0000 Q0 d1 1 0.5 r\nq0000 Q0 d2 1 1e r\n" + "".join(_lines(range(1, 300), 40)),
    "a doc twice late": "".join(_lines(range(300), 40)) + "q9999 Q0 a 1 1 r\nq9999 Q0 a 2 0 r\n",
    "a NUL late": "".join(_lines(range(300), 40)) + "q9999 Q0 a\x00 1 1 r\n",
    "one query": "".join(_lines(range(1), 5000)),
    "plain text named .GZ": "".join(_lines(range(300), 40)),
}

# In a fresh interpreter (no other thread), every file over 0 bytes is split: per file, the
# result (or error) and how many forks and successful splits there were.
_CHILD = """
import json, os, sys
from ef.evaluation import _split, evaluate_run
import ef.evaluation._run as run
_split.BYTES_TO_SPLIT = 0
# ef's own helper thread running (it is ended before a fork; any other thread prevents one)
import numpy as np
from ef.io import trec
trec._SHARED_ROWS = 1
trec._parse_scores_shared(np.frombuffer(b"0.25 0.125 " + bytes(64), np.uint8), np.array([0, 5]), np.array([4, 9]))
assert trec._helper is not None
real_fork, real_halves, forks, splits = os.fork, _split.in_halves, [], []
def fork():
    forks.append(1)
    return real_fork()
def halves(path, score):
    got = real_halves(path, score)
    splits.append(got is not None)
    return got
os.fork, run.in_halves = fork, halves
out = {}
for name, path in json.loads(sys.argv[1]).items():
    forks.clear(), splits.clear()
    try:
        out[name] = [evaluate_run(path, sys.argv[2], sys.argv[3:]).to_dict(), len(forks), splits[:]]
    except ValueError as error:
        out[name] = [str(error), len(forks), splits[:]]
print(json.dumps(out))
"""


def _one_process(run: str, qrels: str) -> object:
    try:
        return evaluate_run(run, qrels, MEASURES).to_dict()
    except ValueError as error:
        return str(error)


@_SPLITS
def test_two_processes_score_and_fail_as_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    qrels = _qrels(tmp_path / "qrels", range(300))
    paths = {}
    for i, (name, text) in enumerate(CASES.items()):
        paths[name] = str(tmp_path / f"run{i}{'.GZ' if 'GZ' in name else ''}")
        Path(paths[name]).write_text(text)
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(paths), qrels, *MEASURES], capture_output=True, text=True, check=True
    )
    split = json.loads(done.stdout)
    monkeypatch.setattr(_split, "BYTES_TO_SPLIT", 1 << 62)  # here: one process
    clean = {"grouped", "long scores", "bom, crlf and comments", "a query in both halves"}
    for name, path in paths.items():
        got, forks, splits = split[name]
        assert got == _one_process(path, qrels), name
        # Forked at a query boundary near the middle (a file of one query has none); a half that
        # fails gives no split, and one process reads the file again, raising its error.
        unsplit = name in ("one query", "plain text named .GZ")
        assert (forks, splits) == ((0, [False]) if unsplit else (1, [name in clean])), name
    assert split["a bad score late"][0] == f"{paths['a bad score late']}:11001: score 'x' is not a number"
    assert split["a query in both halves"][0]["n_queries"] == 300
    assert split["plain text named .GZ"][0] == f"{paths['plain text named .GZ']}: named '.gz' but not gzip-compressed"


def test_an_interrupt_while_the_child_ends_lands_once_it_is_reaped() -> None:
    child = os.fork()
    if child == 0:  # pragma: no cover  (the child)
        time.sleep(0.3)
        os._exit(0)

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.05)
    try:
        with pytest.raises(KeyboardInterrupt):
            _split._end(child, kill=False)  # the alarm waits until the child is reaped
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    with pytest.raises(ChildProcessError):
        os.waitpid(child, os.WNOHANG)  # no zombie left


# Appended to each script below: whether the evaluation left a process of its own behind.
_ANY_CHILD_LEFT = """
try:
    os.waitpid(-1, os.WNOHANG)
    print("a child left", flush=True)
except ChildProcessError:
    print("no child left", flush=True)
"""


def _in_fresh_python(tmp_path: Path, script: str, *args: str) -> tuple[list[str], str]:
    """`script` run on a 300-query run file and its qrels (their paths after `args`): its lines
    of output, and its stderr."""
    run = tmp_path / "run"
    run.write_text("".join(_lines(range(300), 40)))
    qrels = _qrels(tmp_path / "qrels", range(300))
    command = [sys.executable, "-c", script + _ANY_CHILD_LEFT, *args, str(run), qrels]
    done = subprocess.run(command, capture_output=True, text=True)
    return done.stdout.splitlines(), done.stderr


# A Ctrl-C that arrives during the fork, in the parent or in the child: the parent raises it with
# the child killed and reaped; the child never runs on as a copy of the caller (no atexit of its).
_INTERRUPTED = """
import atexit, ctypes, functools, os, signal, sys
from ef.evaluation import _split, evaluate_run
_split.BYTES_TO_SPLIT = 0
side = sys.argv[1]
me = os.getpid()
atexit.register(lambda: os.getpid() != me and print("child ran atexit", flush=True))
# raise(3) from C, as a signal arriving during fork() would: Python's handler runs only after
# os.fork() has returned (a Python hook would run it inside the hook, where it is ignored)
hook = functools.partial(getattr(ctypes.CDLL(None), "raise"), int(signal.SIGINT))
os.register_at_fork(**{"after_in_" + side: hook})
try:
    print(evaluate_run(sys.argv[2], sys.argv[3], ["map"]).metrics["map"] > 0, flush=True)
except KeyboardInterrupt:
    print("interrupted", flush=True)
"""


@_SPLITS
@pytest.mark.parametrize(("side", "expected"), [("parent", "interrupted"), ("child", "True")])
def test_a_ctrl_c_during_the_fork_leaves_no_process_behind(tmp_path: Path, side: str, expected: str) -> None:
    out, errors = _in_fresh_python(tmp_path, _INTERRUPTED, side)
    assert out == [expected, "no child left"], errors


_TIMED_OUT = """
import os, signal, sys, time
from ef.evaluation import _split, evaluate_run
import ef.evaluation._run as run
_split.BYTES_TO_SPLIT = 0
real = run._stream_part
def slow(*args, **kwargs):
    time.sleep(0.3)
    return real(*args, **kwargs)
run._stream_part = slow
def deadline(signum, frame):
    raise TimeoutError("deadline passed")
signal.signal(signal.SIGALRM, deadline)
signal.setitimer(signal.ITIMER_REAL, 0.1)
try:
    evaluate_run(sys.argv[1], sys.argv[2], ["map"])
    print("no timeout", flush=True)
except TimeoutError as error:
    print(error, flush=True)
"""


@_SPLITS
def test_a_signal_handlers_exception_is_raised_not_taken_for_a_failed_half(tmp_path: Path) -> None:
    out, errors = _in_fresh_python(tmp_path, _TIMED_OUT)
    assert out == ["deadline passed", "no child left"], errors


def test_the_halves_meet_where_a_query_begins(tmp_path: Path) -> None:
    path = tmp_path / "run"
    path.write_bytes(b"q1 Q0 a 1 1 r\n# note\nq1 Q0 b 2 0 r\n\nq2 Q0 c 1 1 r\nq2 Q0 d 2 0 r\n")
    q2 = path.read_bytes().index(b"q2")
    assert query_boundary(path, 1) == q2  # comment and blank lines start no query
    assert query_boundary(path, q2) == q2
    assert query_boundary(path, q2 + 1) is None  # no query begins after q2
    assert query_boundary(path, 1, reach=q2) is None  # nor within reach


def test_no_fork_beside_another_thread_or_below_the_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "run"
    path.write_text("".join(_lines(range(50), 20)))
    calls: list[tuple[int, int]] = []
    assert _split.in_halves(str(path), calls.append) is None  # under 16 MiB
    monkeypatch.setattr(_split, "BYTES_TO_SPLIT", 0)
    stop = threading.Event()
    waiting = threading.Thread(target=stop.wait)
    waiting.start()
    try:
        assert _split.in_halves(str(path), calls.append) is None
    finally:
        stop.set()
        waiting.join()
    assert calls == []
