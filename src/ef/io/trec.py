"""TREC run and qrels files, read as trec_eval 10.0 reads them, written atomically.

A run file has one retrieved document per line, ``query_id iter doc_id rank score run_id``. As
in trec_eval, columns are separated by any run of C whitespace (space, tab, ``\\v``, ``\\f``,
``\\r``), so spaces, tabs, mixed separators and CRLF line ends all read alike; the ``iter`` and
``rank`` columns and anything after the sixth are ignored; a line whose first non-blank
character is ``#`` is a comment; blank lines are skipped; the run id is the last line's. A
qrels file has one judgement per line, ``query_id iter doc_id grade`` (integer grades, as
trec_eval reads them); :func:`read_qrels` also reads BEIR's ``qrels/*.tsv`` (tab-separated
``query-id  corpus-id  score``, with or without its header row). Sources are paths or ``-``,
plain or gzip, files or pipes (see :mod:`ef.io.source`).

Where trec_eval would guess, ef refuses with ``file:line`` and the reason: a score that is not
entirely a number (trec_eval's ``atof`` reads ``1.5x`` as 1.5 and ``x`` as 0), NaN, a score
beyond the range of a double (``1e400`` and ``1e401`` would tie as infinity), a grade that is
not an integer or does not fit 64 bits, a NUL byte (trec_eval stops reading there), bytes that
are not UTF-8, a doc id twice in one query. ``inf`` and ``-inf`` are accepted: they rank.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "run.txt")
>>> write_run(path, {"q1": {"d1": 0.5, "d2": 1.5}})
>>> print(open(path).read(), end="")
q1 Q0 d2 1 1.5 ef
q1 Q0 d1 2 0.5 ef
>>> read_run(path)
{'q1': {'d2': 1.5, 'd1': 0.5}}
"""

from __future__ import annotations

import contextlib
import gzip
import io
import itertools
import math
import os
import re
import stat
import sys
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any, TypeVar

import numpy as np
import numpy.typing as npt

from ef.io.source import BOM, Source, display_name, is_plain_file, iter_chunks, open_binary, read_bytes

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

__all__ = [
    "RunColumns",
    "format_run",
    "iter_run_columns",
    "read_qrels",
    "read_run",
    "read_run_columns",
    "write_lines",
    "write_qrels",
    "write_run",
]

PathLike = str | os.PathLike[str]
_Job = TypeVar("_Job")
_Out = TypeVar("_Out")

_PAD = 16  # zero bytes after the data, so an 8-byte window at any field start stays inside
_CHUNK = 1 << 23  # bytes per tokenising chunk: big enough to amortise numpy calls, small for cache
_WINDOW = 1 << 21  # bytes per streamed window (iter_run_columns): its work stays in a core's cache
_SMALLEST_WINDOW = 1 << 16  # the first window when the file is smaller than a window

# C's isspace() in the "C" locale: what trec_eval splits columns on.
_SPACE = np.zeros(256, dtype=bool)
_SPACE[list(b" \t\n\v\f\r")] = True


# --- fields as numbers -----------------------------------------------------------------------


def _word_view(data: bytearray) -> npt.NDArray[np.uint64]:
    """Every 8-byte window of ``data`` as a little-endian integer: ``view[i]`` = bytes ``i..i+7``."""
    return np.ndarray((len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))


