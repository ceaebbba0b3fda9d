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

from ef.io.source import is_plain_file
from ef.io.trec import HELPER_NAME, one_thread, query_boundary, stop_helper

__all__ = ["in_halves"]

_T = TypeVar("_T")

# Below this a fork (1-5 ms) and a second process cost more than they save.
BYTES_TO_SPLIT = 1 << 24


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))  # what this process may use (a container's share)
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def in_halves(path: str, score: Callable[[tuple[int, int]], _T]) -> tuple[_T, _T] | None:
    """``score(span)`` of the file's first and second halves (byte spans meeting at a line where a
    query begins), run in two processes at once; ``None`` when the file is not split (not Linux,
    one core, under 16 MiB, gzip or named so, other threads running, no query boundary near the
    middle) or a half failed. `score` runs on one thread in each process."""
    if sys.platform != "linux" or not hasattr(os, "fork") or _cores() < 2:
        return None
    size = os.path.getsize(path)
    if size < BYTES_TO_SPLIT or size < 2 or not is_plain_file(path):
        return None
    # Another thread might hold a lock the child would wait on forever; ef's own helper is ended.
    this = threading.current_thread()
    if any(t is not this and not t.name.startswith(HELPER_NAME) for t in threading.enumerate()):
        return None
    middle = query_boundary(path, size // 2)
    if middle is None:
        return None
    stop_helper()
    read_end, write_end = os.pipe()
    parent, child, done, code = os.getpid(), -1, False, 1
    # Signals wait from before the fork until each process is inside its own try: an interrupt
    # then can neither leave the child unsupervised nor let it run on as a copy of the caller.
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
    try:
        try:
            with warnings.catch_warnings():
                # Python 3.12+ warns of a fork beside any OS thread, numpy's idle BLAS pool
                # included: the child makes no BLAS call, and no other Python thread exists.
                warnings.simplefilter("ignore", DeprecationWarning)
                try:
                    child = os.fork()
                except OSError:  # no process to be had (EAGAIN, ENOMEM): one process reads it all
                    return None
            if child == 0:
                _second_half(score, (middle, size), read_end, write_end, mask)  # never returns
        finally:
            if os.getpid() == parent:
                signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        os.close(write_end)
        write_end = -1
        with os.fdopen(read_end, "rb") as pipe:
            read_end = -1
            first = _scored(score, (0, middle))
            second: _T = pickle.load(pipe)
        done = True
    # A bad line in this half (its message is one process's to give), or the child gone (nothing
    # or part of its result came back): the caller reads the file in one process.
    except (ValueError, EOFError, pickle.UnpicklingError):
        return None
    finally:
        if os.getpid() != parent:  # a child that got here by any path: out, as the parent's copy
            os._exit(1)
        for fd in (read_end, write_end):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        if child > 0:
            code = _end(child, kill=not done)
    return (first, second) if code == 0 else None


def _second_half(
    score: Callable[[tuple[int, int]], _T], span: tuple[int, int], read_end: int, write_end: int, mask: set[int]
) -> None:
    """The child: `score` of `span`, pickled down the pipe, then out at once (no cleanup, no
    atexit handlers: they are the parent's). Signals wait until it is inside its try."""
    status = 1
    try:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        os.close(read_end)
        result = _scored(score, span)
        with os.fdopen(write_end, "wb") as pipe:
            pickle.dump(result, pipe, protocol=pickle.HIGHEST_PROTOCOL)
        status = 0
    finally:
        os._exit(status)


def _scored(score: Callable[[tuple[int, int]], _T], span: tuple[int, int]) -> _T:
    token = one_thread.set(True)
    try:
        return score(span)
    finally:
        one_thread.reset(token)


def _end(pid: int, *, kill: bool) -> int:
    """Child `pid` killed first if `kill`, then reaped: its exit status. Signals wait meanwhile (it
    ends at once, killed or done), so an interrupt lands after the reaping and leaves no zombie."""
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
    try:
        if kill:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        try:
            return os.waitpid(pid, 0)[1]
        except ChildProcessError:  # reaped already (SIGCHLD ignored): the result says how it went
            return 0
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
