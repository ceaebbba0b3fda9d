"""Numbers in TREC fields, read as trec_eval reads them: C's ``strtod`` over the whole token.

The run engine's reference (:mod:`ef.evaluation._reference`), its error messages and the qrels
reader (:mod:`ef.io.trec`) share these; the compiled kernel's parser returns the same codes.
"""

from __future__ import annotations

import math
import re

__all__ = ["IS_NAN", "NOT_A_NUMBER", "TOO_LARGE", "strtod"]

# strtod's spellings, read whole: decimal with optional exponent, hexadecimal, inf/infinity, nan.
_DECIMAL = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_HEX = re.compile(rb"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?")
_INFINITY = re.compile(rb"[+-]?(?:inf|infinity)", re.IGNORECASE)
_NAN = re.compile(rb"[+-]?nan(?:\([0-9A-Za-z_]*\))?", re.IGNORECASE)
NOT_A_NUMBER, IS_NAN, TOO_LARGE = 1, 2, 3


def strtod(token: bytes) -> float | int:
    """`token` as C's ``strtod`` reads it whole: a float, or why not (an int: ``NOT_A_NUMBER``,
    ``IS_NAN``, or ``TOO_LARGE`` for a finite spelling beyond a double, which strtod makes infinite).

    >>> strtod(b"1.5"), strtod(b"-inf"), strtod(b"1.5x") == NOT_A_NUMBER, strtod(b"1e400") == TOO_LARGE
    (1.5, -inf, True, True)
    """
    if _INFINITY.fullmatch(token):
        return -math.inf if token.startswith(b"-") else math.inf
    if _NAN.fullmatch(token):
        return IS_NAN
    if _DECIMAL.fullmatch(token):
        value = float(token)
    elif _HEX.fullmatch(token):
        try:
            value = float.fromhex(token.decode())
        except OverflowError:
            return TOO_LARGE
    else:
        return NOT_A_NUMBER
    return TOO_LARGE if math.isinf(value) else value
