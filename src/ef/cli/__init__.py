"""The ``ef`` command line: one sub-command per job, each in its own module.

Each sub-command module exposes ``add_parser(subparsers)`` and ``run(args) -> int``; errors that
are the user's (a missing file, a malformed line, a bad flag value) print one line naming the
problem and exit with status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import importlib
import os
import re
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import Any, NoReturn

import ef

__all__ = ["DISTRIBUTION", "Parser", "did_you_mean", "main", "version_line"]

DISTRIBUTION = "ef-eval"  # the name on the package index (`ef` there is another project)

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


_QUIET_HELP = "no progress bars and no notes on standard error (errors still print)"


class Parser(argparse.ArgumentParser):
    """``ef``'s argument parser: no prefix-guessing (``--js`` is not ``--json``), and a did-you-mean
    after an unknown command, choice or flag. Sub-command parsers are of this class too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)
        self.commands: dict[str, argparse.ArgumentParser] = {}  # name -> parser, on ``ef`` itself
        # A word that starts with '-' and a digit is a value, not an unknown flag: `--margin -5%`
        # and `--weights -0.5,1` reach their flag's check ("a margin is a number >= 0 ...")
        # instead of "expected one argument". Python 3.11's pattern takes only plain numbers
        # (-5, -.5); 3.13 reads '-' + digit as ef does here. No ef flag looks like a number.
        self._negative_number_matcher = re.compile(r"^-\.?\d")

    def format_help(self) -> str:
        """argparse's help, then the command's examples (kept as written: argparse would refill them)."""
        from ef.cli._examples import examples_text

        examples = examples_text(" ".join(self.prog.split()[1:]))  # "ef eval" -> "eval"
        return super().format_help() + ("\n" + examples if examples else "")

    def error(self, message: str) -> NoReturn:
        if Parser.trying:  # a trial reading of the arguments (see _json_words): refused, quietly
            raise _RefusedError(message)
        super().error(message + _suggestion(self, message))

    trying = False  # True while main tries a reading of the arguments that may be refused


class _RefusedError(Exception):
    """A trial reading of the arguments that argparse would refuse (its message)."""


def _suggestion(parser: argparse.ArgumentParser, message: str) -> str:
    """``"; did you mean 'eval'?"`` for an argparse error `message` about a near miss, else ``""``."""
    choice = re.match(r"argument .*?: invalid choice: '(.*)' \(choose from (.*)\)$", message)
    if choice:
        return did_you_mean(choice.group(1), re.findall(r"'([^']*)'", choice.group(2)))
    unknown = re.match(r"unrecognized arguments: (.*)$", message)
    if unknown:
        flags = [word for word in unknown.group(1).split() if word.startswith("--")]
        known = [option for option in parser._option_string_actions if option.startswith("--")]
        for flag in flags:
            hint = did_you_mean(flag.split("=", 1)[0], known)
            if hint:
                return hint
    return ""


def did_you_mean(word: str, choices: Sequence[str]) -> str:
    """``"; did you mean 'X'?"`` (or ``'X' or 'Y'``) for the `choices` close to `word`, else ``""``.

    >>> did_you_mean("evl", ["eval", "trec-eval", "rag"])
    "; did you mean 'eval'?"
    >>> did_you_mean("zzz", ["eval"])
    ''
    """
    close = difflib.get_close_matches(word, list(choices), n=2, cutoff=0.6)
    return f"; did you mean {' or '.join(repr(name) for name in close)}?" if close else ""


def _parser() -> Parser:
    parser = Parser(prog="ef", description="Measure retrieval and RAG quality.")
    parser.add_argument("--version", action="version", version=version_line())
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module_name in _COMMANDS.values():
        importlib.import_module(module_name).add_parser(subparsers)
    for sub in subparsers.choices.values():
        # One vocabulary: -q/--quiet on every command (trec-eval keeps -q for trec_eval's per-query lines).
        if "--quiet" not in sub._option_string_actions:
            flags = ["--quiet"] if "-q" in sub._option_string_actions else ["-q", "--quiet"]
            sub.add_argument(*flags, action="store_true", help=_QUIET_HELP)
    parser.commands = dict(subparsers.choices)
    return parser


def version_line() -> str:
    """What ``ef --version`` prints: the command, the distribution and its version.

    >>> version_line() == f"ef (ef-eval) {ef.__version__}"
    True
    """
    return f"ef ({DISTRIBUTION}) {ef.__version__}"


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
    parser = _parser()
    args, extra = parser.parse_known_args(_json_words(parser, args_list))
    if extra:  # said by the command's parser, which knows its flags (and can suggest one)
        parser.commands[args.command].error(f"unrecognized arguments: {' '.join(extra)}")
    module = importlib.import_module(_COMMANDS[args.command])
    with _quiet(getattr(args, "quiet", False)):
        return _guarded(args.command, lambda: module.run(args))


