"""The ``ef`` command line: one sub-command per job, each in its own module.

Each sub-command module exposes ``add_parser(subparsers)`` and ``run(args) -> int``; errors that
are the user's (a missing file, a malformed line, a bad flag value) print one line naming the
problem and exit with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

__all__ = ["main"]

# name -> module; each module registers its own flags.
_COMMANDS = {
    "eval": "ef.cli.eval",
    "trec-eval": "ef.cli.trec_eval",
    "rag": "ef.cli.rag",
    "compare": "ef.cli.compare",
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
        module = importlib.import_module(_COMMANDS["trec-eval"])
        return _guarded("trec-eval", lambda: module.main(args_list[1:]))
    args = _parser().parse_args(args_list)
    module = importlib.import_module(_COMMANDS[args.command])
    return _guarded(args.command, lambda: module.run(args))


def _guarded(command: str, job: object) -> int:
    try:
        return int(job())  # type: ignore[operator]
    except (OSError, ValueError, ImportError) as error:
        # The user's mistakes (a missing file, a malformed line, a bad value): one line, no traceback.
        print(f"ef {command}: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"ef {command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
