"""trec_eval's readers of measure parameters, and the one error a bad measure name raises.

Shared by the registry (a :class:`~ef.measures.Measure` checks its own parameter text when it is
built) and the parser. trec_eval reads ``-m`` numbers with C's ``atol`` / ``atof``: the longest
number at the start of the text, the rest ignored; ef reads them the same way, and refuses what
trec_eval would silently read as 0 (hexadecimal, no digits at all).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["atof", "atol", "doubles", "pairs", "unknown"]

# trec_eval 10.0 measures that need other input formats (preference or jg qrels): an error naming them.
_UNSUPPORTED = frozenset(
    {
        "prefs_num_prefs_poss",
        "prefs_num_prefs_ful",
        "prefs_num_prefs_ful_ret",
        "prefs_simp",
        "prefs_pair",
        "prefs_avgjg",
        "prefs_avgjg_Rnonrel",
        "prefs_simp_ret",
        "prefs_pair_ret",
        "prefs_avgjg_ret",
        "prefs_avgjg_Rnonrel_ret",
        "prefs_simp_imp",
        "prefs_pair_imp",
        "prefs_avgjg_imp",
        "map_avgjg",
        "P_avgjg",
        "Rprec_mult_avgjg",
        "yaap",
        "all_prefs",
        "prefs",
        "qrels_jg",
    }
)

# C's atol / atof read the longest number at the start of the text and ignore the rest.
_ATOL = re.compile(r"[ \t\n\v\f\r]*[+-]?\d+")
_ATOF = re.compile(r"[ \t\n\v\f\r]*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_HEX = re.compile(r"[ \t\n\v\f\r]*[+-]?0[xX]")
_LEVEL = re.compile(r"[+-]?\d+")  # trec_eval's valid_int: a gain level


def atol(name: str, text: str) -> int:
    match = _ATOL.match(text)
    if match is None:
        raise unknown(name, f"cutoff {text!r} is not a number")
    return int(match.group())


def atof(name: str, text: str) -> float:
    match = _ATOF.match(text)
    if match is None or _HEX.match(text):
        # trec_eval's atof would read this as 0 (or as hex): refused rather than guessed.
        raise unknown(name, f"parameter {text!r} is not a number")
    value = float(match.group())
    if value != value or value in (float("inf"), float("-inf")):
        raise unknown(name, f"parameter {text!r} is not a finite number")
    return value


def doubles(name: str, family: str, text: str) -> tuple[float, ...]:
    values = tuple(atof(name, t) for t in text.split(","))
    if family == "utility" and len(values) != 4:
        raise unknown(name, f"utility takes 4 numbers a,b,c,d (got {len(values)})")
    if family == "relstring" and not 0 <= values[0] <= 100_000:
        raise unknown(name, f"relstring's length must be in [0, 100000] (got {text})")
    return values


def pairs(name: str, family: str, text: str) -> tuple[tuple[str, float], ...]:
    out = []
    for item in text.split(","):
        key, eq, value = item.partition("=")
        if not eq or not key or not value:
            raise unknown(name, f"parameters must be name=value pairs (got {item!r})")
        if key == "p" and family in ("rbp", "rbp_resid"):
            p = atof(name, value)
            if not 0.0 < p < 1.0:
                raise unknown(name, f"RBP's persistence p must be in (0, 1) (got {value})")
            out.append((key, p))
        elif _LEVEL.fullmatch(key):
            if int(key) < 0:
                # trec_eval would give documents missing from the qrels (level -1) this gain.
                raise unknown(name, f"a gain level must be >= 0 (got {key})")
            out.append((key, atof(name, value)))
        else:
            expected = "p=X or level=gain" if family in ("rbp", "rbp_resid") else "level=gain"
            raise unknown(name, f"{family} takes {expected} pairs (got {item!r})")
    return tuple(out)


def unknown(name: str, why: str | None = None, *, near: Sequence[str] = ()) -> ValueError:
    """The ``ValueError`` for measure `name`: why it is refused, the `near` names for an unknown one
    (the parser finds them: it reads the registry, which reads this module), and where every valid
    form is listed (not the list itself, which runs to 1,600 characters)."""
    hint = ""
    if why is None:
        root = name.split("@")[0].split(".")[0].split("(")[0]
        if root in _UNSUPPORTED:
            why = f"trec_eval measure {root!r} is not computed by ef (it needs preference or jg qrels)"
        else:
            why = "unknown measure"
            hint = f"; did you mean {' or '.join(repr(n) for n in near)}?" if near else ""
    return ValueError(f"measure {name!r}: {why}{hint} {EVERY_SPELLING}")


EVERY_SPELLING = "(every spelling: ef.measures.valid_forms(), ef trec-eval --help)"