# The commands whose --json [FILE] takes the word after it as FILE unless the command's own
# arguments then fall short (ef rag, datasets list and trec-eval read a bare --json themselves).
_JSON_FILE_OR_ARGUMENT = ("eval", "gate", "sweep", "compare")


def _json_words(parser: Parser, argv: list[str]) -> list[str]:
    """`argv`, where a bare ``--json`` took a word that is one of the command's arguments, with that
    word given back: ``ef gate --json BASE CAND`` prints the JSON and compares BASE with CAND.

    ``--json WORD`` writes WORD, as it always did, unless reading it so leaves the command short of
    its arguments (argparse refuses it, or the command's ``json_took_an_argument(args)`` says so: ef
    compare's QRELS and two RUNs; ef eval's DATASET, optional, when WORD names a dataset and none
    follows), and WORD is there to read (a path or a dataset's name): then ``--json`` prints and
    WORD is an argument, as in ``ef rag --json SAMPLES``.
    """
    command = next((word for word in argv if not word.startswith("-")), None)
    if command not in _JSON_FILE_OR_ARGUMENT:
        return argv
    spots = [i for i, word in enumerate(argv[:-1]) if word == "--json" and not argv[i + 1].startswith("-")]
    if not spots or not any(_readable(argv[i + 1]) for i in spots):
        return argv
    module = importlib.import_module(_COMMANDS[command])
    if _complete(parser, module, argv):
        return argv
    printing = list(argv)
    for i in spots:
        printing[i] = "--json=-"
    return printing if _complete(parser, module, printing) else argv


def _readable(word: str) -> bool:
    """Whether `word` can be something a command reads: a path that is there, or a dataset's name."""
    if os.path.exists(word):
        return True
    from ef.datasets import resolve_name

    return resolve_name(word) is not None


def _complete(parser: Parser, module: Any, argv: list[str]) -> bool:
    """Whether `argv` reads as a whole command: argparse takes every word, and the command has all
    its arguments."""
    Parser.trying = True
    try:
        args, extra = parser.parse_known_args(argv)
    except _RefusedError:
        return False
    finally:
        Parser.trying = False
    took = getattr(module, "json_took_an_argument", None)
    return not extra and not (took is not None and took(args))


@contextlib.contextmanager
def _quiet(quiet: bool) -> Iterator[None]:
    """``--quiet``: progress bars off (ef._console reads ``EF_NO_PROGRESS``) while the command runs."""
    if not quiet:
        yield
        return
    before = os.environ.get("EF_NO_PROGRESS")
    os.environ["EF_NO_PROGRESS"] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ["EF_NO_PROGRESS"]
        else:
            os.environ["EF_NO_PROGRESS"] = before


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


_PACKAGE = os.path.dirname(ef.__file__) + os.sep


def _flag_worded(message: Warning | str) -> str:
    """An ef warning's text as the command line says it: the library names its parameter, here -l was typed."""
    text = str(message)
    return "-l " + text[len("relevance_level="):] if text.startswith("relevance_level=") else text


def _raised_by_ef(error: BaseException) -> bool:
    """Whether `error` was raised in ef's own code (its innermost frame is in the package)."""
    trace = error.__traceback__
    while trace is not None and trace.tb_next is not None:
        trace = trace.tb_next
    return trace is not None and trace.tb_frame.f_code.co_filename.startswith(_PACKAGE)


@contextlib.contextmanager
def _warnings_worded(command: str) -> Iterator[None]:
    """ef's own warnings (a relevance level no judgement reaches ...) as one line each, worded as the
    command's errors are, each once (Python's registry shows a warning once per line that warns, and
    a command can reach one from several: ef fuse --tune scores its folds at two); anything else's as
    Python shows it (its file and line help there)."""
    shown = warnings.showwarning
    said: set[str] = set()

    def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
             file: Any = None, line: str | None = None) -> None:
        if filename.startswith(_PACKAGE):
            text = f"ef {command}: warning: {_flag_worded(message)}"
            if text not in said:
                said.add(text)
                print(text, file=sys.stderr)
        else:
            shown(message, category, filename, lineno, file, line)

    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = shown


def _guarded(command: str, job: object) -> int:
    try:
        with _warnings_worded(command):
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
    except Warning as error:
        # An ef warning made an error (PYTHONWARNINGS=error, as CI may set): one line, as the errors;
        # another library's keeps its traceback, whose file and line say where it came from.
        if not _raised_by_ef(error):
            raise
        print(f"ef {command}: error: {_flag_worded(error)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"ef {command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
