"""A large run file scored by two processes at once, a half each (Linux, by fork).

Two threads reading one file overlap poorly: every numpy call holds the GIL while it sets up,
and a 2 MiB window's calls are short, so the threads mostly wait for each other (see
docs/trec-eval.md). Two processes share no GIL. Once the qrels are read, the process forks at a
query boundary near the file's middle; each process streams its half on one thread, and the
child sends back what its half gives (the judged documents' ranks: a few small arrays), pickled
through a pipe. Anything but a clean result from both halves (an error, a crash) gives ``None``:
the caller then reads the file in one process, as it would have, and reports any error exactly
as it always does.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import signal
import sys
import threading
import warnings
from collections.abc import Callable
from typing import TypeVar

from ef.io.trec import one_thread, query_boundary, stop_helper

__all__ = ["in_halves"]

_T = TypeVar("_T")

# Below this a fork (1-5 ms) and a second process cost more than they save.
BYTES_TO_SPLIT = 1 << 24
_GZIP_MAGIC = b"\x1f\x8b"


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))  # what this process may use (a container's share)
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def in_halves(path: str, score: Callable[[tuple[int, int]], _T]) -> tuple[_T, _T] | None:
    """``score(span)`` of the file's first and second halves (byte spans meeting at a line where a
    query begins), run in two processes at once; ``None`` when the file is not split (not Linux,
    one core, under 16 MiB, gzip, other threads running, no query boundary near the middle) or a
    half failed. `score` runs on one thread in each process."""
    if sys.platform != "linux" or not hasattr(os, "fork") or _cores() < 2:
        return None
    size = os.path.getsize(path)
    if size < BYTES_TO_SPLIT or size < 2:
        return None
    with open(path, "rb") as stream:
        if stream.read(2) == _GZIP_MAGIC:
            return None
    middle = query_boundary(path, size // 2)
    if middle is None:
        return None
    stop_helper()
    if threading.active_count() > 1:  # another thread might hold a lock the child would wait on
        return None
    read_end, write_end = os.pipe()
    try:
        with warnings.catch_warnings():
            # Python 3.12+ warns of a fork beside any OS thread, numpy's idle BLAS pool included:
            # the child makes no BLAS call, and no other Python thread exists.
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
    except OSError:  # no process to be had (EAGAIN, ENOMEM): one process reads it all
        os.close(read_end)
        os.close(write_end)
        return None
    if pid == 0:  # the child: the second half, its result down the pipe, then out (no cleanup)
        status = 1
        try:
            os.close(read_end)
            result = _scored(score, (middle, size))
            with os.fdopen(write_end, "wb") as pipe:
                pickle.dump(result, pipe, protocol=pickle.HIGHEST_PROTOCOL)
            status = 0
        finally:
            os._exit(status)
    os.close(write_end)
    done = False
    try:
        with os.fdopen(read_end, "rb") as pipe:
            first = _scored(score, (0, middle))
            second: _T = pickle.load(pipe)
        done = True
    except Exception:  # a bad line, or the child gone (EOFError): the caller reads it in one process
        return None
    finally:
        if not done:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        try:
            _, code = os.waitpid(pid, 0)
        except ChildProcessError:  # reaped already (SIGCHLD ignored): the whole result came back
            code = 0
    return (first, second) if code == 0 else None


def _scored(score: Callable[[tuple[int, int]], _T], span: tuple[int, int]) -> _T:
    token = one_thread.set(True)
    try:
        return score(span)
    finally:
        one_thread.reset(token)
