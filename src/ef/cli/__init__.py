"""The ``ef`` command line: one sub-command per job, each in its own module.

Each sub-command module exposes ``add_parser(subparsers)`` and ``run(args) -> int``; errors that
are the user's (a missing file, a malformed line, a bad flag value) print one line naming the
problem and exit with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

__all__ = ["main"]

# name -> module; each module registers its own flags.
_COMMANDS = {
    "eval": "ef.cli.eval",
    "trec-eval": "ef.cli.trec_eval",
    "rag": "ef.cli.rag",
    "compare": "ef.cli.compare",
    "gate": "ef.cli.gate",
    "report": "ef.cli.report",
    "datasets": "ef.cli.datasets",
    "fuse": "ef.cli.fuse",
    "sweep": "ef.cli.sweep",
}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ef", description="Measure retrieval and RAG quality.")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module_name in _COMMANDS.values():
        importlib.import_module(module_name).add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``ef`` with ``argv`` (default: ``sys.argv[1:]``) and return the exit status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    # trec-eval takes trec_eval's own flags (-m all_trec, -mP.5), so it parses its arguments itself.
    if args_list[:1] == ["trec-eval"]:
        # trec-eval does no linear algebra: without this, numpy's import starts OpenBLAS's thread
        # pool, whose spinning threads take the cores from a short run (0.20 s -> 0.14 s here).
        # Only as a command (argv None): a program calling main() keeps its own environment.
        pools = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
        if argv is None and not any(name in os.environ for name in pools):
            os.environ["OPENBLAS_NUM_THREADS"] = "1"
        module = importlib.import_module(_COMMANDS["trec-eval"])
        return _guarded("trec-eval", lambda: module.main(args_list[1:]))
    args = _parser().parse_args(args_list)
    module = importlib.import_module(_COMMANDS[args.command])
    return _guarded(args.command, lambda: module.run(args))


_SIGPIPE_STATUS = 141  # 128 + SIGPIPE: what a shell reports for `yes | head -1`


def _drop_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush of unread output is silent."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real descriptor behind sys.stdout (a test's capture)
        pass
    finally:
        os.close(devnull)


def _guarded(command: str, job: object) -> int:
    try:
        status = int(job())  # type: ignore[operator]
        sys.stdout.flush()  # a reader that left early (`| head`) shows here, not at exit
        return status
    except BrokenPipeError:
        # The reader of our output went away: end quietly, as Unix tools do.
        _drop_stdout()
        return _SIGPIPE_STATUS
    except (OSError, ValueError, ImportError) as error:
        # The user's mistakes (a missing file, a malformed line, a bad value): one line, no traceback.
        print(f"ef {command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"ef {command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