# _LOW_BYTES[n]: a mask keeping the first n bytes of a little-endian word.
_LOW_BYTES = np.array([(1 << (8 * n)) - 1 for n in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
_MIX = np.uint64(0x9E3779B97F4A7C15)
_FMIX1, _FMIX2 = np.uint64(0xFF51AFD7ED558CCD), np.uint64(0xC4CEB9FE1A85EC53)


def _hash_fields(
    view: npt.NDArray[np.uint64], start: npt.NDArray[np.int64], length: npt.NDArray[np.int64]
) -> npt.NDArray[np.uint64]:
    """A 64-bit hash of each field ``view[start : start + length]``.

    A field's hash depends on its bytes alone (its length, then its 8-byte words), never on the
    other fields hashed with it: equal ids hash equal whatever their neighbours' widths. Matches
    are confirmed byte for byte by the caller, so a collision costs time, never a wrong number.
    A field of 8 to 16 bytes (most ids) is its first and its last 8 bytes, which may overlap: two
    loads and no masks.
    """
    h = length.astype(np.uint64) * _MIX
    if not len(h):
        return h
    if int(length.min()) >= 8 and int(length.max()) <= 16:
        h = _hash_ends(view, start, length, h)
    else:
        two = (length >= 8) & (length <= 16)
        mid, rest = np.flatnonzero(two), np.flatnonzero(~two)
        h[mid] = _hash_ends(view, start[mid], length[mid], h[mid])
        h[rest] = _hash_words(view, start[rest], length[rest], h[rest])
    # MurmurHash3's finaliser: every output bit depends on every input bit, so any slice of the
    # hash (the prefilter of the matcher) spreads ids that share a prefix like "doc000".
    h ^= h >> np.uint64(33)
    h *= _FMIX1
    h ^= h >> np.uint64(33)
    h *= _FMIX2
    h ^= h >> np.uint64(33)
    return h


def _mix_in(h: npt.NDArray[np.uint64], word: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    mixed = (h ^ word) * _MIX
    mixed ^= mixed >> np.uint64(29)
    return mixed


def _hash_ends(
    view: npt.NDArray[np.uint64], start: npt.NDArray[np.int64], length: npt.NDArray[np.int64], h: npt.NDArray[np.uint64]
) -> npt.NDArray[np.uint64]:
    """`h` with the first and the last 8 bytes of each field of 8 to 16 bytes mixed in."""
    return _mix_in(_mix_in(h, view[start]), view[start + length - 8])


def _hash_words(
    view: npt.NDArray[np.uint64], start: npt.NDArray[np.int64], length: npt.NDArray[np.int64], h: npt.NDArray[np.uint64]
) -> npt.NDArray[np.uint64]:
    """`h` with each field's 8-byte words mixed in, the last one masked to the field's end."""
    if not len(h):
        return h
    rows: npt.NDArray[np.int64] | None = None  # None: every row still has bytes at this offset
    offset = 0
    while True:
        if rows is None:
            h = _mix_in(h, view[start + offset] & _LOW_BYTES[np.minimum(length - offset, 8)])
        else:
            word = view[start[rows] + offset] & _LOW_BYTES[np.minimum(length[rows] - offset, 8)]
            h[rows] = _mix_in(h[rows], word)
        offset += 8
        longer = length > offset if rows is None else length[rows] > offset
        if rows is None and longer.all():
            continue
        rows = np.flatnonzero(longer) if rows is None else rows[longer]
        if not len(rows):
            return h


def hash_ids(ids: Iterable[bytes]) -> npt.NDArray[np.uint64]:
    """:func:`_hash_fields` of each id: the run columns' ``doc_hash`` of the same bytes."""
    items = list(ids)
    if not items:
        return np.zeros(0, dtype=np.uint64)
    lengths = np.fromiter(map(len, items), dtype=np.int64, count=len(items))
    joined = bytearray(b"".join(items) + bytes(_PAD))
    starts = np.zeros(len(items), dtype=np.int64)
    np.cumsum(lengths[:-1], out=starts[1:])
    return _hash_fields(_word_view(joined), starts, lengths)


def big_endian_words(
    data: bytearray, start: npt.NDArray[np.int64], stop: npt.NDArray[np.int64]
) -> list[npt.NDArray[np.uint64]]:
    """Each field as zero-padded big-endian 8-byte words: comparing the word tuples compares the
    fields byte-wise, as ``strcmp`` does (ids hold no NUL byte, so padding sorts first)."""
    view = _word_view(data)
    length = stop - start
    longest = int(length.max()) if len(length) else 0
    words = []
    last = len(view) - 1
    for offset in range(0, longest, 8):
        # Past a short field's end the window is masked to zero, so where it points is moot.
        word = view[np.minimum(start + offset, last)] & _LOW_BYTES[np.clip(length - offset, 0, 8)]
        words.append(word.byteswap())
    return words


def shared_prefix(data: bytearray, start: npt.NDArray[np.int64], stop: npt.NDArray[np.int64]) -> int:
    """How many leading bytes all the fields share (at most the shortest's length): bytes that
    decide no comparison among them, so :func:`big_endian_words` can start after them."""
    if not len(start):
        return 0
    view = _word_view(data)
    length = stop - start
    shortest = int(length.min())
    skip = 0
    while skip < shortest:
        word = view[start + skip] & _LOW_BYTES[min(shortest - skip, 8)]
        differs = int(np.bitwise_or.reduce(word ^ word[0]))
        if differs:  # little-endian: the lowest set bit is in the first byte that differs
            return skip + ((differs & -differs).bit_length() - 1) // 8
        skip += 8
    return shortest


_POW10 = 10.0 ** np.arange(23)
_LONGEST_SCORE = 24  # bytes: longer fields are left to parse_score
_ROWS_AT_ONCE = 1 << 15  # rows parsed together: fewer numpy calls (each holds the GIL) against cache misses
_TEN = np.uint64(10)
_SHORT = 8  # bytes: fields this short are parsed digit column by digit column
# _COLUMNS_FROM[w][f]: a row of w bytes, True from column f on (a field right-aligned in it).
_COLUMNS_FROM = {w: np.arange(w)[None, :] >= np.arange(w + 1)[:, None] for w in (8, 16, 24)}
_ONES = np.uint64(0x0101010101010101)
# _AFTER_DOT[w][k]: times a word k of a w-byte row that holds one 1 (at the dot's byte), it puts
# in the top byte the number of columns from the dot to the row's end: its decimals plus one.
_AFTER_DOT = {
    w: [np.uint64(sum((w - 8 * k - 7 + i) << (8 * i) for i in range(8))) for k in range(w // 8)] for w in (8, 16, 24)
}
_TOP_BYTE = np.uint64(56)
_POW10_U64 = np.array([10**k for k in range(20)], dtype=np.uint64)
_EXACT_DOUBLE = np.uint64(1 << 53)  # mantissas up to this are exact doubles


def _parse_scores(
    buf: npt.NDArray[np.uint8], start: npt.NDArray[np.int64], length: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """Decimal scores (``-?digits[.digits]``) converted exactly; ``ok`` marks them.

    Other spellings (exponents, ``inf``, garbage) and fields over 24 bytes are left to the
    caller. Fields of at most 8 bytes (``3.0``, ``0.25``, ``12.3456``) go to :func:`_parse_short`,
    longer ones (``repr()``'s 17 digits) to :func:`_parse_rows`, a block of rows at a time; a field
    that ends in the data's first 24 bytes is read after 24 zero bytes (a matrix row reaches back 24).
    """
    n = len(start)
    longest = int(length.max()) if n else 0
    if longest <= _SHORT:
        return _parse_short(buf, start, length, longest) if n else (np.zeros(0), np.zeros(0, dtype=bool))
    stop = start + length
    if longest > _LONGEST_SCORE or int(stop.min()) < _LONGEST_SCORE:
        value, ok = np.zeros(n), np.zeros(n, dtype=bool)
        near = stop < _LONGEST_SCORE
        rest = np.flatnonzero(~near & (length <= _LONGEST_SCORE))
        value[rest], ok[rest] = _parse_scores(buf, start[rest], length[rest])
        at = np.flatnonzero(near)
        if len(at):
            padded = np.zeros(2 * _LONGEST_SCORE, dtype=np.uint8)
            head = buf[:_LONGEST_SCORE]
            padded[_LONGEST_SCORE : _LONGEST_SCORE + len(head)] = head
            value[at], ok[at] = _parse_rows(padded, start[at] + _LONGEST_SCORE, length[at])
        return value, ok
    if n <= _ROWS_AT_ONCE:
        return _parse_rows(buf, start, length)
    value, ok = np.empty(n), np.empty(n, dtype=bool)
    for first in range(0, n, _ROWS_AT_ONCE):
        rows = slice(first, first + _ROWS_AT_ONCE)
        value[rows], ok[rows] = _parse_rows(buf, start[rows], length[rows])
    return value, ok


def _parse_short(
    buf: npt.NDArray[np.uint8], start: npt.NDArray[np.int64], length: npt.NDArray[np.int64], longest: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """:func:`_parse_scores` of fields of at most 8 bytes, `longest` the longest: digit column by
    digit column over all rows (each step one vectorised operation, a few per column: cheaper
    than the byte matrix's fixed cost when the fields are this short). Their mantissas of at most
    8 digits are exact doubles, so ``m / 10**k`` is the correctly rounded value.
    """
    n = len(start)
    mantissa, scaled = np.zeros(n, dtype=np.uint64), np.empty(n, dtype=np.uint64)
    digits, dots = np.zeros(n, dtype=np.int8), np.zeros(n, dtype=np.int8)
    dot_at = length.copy()  # no dot: no decimals
    byte, digit = np.empty(n, dtype=np.uint8), np.empty(n, dtype=np.uint8)
    is_digit, is_dot, inside = (np.empty(n, dtype=bool) for _ in range(3))
    shortest = int(length.min())
    for j in range(longest):
        np.take(buf[j:], start, out=byte, mode="clip")  # clip: bytes past the field are masked
        np.subtract(byte, 48, out=digit)
        np.less(digit, 10, out=is_digit)
        if j >= shortest:  # some fields have ended: mask their bytes out
            np.greater(length, j, out=inside)
            is_digit &= inside
        np.multiply(mantissa, _TEN, out=scaled)
        scaled += digit
        np.copyto(mantissa, scaled, where=is_digit)
        digits += is_digit
        np.equal(byte, 46, out=is_dot)
        if j >= shortest:
            is_dot &= inside
        dots += is_dot
        np.copyto(dot_at, j, where=is_dot)
    negative = buf[start] == 45
    plain = (digits + dots + negative == length) & (dots <= 1) & (digits >= 1)
    decimals = np.where(dots > 0, length - dot_at - 1, 0)
    value = np.where(negative, -1.0, 1.0) * (mantissa.astype(np.float64) / _POW10[np.clip(decimals, 0, 22)])
    return value, plain


def _parse_rows(
    buf: npt.NDArray[np.uint8], start: npt.NDArray[np.int64], length: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """:func:`_parse_scores` of fields of at most 24 bytes that end at byte 24 or later.

    Each field is right-aligned in a row of 8, 16 or 24 bytes, so a column's place value is the
    same in every row: the checks are byte-wide operations on the whole matrix, and the digits
    (the dot read as a 0) combine eight to a word in three multiplications (Lemire's SWAR). With
    the dot as a 0, the digits read ``t = high * 10**(d + 1) + low`` for ``d`` decimals ``low``:
    the value ``high + low / 10**d`` is ``m / 10**(d + 1)`` for ``m = t + 9 * low``. Up to 2**53
    ``m`` is an exact double, and the quotient is then correctly rounded, i.e. what ``strtod``
    gives; longer ones go to :func:`_long_decimals`.
    """
    n = len(start)
    if not n:
        return np.zeros(0), np.zeros(0, dtype=bool)
    width = 8 * max(1, -(-int(length.max()) // 8))
    # One row per field, its last byte in the last column.
    digit = np.lib.stride_tricks.as_strided(buf, (len(buf) - width + 1, width), (1, 1))[start + length - width]
    negative = (buf[start] == 45) & (length > 0)
    bad = _COLUMNS_FROM[width].take(width - length + negative, axis=0)  # the digits and dot: after a '-'
    is_dot = digit == 46
    is_dot &= bad
    digit ^= np.uint8(48)
    is_digit = digit < 10
    is_digit &= bad
    bad ^= is_digit  # what is left in the field is neither digit nor dot
    bad ^= is_dot
    digit *= is_digit  # the dot, the sign and the bytes before the field read as 0
    words = digit.view(np.uint64)  # (n, width / 8): the first byte of a word is its first digit
    words *= np.uint64(10 * 256 + 1)
    words >>= np.uint64(8)
    words &= np.uint64(0x00FF00FF00FF00FF)
    words *= np.uint64(100 * 65536 + 1)
    words >>= np.uint64(16)
    words &= np.uint64(0x0000FFFF0000FFFF)
    words *= np.uint64(10000 * (1 << 32) + 1)
    words >>= np.uint64(32)
    bad_words, dot_words = bad.view(np.uint64), is_dot.view(np.uint64)
    mantissa, any_bad = words[:, 0].copy(), bad_words[:, 0].copy()
    dots, after = dot_words[:, 0] * _ONES, dot_words[:, 0] * _AFTER_DOT[width][0]
    for k in range(1, width // 8):
        mantissa *= np.uint64(10**8)
        mantissa += words[:, k]
        any_bad |= bad_words[:, k]
        dots += dot_words[:, k] * _ONES  # the top byte sums every byte: the dots (no carry)
        after += dot_words[:, k] * _AFTER_DOT[width][k]  # right when there is one dot
    n_dots = (dots >> _TOP_BYTE).astype(np.int64)
    plain = (any_bad == 0) & (n_dots <= 1) & (length - negative > n_dots)  # a digit at least
    # 24 columns may hold more digits than a uint64: t is exact below 10**18 (2 digits in word 0).
    huge = words[:, 0] >= 100 if width == 24 else np.zeros(n, dtype=bool)
    decimals = (after >> _TOP_BYTE).astype(np.int64)  # one more than after the dot; 0 if none
    fraction = _POW10_U64[np.clip(decimals - 1, 0, 19)]
    if (mantissa < fraction).all():  # no integer part (scores below 1): t is low, so m = 10 t
        mantissa *= _TEN
    else:
        mantissa += np.uint64(9) * (mantissa % fraction)
    long = plain & ((mantissa > _EXACT_DOUBLE) | (decimals > 22) | huge)
    many = np.count_nonzero(long)
    if 2 * many > n:  # most rows (repr()'s 17 digits): all at once, no gathers; the others after
        value = _long_decimals(buf, start, length, mantissa, decimals, negative, huge, long)
        at = np.flatnonzero(~long)
        value[at] = _short_decimals(mantissa[at], decimals[at], negative[at])
        return value, plain
    value = _short_decimals(mantissa, decimals, negative)
    if many:
        at = np.flatnonzero(long)
        where = start[at], length[at], mantissa[at], decimals[at], negative[at], huge[at]
        value[at] = _long_decimals(buf, *where, np.ones(len(at), dtype=bool))
    return value, plain


def _short_decimals(
    mantissa: npt.NDArray[np.uint64], decimals: npt.NDArray[np.int64], negative: npt.NDArray[np.bool_]
) -> npt.NDArray[np.float64]:
    """``mantissa / 10**decimals``, signed: correctly rounded for mantissas up to 2**53 (exact
    doubles) and at most 22 decimals (exact powers), one rounding."""
    value = mantissa.astype(np.float64) / _POW10[np.minimum(decimals, 22)]
    np.negative(value, out=value, where=negative)
    return value


# A window's scores are parsed half here, half on a helper thread, when they are many and long
# (a 17-digit repr() score costs ~100 ns, about as much as tokenising its whole line): the thread
# that tokenises is then no longer the one the others wait for.
_SHARED_ROWS = 1 << 14
_SHARED_LONGEST = _SHORT  # bytes; shorter scores take a few column passes, not worth a thread
_helper: ThreadPoolExecutor | None = None  # started on first use and kept: a start costs 0.1-1 ms


# True while a process scores its share of a file split between processes (ef.evaluation._split):
# there, more threads would only contend with the other process for the cores.
one_thread: ContextVar[bool] = ContextVar("ef_one_thread", default=False)


def _forget_helper() -> None:
    global _helper
    _helper = None  # a forked child has the executor but not its thread: it starts its own


HELPER_NAME = "ef-scores"  # the helper thread's name prefix


def stop_helper() -> None:
    """End the helper thread, if started (before a fork: a process forks safely with one thread)."""
    global _helper
    helper, _helper = _helper, None
    if helper is not None:
        helper.shutdown(wait=True)


if hasattr(os, "register_at_fork"):  # POSIX only; Windows has no fork
    os.register_at_fork(after_in_child=_forget_helper)


def _parse_scores_shared(
    buf: npt.NDArray[np.uint8], start: npt.NDArray[np.int64], length: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """:func:`_parse_scores`, the second half of the rows on a helper thread when that pays."""
    global _helper
    n = len(start)
    if n < _SHARED_ROWS or (os.cpu_count() or 1) < 2 or one_thread.get() or int(length.max()) <= _SHARED_LONGEST:
        return _parse_scores(buf, start, length)
    half = n // 2
    try:
        helper = _helper
        if helper is None:
            from concurrent.futures import ThreadPoolExecutor

            helper = _helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix=HELPER_NAME)
        later = helper.submit(_parse_scores, buf, start[half:], length[half:])
    except RuntimeError:  # the interpreter is shutting down (a thread still reading): no new threads
        return _parse_scores(buf, start, length)
    first = _parse_scores(buf, start[:half], length[:half])
    second = later.result()
    return np.concatenate([first[0], second[0]]), np.concatenate([first[1], second[1]])


# x87 extended precision (64-bit mantissa, 16-byte little-endian layout), as on Linux/x86-64.
_EXTENDED = np.finfo(np.longdouble).nmant == 63 and np.dtype(np.longdouble).itemsize == 16 and sys.byteorder == "little"
# 10**k for k <= 20, by exact products (5**20 < 2**64): the dot read as a digit adds one to k.
_POW10_EXTENDED = np.cumprod(np.array([1] + [10] * 20, dtype=np.longdouble))


def _long_decimals(
    buf: npt.NDArray[np.uint8],
    start: npt.NDArray[np.int64],
    length: npt.NDArray[np.int64],
    mantissa: npt.NDArray[np.uint64],
    decimals: npt.NDArray[np.int64],
    negative: npt.NDArray[np.bool_],
    huge: npt.NDArray[np.bool_],
    wanted: npt.NDArray[np.bool_],
) -> npt.NDArray[np.float64]:
    """Plain decimals ``mantissa / 10**decimals`` past 2**53, correctly rounded like ``strtod``,
    where `wanted` (elsewhere the value is moot: the field may not even be a number).

    Below 10**19 (`huge` false) `mantissa` is exact, and ``m / 10**k`` in x87 extended
    precision is rounded once, to 64 bits. Rounding that to a double gives strtod's value unless
    it sits on a midpoint between two doubles (low 11 bits ``10000000000``). Those, longer
    mantissas, ``k`` over 20 and other platforms go through numpy's string conversion (about
    250 ns a value). A nonzero ``m / 10**k`` with ``k <= 20`` is at least 1e-20, far above the
    subnormals, where doubles would round at another bit.
    """
    if _EXTENDED:
        exact = mantissa.astype(np.longdouble) / _POW10_EXTENDED[np.minimum(decimals, 20)]
        value = exact.astype(np.float64)
        np.negative(value, out=value, where=negative)
        slow = wanted & (huge | (decimals > 20) | (exact.view(np.uint64)[::2] & np.uint64(0x7FF) == 0x400))
    else:
        value, slow = np.empty(len(start)), wanted
    if slow.any():
        width = int(length[slow].max())
        column = np.arange(width)
        text = buf[np.minimum(start[slow, None] + column, len(buf) - 1)]
        text[column >= length[slow, None]] = 0
        value[slow] = text.view(f"S{width}").ravel().astype(np.float64)
    return value


# strtod's spellings: decimal with optional exponent, hexadecimal, inf/infinity, nan.
_DECIMAL = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_HEX = re.compile(rb"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?")
_INFINITY = re.compile(rb"[+-]?(?:inf|infinity)", re.IGNORECASE)
_NAN = re.compile(rb"[+-]?nan(?:\([0-9A-Za-z_]*\))?", re.IGNORECASE)


def parse_score(text: bytes, where: str, what: str = "score") -> float:
    """`text` as C's ``strtod`` reads it, whole; ``ValueError`` naming `where` for what cannot rank."""
    shown = text.decode(errors="replace")
    if _DECIMAL.fullmatch(text):
        value = float(text)
    elif _HEX.fullmatch(text):
        try:
            value = float.fromhex(text.decode())
        except OverflowError:
            value = math.inf
        if math.isinf(value):
            raise ValueError(f"{where}: {what} {shown!r} is beyond the range of a double")
        return value
    elif _INFINITY.fullmatch(text):
        return -math.inf if text.startswith(b"-") else math.inf
    elif _NAN.fullmatch(text):
        raise ValueError(f"{where}: {what} is NaN")
    else:
        raise ValueError(f"{where}: {what} {shown!r} is not a number")
    if math.isinf(value):
        # strtod gives HUGE_VAL: 1e400 and 1e401 would tie as infinity.
        raise ValueError(f"{where}: {what} {shown!r} is beyond the range of a double")
    return value


# --- the run reader --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Segment:
    query_id: bytes
    start: int  # first row
    stop: int  # one past the last row


@dataclass
class RunColumns:
    """A run file tokenised into columns, one row per document line.

    ``segments`` maps each query id to its runs of consecutive rows (one for a file grouped by
    query, as trec_eval writes them; more when a query's lines are scattered); ``rows(query)``
    gives its row indices; ``doc_id(row)`` the doc id bytes; ``line(row)`` its line number.
    ``doc_hash`` is :func:`hash_ids` of each row's doc id (``hashes``, found on first use when
    not given: a streamed window is hashed by the thread that matches it).
    """

    path: str
    data: bytearray
    scores: npt.NDArray[np.float64]
    hashes: npt.NDArray[np.uint64] | None  # None: hashed on first use of doc_hash
    doc_start: npt.NDArray[np.int64]
    doc_stop: npt.NDArray[np.int64]
    segments: dict[bytes, list[_Segment]]
    run_id: str
    lines: int = 0  # newlines in `data`: lines read, comment and blank ones included

    def __len__(self) -> int:
        return len(self.scores)

    @property
    def doc_hash(self) -> npt.NDArray[np.uint64]:
        if self.hashes is None:
            self.hashes = _hash_fields(_word_view(self.data), self.doc_start, self.doc_stop - self.doc_start)
        return self.hashes

    def rows(self, query_id: bytes) -> npt.NDArray[np.int64] | slice:
        parts = self.segments[query_id]
        if len(parts) == 1:
            return slice(parts[0].start, parts[0].stop)
        return np.concatenate([np.arange(p.start, p.stop) for p in parts])

    def head(self, stop: int) -> RunColumns:
        """The rows before `stop`, which must start a run of a query's rows (views, no copy)."""
        segments: dict[bytes, list[_Segment]] = {}
        for query_id, parts in self.segments.items():
            kept = [p for p in parts if p.stop <= stop]
            if kept:
                segments[query_id] = kept
        return RunColumns(
            self.path,
            self.data,
            self.scores[:stop],
            None if self.hashes is None else self.hashes[:stop],
            self.doc_start[:stop],
            self.doc_stop[:stop],
            segments,
            self.run_id,
            self.lines,
        )

    def doc_id(self, row: int) -> bytes:
        return bytes(self.data[int(self.doc_start[row]) : int(self.doc_stop[row])])

    def line(self, row: int) -> int:
        """The 1-based line number of `row` (counted only when an error needs it)."""
        return _line_at(self.data, int(self.doc_start[row]))

    def to_dict(self) -> dict[str, dict[str, float]]:
        """``{query_id: {doc_id: score}}``, queries in first-appearance order, docs in file order."""
        run: dict[str, dict[str, float]] = {}
        data = self.data
        for query_id in self.segments:
            rows = self.rows(query_id)
            starts = self.doc_start[rows].tolist()
            stops = self.doc_stop[rows].tolist()
            scores = self.scores[rows].tolist()
            docs = {data[a:b].decode(): s for a, b, s in zip(starts, stops, scores, strict=True)}
            if len(docs) != len(scores):
                self.check_duplicates(query_id)
            run[query_id.decode()] = docs
        return run

    def check_duplicates(self, query_id: bytes) -> None:
        """Raise ``file:line`` if a doc id appears twice in ``query_id``."""
        rows = self.rows(query_id)
        row_index = np.arange(rows.start, rows.stop) if isinstance(rows, slice) else rows
        values = self.doc_hash[rows]
        order = np.argsort(values, kind="stable")
        ordered = values[order]
        same = np.flatnonzero(ordered[1:] == ordered[:-1])
        found = []  # (row, first row, doc id) of each true repeat; equal hashes may be a collision
        for i in same.tolist():
            first, second = int(row_index[order[i]]), int(row_index[order[i + 1]])
            doc_id = self.doc_id(first)
            if doc_id == self.doc_id(second):
                found.append((max(first, second), min(first, second), doc_id))
        if found:
            row, earlier, doc_id = min(found)  # the earliest repeat
            raise ValueError(
                f"{self.path}:{self.line(row)}: doc id {doc_id.decode(errors='replace')!r} appears twice in query "
                f"{query_id.decode(errors='replace')!r} (first at line {self.line(earlier)})"
            )

    def find_duplicate(self) -> None:
        """Raise ``file:line`` for the first query holding a doc id twice (any query of the file)."""
        # One in-place sort of every row's (query, doc) hash; numpy sorts without the GIL.
        keys = self._query_keys()
        keys.sort()
        same = keys[1:] == keys[:-1]
        if not same.any():
            return
        repeated = keys[1:][same]
        bad_rows = np.flatnonzero(np.isin(self._query_keys(), repeated))
        for query_id, parts in self.segments.items():
            if any(bad_rows.searchsorted(p.start) < bad_rows.searchsorted(p.stop) for p in parts):
                self.check_duplicates(query_id)  # raises for a true repeat; a collision passes

    def _query_keys(self) -> npt.NDArray[np.uint64]:
        """Each row's doc hash mixed with its query's (equal for a doc twice in one query)."""
        keys = np.empty(len(self), dtype=np.uint64)
        mixes = hash_ids(list(self.segments)) * _MIX
        for mix, parts in zip(mixes, self.segments.values(), strict=True):
            for part in parts:
                np.bitwise_xor(self.doc_hash[part.start : part.stop], mix, out=keys[part.start : part.stop])
        return keys


def _line_at(data: bytearray | bytes, position: int) -> int:
    return data.count(b"\n", 0, position) + getattr(data, "first_line", 1)


@dataclass(frozen=True)
class _Tokens:
    """The rows of one chunk: positions of the query id, doc id, score and run id fields."""

    query_start: npt.NDArray[np.int64]
    query_stop: npt.NDArray[np.int64]
    doc_start: npt.NDArray[np.int64]
    doc_stop: npt.NDArray[np.int64]
    score_start: npt.NDArray[np.int64]
    score_stop: npt.NDArray[np.int64]
    run_id: tuple[int, int] | None  # the last row's
    newlines: int  # the chunk's lines, comment and blank ones included


def _tokenise(name: str, data: bytearray, buf: npt.NDArray[np.uint8], begin: int, end: int) -> _Tokens:
    """Split the whole lines ``data[begin:end]`` (ending in ``\\n``) into trec_eval's columns.

    Separators are found once for the chunk; a token is a gap between two separators. Every
    layout trec_eval accepts takes this same path: there is no fallback to get wrong.
    """
    chunk = buf[begin:end]
    is_low = chunk <= 32  # comparisons are cheaper than a table lookup
    candidates = np.flatnonzero(is_low)
    separator: npt.NDArray[np.bool_] | None = is_low  # None once it marks other bytes than candidates
    byte = chunk[candidates]
    newline = byte == 10
    newlines = int(np.count_nonzero(newline))
    # Most files separate with spaces and newlines alone: two counts prove it, and leave nothing
    # (no tab, '\\r' or control byte) for the checks below.
    if newlines + int(np.count_nonzero(byte == 32)) != len(byte):
        # Bytes <= 32 that are not C whitespace (0-8, 14-31): rare, so test for any before a lookup.
        if ((byte < 9) | ((byte > 13) & (byte < 32))).any():
            space = _SPACE[byte]
            if (byte == 0).any():
                at = begin + int(candidates[np.flatnonzero(byte == 0)[0]])
                raise ValueError(f"{name}:{_line_at(data, at)}: a NUL byte (trec_eval stops reading a file there)")
            candidates, byte = candidates[space], byte[space]  # other control bytes belong to ids, as in C
            separator = None
            newline = byte == 10
        lone = np.flatnonzero(byte[:-1] == 13)
        lone = lone[(byte[lone + 1] != 10) | (candidates[lone + 1] != candidates[lone] + 1)]
        if len(lone):  # trec_eval would read it as a space and ignore the rest of the line: a silent drop
            at = begin + int(candidates[lone[0]])
            raise ValueError(
                f"{name}:{_line_at(data, at)}: a carriage return ('\\r') inside a line; "
                "line ends must be '\\n' or '\\r\\n'"
            )
    # A '#' anywhere (memchr) is rare: without one, no line can be a comment.
    regular = _grid(chunk, candidates, byte, separator, newlines, data.find(b"#", begin, end) >= 0)
    if regular is not None:
        return _from_grid(*regular, begin)
    # A token lies between separators i and i+1 when they are not adjacent; a virtual separator
    # at -1 catches a token at the start of the chunk.
    before = np.empty(len(candidates) + 1, dtype=np.int64)
    before[0] = -1
    before[1:] = candidates
    gap = np.diff(before) > 1
    token_start = before[:-1][gap] + 1
    token_stop = candidates[gap]
    lines_before = np.zeros(len(candidates), dtype=np.int64)
    np.cumsum(newline[:-1], out=lines_before[1:])
    token_line = lines_before[gap]
    n_lines = int(lines_before[-1]) + 1
    counts = np.bincount(token_line, minlength=n_lines)
    first = np.zeros(n_lines, dtype=np.int64)
    np.cumsum(counts[:-1], out=first[1:])
    if (counts == 6).all() and not (chunk[token_start[first]] == 35).any():
        head = first  # the common case: every line is one document, no comment ('#')
    else:
        nonblank = counts > 0
        comment = np.zeros(n_lines, dtype=bool)
        comment[nonblank] = chunk[token_start[first[nonblank]]] == 35
        is_data = nonblank & ~comment
        short = np.flatnonzero(is_data & (counts < 6))
        if len(short):
            line = int(short[0])
            at = begin + int(token_start[first[line]])
            raise ValueError(
                f"{name}:{_line_at(data, at)}: expected 6 columns 'query_id iter doc_id rank score run_id', "
                f"got {int(counts[line])}"
            )
        head = first[np.flatnonzero(is_data)]
    if not len(head):
        empty = np.zeros(0, dtype=np.int64)
        return _Tokens(empty, empty, empty, empty, empty, empty, run_id=None, newlines=n_lines)
    token_start += begin
    token_stop += begin
    last = int(head[-1]) + 5
    return _Tokens(
        query_start=token_start[head],
        query_stop=token_stop[head],
        doc_start=token_start[head + 2],
        doc_stop=token_stop[head + 2],
        score_start=token_start[head + 4],
        score_stop=token_stop[head + 4],
        run_id=(int(token_start[last]), int(token_stop[last])),
        newlines=n_lines,
    )


def _grid(
    chunk: npt.NDArray[np.uint8],
    candidates: npt.NDArray[np.int64],
    byte: npt.NDArray[np.uint8],
    separator: npt.NDArray[np.bool_] | None,
    newlines: int,
    hash_sign: bool,
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]] | None:
    """The separators as a ``(lines, 6)`` grid, and each line's ``\\n``, when every line is six
    fields one separator apart, LF or CRLF: how ef, Anserini, Pyserini and most tools write runs.
    `separator` marks the bytes at `candidates` (``None``: it may mark others); `newlines`: how
    many of them are ``\\n``; `hash_sign`: the chunk holds a ``#``.

    The layout is proven by a few vectorised checks (so this is exact, not a guess); anything else
    returns ``None`` and takes the general tokeniser.
    """
    n = len(candidates)
    crlf = n >= 7 and byte[5] == 13
    width = 7 if crlf else 6
    if n % width or candidates[0] == 0:
        return None
    grid = candidates.reshape(-1, width)
    lines = len(grid)
    if newlines != lines or not (byte[width - 1 :: width] == 10).all():
        return None  # the newlines are not exactly every width-th separator
    if crlf and not ((byte[5::7] == 13).all() and (grid[:, 6] == grid[:, 5] + 1).all()):
        return None
    # Adjacent separators: an empty field (doubled separators, a blank line), or a "\r\n".
    adjacent = (
        np.count_nonzero(np.diff(candidates) < 2)
        if separator is None
        else np.count_nonzero(separator[1:] & separator[:-1])
    )
    if adjacent != (lines if crlf else 0):
        return None
    newline = grid[:, width - 1]
    if hash_sign and (chunk[0] == 35 or (chunk[newline[:-1] + 1] == 35).any()):
        return None  # a comment line
    return grid[:, :6], newline


def _from_grid(grid: npt.NDArray[np.int64], newline: npt.NDArray[np.int64], begin: int) -> _Tokens:
    query_start = np.empty(len(grid), dtype=np.int64)
    query_start[0] = begin
    np.add(newline[:-1], begin + 1, out=query_start[1:])

    def at(column: int, offset: int) -> npt.NDArray[np.int64]:  # one add, none at offset 0 (a view)
        return grid[:, column] + offset if offset else grid[:, column]

    return _Tokens(
        query_start=query_start,
        query_stop=at(0, begin),
        doc_start=at(1, begin + 1),
        doc_stop=at(2, begin),
        score_start=at(3, begin + 1),
        score_stop=at(4, begin),
        run_id=(int(grid[-1, 4]) + 1 + begin, int(grid[-1, 5]) + begin),
        newlines=len(grid),
    )


def _same_as_previous(
    view: npt.NDArray[np.uint64], start: npt.NDArray[np.int64], stop: npt.NDArray[np.int64]
) -> npt.NDArray[np.bool_]:
    """``same[i]``: field ``i + 1`` has exactly the bytes of field ``i`` (compared word by word)."""
    length = stop - start
    # Every field's first 8 bytes, gathered once and compared with its neighbour's.
    first = view[start] & _LOW_BYTES[np.minimum(length, 8)]
    same = (first[1:] == first[:-1]) & (length[1:] == length[:-1])
    offset = 8
    rows = np.flatnonzero(same & (length[1:] > offset))  # longer fields: the rest, word by word
    while len(rows):
        a, b = start[rows] + offset, start[rows + 1] + offset
        keep = _LOW_BYTES[np.minimum(length[rows] - offset, 8)]
        equal = (view[a] & keep) == (view[b] & keep)
        same[rows[~equal]] = False
        offset += 8
        rows = rows[equal & (length[rows] > offset)]
    return np.asarray(same, dtype=bool)


def _read_padded(source: Source) -> bytearray:
    """All of `source`'s bytes, ending in a newline, then ``_PAD`` zero bytes."""
    name = os.fspath(source)
    if is_plain_file(name):
        with open(name, "rb") as handle:
            head = handle.read(3)
            size = os.fstat(handle.fileno()).st_size
            if size >= len(head):
                # A plain file: read once, straight into place (no chunk copies).
                skip = 3 if head == BOM else 0
                data = bytearray(size - skip + 1 + _PAD)
                handle.seek(skip)
                got = handle.readinto(memoryview(data)[: size - skip])
                if got != size - skip:
                    raise OSError(f"{name}: short read ({got} of {size - skip} bytes)")
                more = handle.read()  # a size the system under-reports (procfs, some FUSE mounts)
                if more:
                    data[got:got] = more
                    got += len(more)
                if got and data[got - 1] != 10:
                    data[got] = 10
                    got += 1
                del data[got + _PAD :]
                return data
    data = bytearray()
    for chunk in iter_chunks(source):
        data += chunk
    if data and not data.endswith(b"\n"):
        data += b"\n"
    data += bytes(_PAD)
    return data


def _check_utf8(name: str, data: bytearray, size: int) -> None:
    if data.isascii():
        return
    try:
        bytes(data[:size]).decode("utf-8")
    except UnicodeDecodeError as error:
        bad = bytes(data[error.start : error.end])
        raise ValueError(f"{name}:{_line_at(data, error.start)}: {bad!r} is not valid UTF-8") from None


@dataclass(frozen=True)
class _Chunk:
    """What one chunk leaves besides its rows: the little the merge needs."""

    rows: int
    new_query: npt.NDArray[np.int64]  # the chunk's rows that start a query run (row 0 always)
    query_at: npt.NDArray[np.int64]  # (start, stop) of each of those rows' query id
    last_query: tuple[int, int]  # the query id of the chunk's last row
    unparsed: npt.NDArray[np.int64]  # (row, start, stop) of scores parse_score must read
    run_id: tuple[int, int] | None
    newlines: int  # lines read, comment and blank ones included


class _Rows:
    """Per-row arrays: a chunk's, or a whole file's, filled chunk by chunk (``doc_hash`` is
    ``None`` when the doc ids are hashed later)."""

    def __init__(
        self,
        doc_start: npt.NDArray[np.int64],
        doc_stop: npt.NDArray[np.int64],
        doc_hash: npt.NDArray[np.uint64] | None,
        scores: npt.NDArray[np.float64],
    ) -> None:
        self.doc_start, self.doc_stop, self.doc_hash, self.scores = doc_start, doc_stop, doc_hash, scores

    @classmethod
    def empty(cls, n: int, hashed: bool) -> _Rows:
        doc_hash = np.empty(n, dtype=np.uint64) if hashed else None
        return cls(np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64), doc_hash, np.empty(n))

    def columns(self) -> list[npt.NDArray[Any]]:
        return [c for c in (self.doc_start, self.doc_stop, self.doc_hash, self.scores) if c is not None]

    def put(self, first: int, rows: _Rows) -> None:
        """Copy `rows` in from row `first` on."""
        for mine, theirs in zip(self.columns(), rows.columns(), strict=True):
            mine[first : first + len(theirs)] = theirs


def _chunk(name: str, data: bytearray, begin: int, end: int, hashed: bool) -> tuple[_Rows, _Chunk]:
    """The rows of the whole lines ``data[begin:end]`` and what the merge needs of them."""
    buf = np.frombuffer(data, dtype=np.uint8)
    view = _word_view(data)
    tokens = _tokenise(name, data, buf, begin, end)
    length = tokens.doc_stop - tokens.doc_start
    doc_hash = _hash_fields(view, tokens.doc_start, length) if hashed else None
    scores, ok = _parse_scores_shared(buf, tokens.score_start, tokens.score_stop - tokens.score_start)
    bad = np.flatnonzero(~ok)
    new = np.ones(len(scores), dtype=bool)
    new[1:] = ~_same_as_previous(view, tokens.query_start, tokens.query_stop)
    starts = np.flatnonzero(new)
    last = (int(tokens.query_start[-1]), int(tokens.query_stop[-1])) if len(scores) else (0, 0)
    rows = _Rows(tokens.doc_start, tokens.doc_stop, doc_hash, scores)
    return rows, _Chunk(
        rows=len(scores),
        new_query=starts,
        query_at=np.stack([tokens.query_start[starts], tokens.query_stop[starts]], axis=1),
        last_query=last,
        unparsed=np.stack([bad, tokens.score_start[bad], tokens.score_stop[bad]], axis=1),
        run_id=tokens.run_id,
        newlines=tokens.newlines,
    )


def read_run_columns(path: Source) -> RunColumns:
    """Read a TREC run file (a path or ``-``) into :class:`RunColumns`; see :func:`read_run`."""
    return _columns(display_name(path), _read_padded(path))


class _Window(bytearray):
    """A window's bytes (whole lines, then ``_PAD`` zeros) that knows the line it starts at."""

    first_line: int = 1


def iter_run_columns(
    path: Source, window: int | None = None, *, span: tuple[int, int] | None = None
) -> Iterator[RunColumns]:
    """A run file as :class:`RunColumns` of about `window` bytes each (2 MiB), query group by query group.

    Each window ends where a query's run of lines ends (or where the file does), so a file grouped
    by query, as trec_eval writes them, yields every query once and whole; memory holds one window
    (more only while one query's lines outgrow it). A query whose lines are scattered may appear
    in several windows: the caller sees it (see :func:`ef.evaluation.evaluate_run`). Errors give
    the line number in the whole file. `span`, ``(begin, end)`` byte offsets at line starts of a
    plain regular file, reads those bytes alone (line numbers then count from `begin`).

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "run.txt")
    >>> write_run(path, {"q1": {"d1": 0.5, "d2": 1.5}, "q2": {"d3": 1.0, "d4": 0.5, "d5": 0.25}})
    >>> [sorted(c.segments) for c in iter_run_columns(path, window=40)]
    [[b'q1'], [b'q2']]
    """
    name = display_name(path)
    size = window or _WINDOW
    first_line = 1
    carry = b""
    with _open_span(path, span) as stream:
        at_start = True
        remaining = None if span is None else span[1] - span[0]  # bytes of the span not yet read
        while True:
            # The block is read straight into the window, after what the last window left. The
            # first is no larger than the file (zeroing a window costs time), later ones are whole:
            # a size the system under-reports (procfs, some FUSE mounts) costs one more read.
            left = remaining if remaining is not None else _bytes_left(stream) if at_start else None
            want = size if left is None else min(size, max(left + 1, _SMALLEST_WINDOW))
            # A query longer than a window is carried whole and tokenised again with more: reading
            # as much again as is carried keeps that work linear (each pass at least doubles).
            want = max(want, len(carry))
            data = _Window(len(carry) + want + _PAD)
            data[: len(carry)] = carry
            reading = want if remaining is None else min(want, remaining)
            got = _fill(stream, memoryview(data)[len(carry) : len(carry) + reading], name)
            if remaining is not None:
                remaining -= got
            end = len(carry) + got
            if at_start:
                at_start = False
                if (span is None or span[0] == 0) and data.startswith(BOM):
                    del data[: len(BOM)]
                    end -= len(BOM)
            final = got < want
            if not final:
                cut = data.rfind(b"\n", 0, end) + 1  # whole lines only; the partial last line waits
                if not cut:
                    carry = bytes(data[:end])
                    continue
                tail = bytes(data[cut:end])
                end = cut
                if _one_query(data, end):  # it goes on in the next block: read more before tokenising
                    carry = bytes(data[:end]) + tail
                    continue
            elif not end:
                return
            else:
                tail = b""
                if data[end - 1] != 10:
                    data[end] = 10
                    end += 1
            data[end : end + _PAD] = bytes(_PAD)
            del data[end + _PAD :]
            data.first_line = first_line
            columns = _columns(name, data, hashed=False)  # hashed where matched: threads balance
            keep = end
            if not final and columns.segments:
                # The last query may go on in the next block: it waits for it (with all the window
                # when it is the only query there, so a query longer than a window stays whole).
                last = max(columns.segments.values(), key=lambda parts: parts[-1].stop)[-1]
                if last.start == 0:
                    carry = bytes(data[:end]) + tail
                    continue
                keep = data.rfind(b"\n", 0, int(columns.doc_start[last.start])) + 1
                columns = columns.head(last.start)
            carry = bytes(data[keep:end]) + tail
            first_line += columns.lines - carry.count(b"\n", 0, end - keep)
            if len(columns):
                yield columns
            if final:
                return


@contextlib.contextmanager
def _open_span(path: Source, span: tuple[int, int] | None) -> Iterator[IO[bytes]]:
    """`path` as :func:`open_binary` opens it, or a plain file from ``span[0]`` on."""
    if span is None:
        with open_binary(path) as stream:
            yield stream
        return
    with open(os.fspath(path), "rb") as stream:
        stream.seek(span[0])
        yield stream


def query_boundary(path: PathLike, near: int, reach: int = 1 << 23) -> int | None:
    """The first line start at or after byte `near` (> 0) of a plain run file where one query's
    lines end and another's begin (comment and blank lines passed over), within `reach` bytes of
    `near`; else ``None``."""
    back = min(near, 1 << 14)  # lines read before `near`, for the query that goes on there
    offset = near - back
    with open(os.fspath(path), "rb") as stream:
        stream.seek(offset)
        block = stream.read(back + reach)
    line = block.find(b"\n") + 1 if offset else 0
    previous = None
    while True:
        stop = block.find(b"\n", line) + 1
        if not stop:
            return None  # no whole line left within reach
        fields = block[line:stop].split(None, 1)
        if fields and not fields[0].startswith(b"#"):
            if previous is not None and fields[0] != previous and offset + line >= near:
                return offset + line
            previous = fields[0]
        line = stop


def _one_query(data: bytearray, end: int) -> bool:
    """Whether the first and last lines of ``data[:end]`` (whole lines) start with one query id.

    In a file grouped by query every line between is that query's too, so the window is one
    query's: it waits for more rather than being tokenised. In another file this only makes the
    window larger; tokenising it then finds the queries as always.
    """
    first = data[: data.find(b"\n", 0, end)].split(None, 1)
    last = data[data.rfind(b"\n", 0, end - 1) + 1 : end].split(None, 1)
    return bool(first) and bool(last) and first[0] == last[0] and not first[0].startswith(b"#")


def _bytes_left(stream: object) -> int | None:
    """The bytes a plain regular file has left; ``None`` for a pipe, stdin or a gzip stream."""
    if isinstance(stream, gzip.GzipFile) or not isinstance(stream, io.BufferedIOBase | io.RawIOBase):
        return None
    try:
        status = os.fstat(stream.fileno())
        return max(0, status.st_size - stream.tell()) if stat.S_ISREG(status.st_mode) else None
    except (OSError, ValueError):  # io.UnsupportedOperation is an OSError
        return None


def _fill(stream: IO[bytes], view: memoryview, name: str) -> int:
    """Read into `view` until it is full or the stream ends; the bytes read. Errors name `name`."""
    got = 0
    while got < len(view):
        try:
            n = stream.readinto(view[got:])  # type: ignore[attr-defined]
        except (EOFError, zlib.error, gzip.BadGzipFile) as error:
            reason = "truncated gzip stream" if isinstance(error, EOFError) else f"corrupt gzip stream ({error})"
            raise ValueError(f"{name}: {reason}") from None
        if not n:
            break
        got += n
    return got


def _on_threads(function: Callable[[_Job], _Out], jobs: list[_Job]) -> list[_Out]:
    """``function`` over ``jobs``, on two threads when there are several: numpy releases the GIL
    in its loops, so two chunks are tokenised at once. One job runs here (a thread costs more)."""
    if len(jobs) < 2 or (os.cpu_count() or 1) < 2 or one_thread.get():
        return list(map(function, jobs))
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(function, jobs))


def _columns(name: str, data: bytearray, *, hashed: bool = True) -> RunColumns:
    """:class:`RunColumns` of `data`: whole lines, then ``_PAD`` zero bytes; the doc ids hashed
    here on threads when `hashed`, else on first use."""
    size = len(data) - _PAD
    _check_utf8(name, data, size)
    buf = np.frombuffer(data, dtype=np.uint8)
    bounds = [0]
    while bounds[-1] < size:
        cut = data.find(b"\n", min(bounds[-1] + _CHUNK, size - 1), size) + 1
        bounds.append(cut if cut > 0 else size)
    pairs = list(itertools.pairwise(bounds))
    if len(pairs) == 1:  # one chunk (as a streamed window is): its arrays are the table
        table, chunk = _chunk(name, data, 0, size, hashed)
        chunks, n = [chunk], chunk.rows
    else:
        # A chunk has at most one row per line: its rows go at its first line's offset (on the
        # thread that read it), and any gap that comment or blank lines leave is closed afterwards.
        lines = _on_threads(lambda job: int(np.count_nonzero(buf[job[0] : job[1]] == 10)), pairs)
        firsts = [0, *itertools.accumulate(lines)]
        table = _Rows.empty(firsts[-1], hashed)

        def fill(job: tuple[int, int, int]) -> _Chunk:
            rows, chunk = _chunk(name, data, job[0], job[1], hashed)
            table.put(job[2], rows)
            return chunk

        chunks = _on_threads(fill, [(a, b, firsts[i]) for i, (a, b) in enumerate(pairs)])
        # Close the gaps, chunk by chunk (a no-op for a file without comments or blank lines).
        n = 0
        for chunk, first in zip(chunks, firsts, strict=False):
            if first != n:
                for column in table.columns():
                    column[n : n + chunk.rows] = column[first : first + chunk.rows]
            n += chunk.rows
    scores = table.scores[:n]
    # Queries: runs of consecutive rows with the same query id bytes (chunk edges compared here).
    run_starts: list[int] = []
    run_ids: list[bytes] = []
    offset = 0
    previous: bytes | None = None
    for chunk in chunks:
        if not chunk.rows:
            continue
        for row, (a, b) in zip(chunk.new_query.tolist(), chunk.query_at.tolist(), strict=True):
            query_id = bytes(data[a:b])
            if row == 0 and query_id == previous:
                continue  # the previous chunk's last query goes on
            run_starts.append(offset + row)
            run_ids.append(query_id)
        previous = bytes(data[chunk.last_query[0] : chunk.last_query[1]])
        for row, a, b in chunk.unparsed.tolist():
            try:
                scores[offset + row] = parse_score(bytes(data[a:b]), "")
            except ValueError as error:  # the line is counted only now: counting costs a pass
                raise ValueError(f"{name}:{_line_at(data, a)}{error}") from None
        offset += chunk.rows
    segments: dict[bytes, list[_Segment]] = {}
    for query_id, first, stop in zip(run_ids, run_starts, [*run_starts[1:], n][: len(run_starts)], strict=True):
        segments.setdefault(query_id, []).append(_Segment(query_id, first, stop))
    run_id_at = next((c.run_id for c in reversed(chunks) if c.run_id), None)
    run_id = data[run_id_at[0] : run_id_at[1]].decode() if run_id_at else ""
    hashes = None if table.doc_hash is None else table.doc_hash[:n]
    newlines = sum(c.newlines for c in chunks)
    return RunColumns(name, data, scores, hashes, table.doc_start[:n], table.doc_stop[:n], segments, run_id, newlines)


def read_run(path: Source) -> dict[str, dict[str, float]]:
    """Read a TREC run file into ``{query_id: {doc_id: score}}``.

    Parameters
    ----------
    path
        The run file, or ``-`` for standard input; plain or gzip-compressed, a file or a pipe.

    Returns
    -------
    dict
        Queries in the order they first appear; each query's documents in file order.

    Raises
    ------
    ValueError
        ``file:line: ...`` for a line with fewer than 6 columns, a score that is not a number,
        is NaN or is beyond a double's range, a doc id listed twice for one query, a NUL byte,
        or bytes that are not UTF-8.
    OSError
        If the file cannot be read.
    """
    return read_run_columns(path).to_dict()


# --- the qrels reader ------------------------------------------------------------------------

# The score column of a BEIR header row. Only these names: any other word in the first row is a
# bad grade to report, not a header to skip.
_HEADER_SCORE_NAMES = frozenset({"score", "scores", "rel", "relevance", "grade", "label", "judgement", "judgment"})
# An integral grade as trec_eval's atol() reads it whole: digits, maybe a zero fraction ("1.0").
_INTEGER = re.compile(rb"([+-]?[0-9]+)(?:\.0*)?")
_INT64 = 1 << 63


def _grade(text: bytes, where: str, *, trec: bool) -> float:
    """A grade: ``int`` when integral, else ``float`` (BEIR only: TREC qrels grades are integers)."""
    whole = _INTEGER.fullmatch(text)
    if whole:
        value = int(whole.group(1))
        if not -_INT64 <= value < _INT64:
            raise ValueError(f"{where}: grade {text.decode()!r} does not fit a 64-bit integer, as trec_eval reads it")
        if value == 0 and text.startswith(b"-") and not trec:
            return -0.0  # kept exactly as written (write_beir round-trips it)
        return value
    grade = parse_score(text, where, "grade")
    if math.isinf(grade):
        raise ValueError(f"{where}: grade {text.decode()!r} is not finite")
    if trec:
        raise ValueError(
            f"{where}: grade {text.decode(errors='replace')!r} is not an integer "
            "(trec_eval reads TREC qrels grades as integers and would truncate it)"
        )
    if grade == 0 and math.copysign(1.0, grade) < 0:
        return grade  # -0.0, kept exactly as written
    return int(grade) if grade.is_integer() else grade


def _text(raw: bytes, where: str, what: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{where}: {what} {raw!r} is not valid UTF-8") from None


def read_qrels(path: Source) -> dict[str, dict[str, float]]:
    """Read relevance judgements: TREC qrels (``qid iter docid grade``) or a BEIR qrels TSV.

    The format is told by the first judgement line: three tab-separated fields is BEIR
    (``query-id  corpus-id  score``, split on tabs only, so an id may hold a space; a first row
    whose score column is ``score``, ``relevance``, ``rel``, ``grade`` or ``label`` is a header),
    anything else TREC (four whitespace-separated columns, integer grades, as trec_eval reads
    them: ``2.5`` is an error, not truncated; a line starting with ``#`` is a comment). Blank
    lines are skipped. Grades are ``int`` when integral, else ``float``, whichever reader reads
    the file. A negative grade means *judged as unjudged* (as in trec_eval) and is kept.

    Parameters
    ----------
    path
        The qrels file, or ``-``; plain or gzip-compressed.

    Returns
    -------
    dict
        ``{query_id: {doc_id: grade}}``, queries in first-appearance order.

    Raises
    ------
    ValueError
        ``file:line: ...`` for a line with the wrong number of columns, a grade that is not a
        number (or, in TREC qrels, not an integer), an id with surrounding whitespace in a BEIR
        TSV, a doc id judged twice for one query, or bytes that are not UTF-8.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "test.tsv")
    >>> _ = open(path, "w").write("query-id\\tcorpus-id\\tscore\\nq1\\td1\\t1\\nq1\\td2\\t0\\n")
    >>> read_qrels(path)
    {'q1': {'d1': 1, 'd2': 0}}
    """
    name = display_name(path)
    data = read_bytes(path)
    nul = data.find(b"\x00")
    if nul >= 0:
        raise ValueError(f"{name}:{_line_at(data, nul)}: a NUL byte (trec_eval stops reading a file there)")
    ascii_only = data.isascii()
    qrels: dict[str, dict[str, float]] = {}
    beir: bool | None = None
    for number, line in enumerate(data.split(b"\n"), start=1):
        if line.endswith(b"\r"):
            line = line[:-1]
        if beir is None:
            if not line.strip() or (line.count(b"\t") != 2 and line.startswith(b"#")):
                continue  # blank, or a TREC comment before the first judgement
            beir = line.count(b"\t") == 2
            if beir and line.rsplit(b"\t", 1)[1].strip().decode(errors="replace").lower() in _HEADER_SCORE_NAMES:
                continue  # BEIR header row; any other non-number is reported as a bad grade
            if beir and len(line.split()) == 4:
                # 'q1 0<TAB>d1<TAB>1' is TREC qrels with mixed separators, 'q 1<TAB>d1<TAB>1' a BEIR
                # row whose query id holds a space: the bytes cannot tell which, so neither is guessed.
                raise ValueError(
                    f"{name}:{number}: reads both as TREC qrels (4 whitespace-separated columns) and as a BEIR "
                    "TSV row (3 tab-separated columns); start a BEIR file with its 'query-id<TAB>corpus-id<TAB>score' "
                    "header, or separate TREC columns consistently"
                )
        if beir:
            if not line.strip():
                continue
            fields = line.split(b"\t")
            if len(fields) != 3:
                raise ValueError(f"{name}:{number}: expected 3 tab-separated columns (query-id, corpus-id, score)")
            for field, what in zip(fields[:2], ("query-id", "corpus-id"), strict=True):
                if not field or field != field.strip():
                    raise ValueError(
                        f"{name}:{number}: {what} {field.decode(errors='replace')!r} is empty or has surrounding "
                        "whitespace, so it could never match an id"
                    )
            query_field, doc_field, grade_field = fields[0], fields[1], fields[2].strip()
        else:
            fields = line.split()
            if len(fields) != 4:
                if not fields or line.startswith(b"#"):
                    continue  # blank, or a TREC comment ('#' at column 0, as trec_eval reads it)
                raise ValueError(
                    f"{name}:{number}: expected TREC qrels 'query_id iter doc_id grade' (4 columns) or BEIR "
                    f"'query-id<TAB>corpus-id<TAB>score', got {len(fields)} columns"
                )
            if line.startswith(b"#"):
                continue
            query_field, doc_field, grade_field = fields[0], fields[2], fields[3]
        if ascii_only:
            query_id, doc_id = query_field.decode(), doc_field.decode()
        else:
            query_id = _text(query_field, f"{name}:{number}", "query id")
            doc_id = _text(doc_field, f"{name}:{number}", "doc id")
        # The common grade, a few plain digits, inline; anything else through the checks that name it.
        if grade_field.isdigit() and len(grade_field) < 19:
            grade: float = int(grade_field)
        else:
            grade = _grade(grade_field, f"{name}:{number}", trec=not beir)
        docs = qrels.setdefault(query_id, {})
        if doc_id in docs:
            first = next(n for n, judged in _judgements(data, beir) if judged == (query_id, doc_id))
            raise ValueError(
                f"{name}:{number}: doc id {doc_id!r} is judged twice in query {query_id!r} (first at line {first})"
            )
        docs[doc_id] = grade
    return qrels


def _judgements(data: bytes, beir: bool) -> Iterator[tuple[int, tuple[str, str]]]:
    """``(line, (query id, doc id))`` of each judgement line, to find where a repeat began."""
    for number, line in enumerate(data.split(b"\n"), start=1):
        fields = line.rstrip(b"\r").split(b"\t") if beir else line.split()
        if len(fields) == (3 if beir else 4) and not line.startswith(b"#"):
            pair = (fields[0], fields[1]) if beir else (fields[0], fields[2])
            yield number, (pair[0].decode(errors="replace"), pair[1].decode(errors="replace"))


# --- writing ---------------------------------------------------------------------------------


def _check_id(value: object, what: str) -> str:
    if not isinstance(value, str) or not value or any(c.isspace() or c == "\x00" for c in value):
        raise ValueError(f"{what} must be a non-empty str without whitespace (got {value!r})")
    return value


def write_lines(path: PathLike, lines: Iterable[str]) -> None:
    """Write text ``lines`` to ``path`` atomically (gzip-compressed when it ends in ``.gz``, any case)."""
    from ef.io.atomic import atomic_writer  # only a writer needs it (and its imports)

    with atomic_writer(path) as raw:
        if os.fspath(path).lower().endswith(".gz"):
            with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as out:
                for line in lines:
                    out.write(line.encode())
        else:
            for line in lines:
                raw.write(line.encode())


def _real(value: object) -> bool:
    return not isinstance(value, bool | np.bool_) and isinstance(value, int | float | np.floating | np.integer)


def _check_query_id(value: object) -> str:
    query_id = _check_id(value, "a query id")
    if query_id.startswith("#"):
        raise ValueError(f"a query id must not start with '#': its line would read as a comment (got {query_id!r})")
    return query_id


def write_run(path: PathLike, run: Mapping[str, Mapping[str, float]], *, run_id: str = "ef") -> None:
    """Write ``{query_id: {doc_id: score}}`` as a TREC run file, atomically.

    Each query's documents are written in trec_eval's order (score descending, ties by doc id
    descending), ranked from 1; scores are written with ``repr`` so they read back exactly.

    Parameters
    ----------
    path
        The file to write; gzip-compressed if its name ends in ``.gz``. Replaced atomically.
    run
        The run. Scores must be real numbers, not NaN.
    run_id
        The last column of every line.

    Raises
    ------
    ValueError
        For an id that is not a non-empty str without whitespace, a score that is not a number
        or is NaN, or a query with no documents (a TREC run file cannot list a query without a line).
    """
    write_lines(path, format_run(run, run_id=run_id))


def format_run(run: Mapping[str, Mapping[str, float]], *, run_id: str = "ef") -> Iterator[str]:
    """The lines :func:`write_run` writes, the whole run checked first (the same errors).

    >>> list(format_run({"q1": {"d1": 0.5, "d2": 1.5}}, run_id="bm25"))
    ['q1 Q0 d2 1 1.5 bm25\\n', 'q1 Q0 d1 2 0.5 bm25\\n']
    """
    _check_id(run_id, "'run_id'")
    rows: list[tuple[str, list[tuple[float, str]]]] = []
    for query_id, docs in run.items():
        _check_query_id(query_id)
        if not docs:
            raise ValueError(
                f"query {query_id!r} has no documents: a TREC run file cannot hold an empty ranking "
                "(leave the query out)"
            )
        ranked = []
        for doc_id, score in docs.items():
            _check_id(doc_id, f"a doc id of query {query_id!r}")
            if not _real(score):
                raise ValueError(f"score of doc {doc_id!r} in query {query_id!r} must be a number (got {score!r})")
            if math.isnan(score):
                raise ValueError(f"score of doc {doc_id!r} in query {query_id!r} is NaN")
            ranked.append((float(score), doc_id))
        ranked.sort(key=lambda item: (item[0], item[1].encode()), reverse=True)
        rows.append((query_id, ranked))

    def lines() -> Iterator[str]:
        for query_id, ranked in rows:
            for rank, (score, doc_id) in enumerate(ranked, start=1):
                yield f"{query_id} Q0 {doc_id} {rank} {score!r} {run_id}\n"

    return lines()


def write_qrels(path: PathLike, qrels: Mapping[str, Mapping[str, float]]) -> None:
    """Write ``{query_id: {doc_id: grade}}`` as a TREC qrels file (``qid 0 docid grade``), atomically.

    Raises
    ------
    ValueError
        For an id that is empty or contains whitespace, a grade that is not a finite integer
        (trec_eval reads qrels grades as integers), or a query with no judgements (a qrels
        file cannot hold it, and dropping it would change ``-c`` averages).

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "qrels.txt")
    >>> write_qrels(path, {"q1": {"d1": 2, "d2": 0}})
    >>> read_qrels(path)
    {'q1': {'d1': 2, 'd2': 0}}
    """
    for query_id, docs in qrels.items():
        _check_query_id(query_id)
        if not docs:
            raise ValueError(f"query {query_id!r} has no judgements: a qrels file cannot hold it (leave it out)")
        for doc_id, grade in docs.items():
            _check_id(doc_id, f"a doc id of query {query_id!r}")
            if not _real(grade):
                raise ValueError(f"grade of doc {doc_id!r} in query {query_id!r} must be a number (got {grade!r})")
            if not math.isfinite(grade) or not float(grade).is_integer():
                raise ValueError(
                    f"grade of doc {doc_id!r} in query {query_id!r} must be a finite integer: TREC qrels hold "
                    f"integer grades (got {grade!r})"
                )

    def lines() -> Iterator[str]:
        for query_id, docs in qrels.items():
            for doc_id, grade in docs.items():
                yield f"{query_id} 0 {doc_id} {int(grade)}\n"

    write_lines(path, lines())
