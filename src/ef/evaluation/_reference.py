"""The run engine in plain Python: the test oracle of ``_kernel.c``, and its fallback.

Same names, same arguments, same results and same fault tuples as the compiled kernel (see
``_kernel.c`` for the contract); written for reading, not speed: lines split one by one, each
query ranked by one sort with trec_eval's order. ``ef.evaluation._hits`` uses it when the
extension cannot be imported (and says so once).
"""

from __future__ import annotations

import functools
import itertools
import math
import struct
import zlib
from collections.abc import Callable, Mapping
from typing import Any

from ef.io import numbers

__all__ = [
    "Judged", "Ranker", "build_run", "deal", "rank_mapping", "rank_ranked", "read_run", "run_text", "stack_columns",
    "trec_order", "writable",
]

Fault = tuple[Any, ...]
_SPACE = b" \t\v\f\r"  # C isspace() but the newline, which ends a line


def _utf8(text: str) -> bytes:
    """An id's bytes; a lone surrogate as "surrogatepass" writes it (no UTF-8 file holds those)."""
    return text.encode("utf-8", "surrogatepass")


def _key(doc_id: bytes, score: float) -> tuple[float, bytes]:
    return score, doc_id


def precedes(a: tuple[float, bytes], b: tuple[float, bytes]) -> bool:
    """trec_eval's order, the one comparator: score descending, then doc id descending byte-wise."""
    return a[0] > b[0] or (a[0] == b[0] and a[1] > b[1])


def _compare(a: tuple[float, bytes], b: tuple[float, bytes]) -> int:
    return -1 if precedes(a, b) else int(precedes(b, a))


def _ranked(docs: list[tuple[float, bytes]]) -> list[tuple[float, bytes]]:
    return sorted(docs, key=functools.cmp_to_key(_compare))


class Judged:
    """The judgements: ``Judged(query_ids, doc_ids_per_query)``, judgements numbered in order."""

    def __init__(self, query_ids: list[str], doc_ids: list[list[str]]) -> None:
        self.query_index = {_utf8(q): i for i, q in enumerate(query_ids)}
        if len(self.query_index) != len(query_ids):
            raise ValueError("a query id is given twice")
        self.judgement: dict[tuple[int, bytes], int] = {}
        flat = 0
        for q, docs in enumerate(doc_ids):
            for d in docs:
                self.judgement.setdefault((q, _utf8(d)), flat)
                flat += 1
        self.n_queries = len(query_ids)


def _line(
    line: bytes, number: int
) -> tuple[bytes, bytes, float, bytes, tuple[int, int], tuple[int, int]] | Fault | None:
    """One line's (query id, doc id, score, run id, doc span, query span), ``None`` when blank or a
    comment, or a fault tuple; spans are offsets within the line."""
    fields: list[tuple[int, int]] = []
    i, n = 0, len(line)
    while True:
        while i < n and line[i] in _SPACE:
            if line[i] == 13 and i + 1 < n:  # a '\r' not ending the line
                return ("cr", number)
            i += 1
        if i >= n:
            break
        start = i
        while i < n and line[i] not in _SPACE:
            if not line[i]:
                return ("nul", number)
            i += 1
        fields.append((start, i))
    if not fields or line[fields[0][0]] == ord("#"):
        return None
    if len(fields) < 6:
        return ("columns", number, len(fields))
    (q0, q1), (d0, d1), (s0, s1), (r0, r1) = fields[0], fields[2], fields[4], fields[5]
    score = numbers.strtod(line[s0:s1])  # a float, or the kernel's fault code (the same numbers)
    if isinstance(score, int):
        return ("score", number, score, s0, s1)
    for a, b in ((q0, q1), (d0, d1)):
        try:
            line[a:b].decode()
        except UnicodeDecodeError:
            return ("utf8", number, a, b)
    return line[q0:q1], line[d0:d1], score, line[r0:r1], (d0, d1), (q0, q1)


def _lines(data: bytes, first_line: int) -> list[tuple[int, int, bytes]]:
    """``(line number, offset, line)`` of every line, its ``\\n`` dropped."""
    out, at, number = [], 0, first_line
    while at < len(data):
        end = data.find(b"\n", at)
        stop = len(data) if end < 0 else end
        out.append((number, at, data[at:stop]))
        at, number = stop + 1, number + 1
    return out


def _shift(fault: Fault, offset: int) -> Fault:
    """A fault's spans as offsets in the whole buffer."""
    kind = fault[0]
    if kind == "score":
        return (*fault[:3], fault[3] + offset, fault[4] + offset)
    if kind == "utf8":
        return (*fault[:2], fault[2] + offset, fault[3] + offset)
    return fault


def deal(data: bytes | bytearray, parts: int, final: bool) -> tuple[list[bytes], int, int]:
    """The whole lines of `data` (all with `final`) dealt into `parts` by their first field (here
    its CRC-32; the kernel's own hash deals them otherwise; no field: part 0); see ``_kernel.c``."""
    if parts < 1:
        raise ValueError("parts must be positive")
    data = bytes(data)
    size = len(data) if final else data.rfind(b"\n") + 1
    dealt: list[list[bytes]] = [[] for _ in range(parts)]
    last = -1
    for _, _, line in _lines(data[:size], 0):
        first = line.lstrip(_SPACE)
        end = next((i for i, byte in enumerate(first) if byte <= 32), len(first))
        k = zlib.crc32(first[:end]) % parts if end else 0
        dealt[k].append(line + b"\n")
        if first and first[0] != ord("#"):
            last = k
    return [b"".join(lines) for lines in dealt], size, last


class Ranker:
    """``Ranker(judged, max_docs)``: ``feed(data, final, whole)`` and ``result()`` as the kernel's."""

    def __init__(self, judged: Judged, max_docs: int) -> None:
        self.judged, self.max_docs = judged, max_docs
        self.num_ret = [-1] * judged.n_queries
        self.hits: list[tuple[int, int, int]] = []
        self.seen: set[bytes] = set()
        self.line = 1
        self.run_id: bytes | None = None

    def _rank(self, rows: list[tuple[int, bytes, bytes, float, int, int, int, int]]) -> Fault | None:
        """One query's rows: (line, query id, doc id, score, doc span, query span)."""
        query_id = rows[0][1]
        if query_id in self.seen:
            return ("ungrouped", rows[0][0])
        self.seen.add(query_id)
        first: dict[bytes, int] = {}
        for line, _, doc_id, _, d0, d1, q0, q1 in rows:
            if doc_id in first:
                return ("twice", line, first[doc_id], d0, d1, q0, q1)
            first[doc_id] = line
        query = self.judged.query_index.get(query_id)
        if query is None:
            return None
        self.num_ret[query] = len(rows) if self.max_docs < 0 else min(len(rows), self.max_docs)
        order = _ranked([_key(doc_id, score) for _, _, doc_id, score, *_ in rows])
        for rank, (_, doc_id) in enumerate(order):
            judgement = self.judged.judgement.get((query, doc_id))
            if judgement is not None and (self.max_docs < 0 or rank < self.max_docs):
                self.hits.append((query, rank, judgement))
        return None

    def shares_query(self, other: Ranker) -> bool:
        return not self.seen.isdisjoint(other.seen)

    def feed(self, data: bytes | bytearray, final: bool, whole: bool) -> int | Fault:
        data = bytes(data)
        size = len(data) if final else data.rfind(b"\n") + 1
        groups: list[list[Any]] = []
        last_run_id: bytes | None = None
        pending_at, pending_line = 0, self.line
        for number, offset, line in _lines(data[:size], self.line):
            got = _line(line, number)
            if isinstance(got, tuple) and isinstance(got[0], str):
                return _shift(got, offset)
            if got is None:
                if not groups or whole:
                    pending_at, pending_line = offset + len(line) + 1, number + 1
                continue
            query_id, doc_id, score, run_id, (d0, d1), (q0, q1) = got
            row = (number, query_id, doc_id, score, d0 + offset, d1 + offset, q0 + offset, q1 + offset)
            if whole:
                groups.append([row])
            elif groups and groups[-1][0][1] == query_id:
                groups[-1].append(row)
            else:
                if groups:
                    fault = self._rank(groups.pop())
                    if fault:
                        return fault
                    self.run_id = last_run_id
                groups.append([row])
                pending_at, pending_line = offset, number
            last_run_id = run_id
        if whole:
            by_query: dict[bytes, list[Any]] = {}
            for (row,) in groups:
                by_query.setdefault(row[1], []).append(row)
            for rows in by_query.values():
                fault = self._rank(rows)
                if fault:
                    return fault
            groups = []
        elif groups and final:
            fault = self._rank(groups.pop())
            if fault:
                return fault
        if groups:
            self.line = pending_line
            return pending_at
        if last_run_id is not None:
            self.run_id = last_run_id
        self.line += data[:size].count(b"\n") + (1 if size and not data[:size].endswith(b"\n") else 0)
        return size

    def result(self) -> tuple[bytes, bytes, bytes, bytes, bytes | None]:
        def packed(values: list[int]) -> bytes:
            return struct.pack(f"{len(values)}q", *values)

        return (
            packed(self.num_ret),
            packed([h[0] for h in self.hits]),
            packed([h[1] for h in self.hits]),
            packed([h[2] for h in self.hits]),
            self.run_id,
        )


def read_run(data: bytes | bytearray) -> dict[str, dict[str, float]] | Fault:
    """The run as ``{query_id: {doc_id: score}}`` (first appearance, file order), or a fault."""
    data = bytes(data)
    run: dict[str, dict[str, float]] = {}
    for number, offset, line in _lines(data, 1):
        got = _line(line, number)
        if isinstance(got, tuple) and isinstance(got[0], str):
            return _shift(got, offset)
        if got is None:
            continue
        query_id, doc_id, score, _, (d0, d1), (q0, q1) = got
        docs = run.setdefault(query_id.decode(), {})
        if doc_id.decode() in docs:
            return ("twice", number, 0, d0 + offset, d1 + offset, q0 + offset, q1 + offset)
        docs[doc_id.decode()] = score
    return run


def _plain(score: object) -> float | None:
    """A float or int (not bool) score as a double, or ``None`` for ``convert`` to read or refuse."""
    if isinstance(score, float) or (isinstance(score, int) and not isinstance(score, bool)):
        try:
            value = float(score)
        except OverflowError:
            return None
        return value if value == value else None
    return None


def rank_mapping(
    run: Mapping[str, Mapping[str, object]],
    qrels: Mapping[str, Mapping[str, float]],
    query_ids: list[str],
    max_docs: int,
    convert: Callable[[str, str, object], float],
    bad_doc: Callable[[str, object], None],
) -> tuple[bytes, bytes, bytes, bytes]:
    """The hits of a run held in dicts; see ``_kernel.c``."""
    num_ret: list[int] = []
    hits: list[tuple[int, int, float]] = []
    for q, query_id in enumerate(query_ids):
        ranking = run.get(query_id)
        if ranking is None:
            num_ret.append(-1)
            continue
        judged = qrels[query_id]
        docs = []
        for doc_id, score in ranking.items():
            if not isinstance(doc_id, str):  # a caller's mapping may hold any key
                bad_doc(query_id, doc_id)  # type: ignore[unreachable]
            value = _plain(score)
            if value is None:
                value = convert(query_id, doc_id, score)
            docs.append(_key(_utf8(doc_id), value))
        num_ret.append(len(docs) if max_docs < 0 else min(len(docs), max_docs))
        for rank, (_, key) in enumerate(_ranked(docs)):
            grade = judged.get(key.decode("utf-8", "surrogatepass"))
            if grade is not None and (max_docs < 0 or rank < max_docs):
                hits.append((q, rank, float(grade)))
    return (
        struct.pack(f"{len(num_ret)}q", *num_ret),
        struct.pack(f"{len(hits)}q", *[h[0] for h in hits]),
        struct.pack(f"{len(hits)}q", *[h[1] for h in hits]),
        struct.pack(f"{len(hits)}d", *[h[2] for h in hits]),
    )


# --- fusion's columns -------------------------------------------------------------------------


def _ints(values: list[int]) -> bytes:
    return struct.pack(f"{len(values)}q", *values)


def _unpack(data: Any, kind: str) -> list[Any]:
    """8-byte numbers from bytes or any buffer (a numpy array: ``len`` would count its items)."""
    return list(struct.unpack(f"{memoryview(data).nbytes // 8}{kind}", data))


def stack_columns(runs: list[Any]) -> tuple[Any, ...] | None:
    """The lists, entries and (query, doc) pairs of `runs`; see ``_kernel.c``. ``None`` unless every
    run is a dict of dicts of str ids and float scores (exact types)."""
    for run in runs:
        if type(run) is not dict or any(type(q) is not str or type(docs) is not dict for q, docs in run.items()):
            return None
        if any(type(d) is not str or type(s) is not float for docs in run.values() for d, s in docs.items()):
            return None
    query_index: dict[str, int] = {}
    lists = [
        (r, query_index.setdefault(q, len(query_index)), docs) for r, run in enumerate(runs) for q, docs in run.items()
    ]
    at = [0]
    for _, _, docs in lists:
        at.append(at[-1] + len(docs))
    doc, score = [0] * at[-1], [0.0] * at[-1]
    ordered = True
    ids: list[str] = []
    pair_query: list[int] = []
    pair_head: list[int] = []
    for q in range(len(query_index)):
        pairs: dict[str, int] = {}
        for k, (_, query, docs) in enumerate(lists):
            if query != q:
                continue
            for i, (doc_id, value) in enumerate(docs.items(), start=at[k]):
                if doc_id not in pairs:
                    pairs[doc_id] = len(ids)
                    ids.append(doc_id)
                    pair_query.append(q)
                    pair_head.append(int.from_bytes(_utf8(doc_id)[:8].ljust(8, b"\0"), "big"))
                doc[i], score[i] = pairs[doc_id], value
                if i > at[k]:
                    before, now = (score[i - 1], pair_head[doc[i - 1]]), (score[i], pair_head[doc[i]])
                    ordered = ordered and (before[0] > now[0] or (before[0] == now[0] and before[1] > now[1]))
    return (
        list(query_index), ids, _ints(pair_query), struct.pack(f"{len(pair_head)}Q", *pair_head),
        _ints([r for r, _, _ in lists]), _ints([q for _, q, _ in lists]),
        _ints([len(docs) for _, _, docs in lists]), _ints(doc), struct.pack(f"{len(score)}d", *score), ordered,
    )


def stack_text(texts: list[Any]) -> tuple[Any, ...] | None:
    """:func:`stack_columns` of the runs that TREC texts hold, as :func:`read_run` reads them;
    ``None`` where read_run finds a fault or a query's lines come back after another query's."""
    runs = []
    for text in texts:
        run = read_run(text)
        if isinstance(run, tuple):
            return None
        rows = [_line(line, number) for number, _, line in _lines(bytes(text), 1)]
        lists = [query for query, _ in itertools.groupby(row[0] for row in rows if isinstance(row, tuple))]
        if len(lists) != len(set(lists)):
            return None
        runs.append(run)
    return stack_columns(runs)


def trec_order(group: bytes, score: bytes, doc: bytes, heads: bytes, ids: list[str] | None) -> bytes:
    """The permutation ordering entries by group, then trec_eval's order: a doc's tie key is its
    id (codes into `ids`), or with `ids` None its head; equal entries keep their order."""
    groups, scores, docs = _unpack(group, "q"), _unpack(score, "d"), _unpack(doc, "q")
    head = _unpack(heads, "Q")

    def key(i: int) -> tuple[float, bytes | int]:
        return scores[i], _utf8(ids[docs[i]]) if ids is not None else head[docs[i]]

    def compare(i: int, j: int) -> int:
        if groups[i] != groups[j]:
            return -1 if groups[i] < groups[j] else 1
        if precedes(key(i), key(j)):  # type: ignore[arg-type]
            return -1
        if precedes(key(j), key(i)):  # type: ignore[arg-type]
            return 1
        return -1 if i < j else int(i > j)

    return _ints(sorted(range(len(groups)), key=functools.cmp_to_key(compare)))


def build_run(
    queries: list[str], bounds: bytes, ids: list[str], doc: bytes, score: bytes
) -> dict[str, dict[str, float]]:
    """``{queries[k]: {ids[doc[i]]: score[i] for i in bounds[k]..bounds[k + 1]}}``."""
    edges, docs, scores = _unpack(bounds, "q"), _unpack(doc, "q"), _unpack(score, "d")
    return {
        query: {ids[docs[i]]: scores[i] for i in range(edges[k], edges[k + 1])} for k, query in enumerate(queries)
    }


def rank_ranked(
    ks: bytes, bounds: bytes, ids: list[str], doc: bytes, judged: list[dict[str, float]], max_docs: int
) -> tuple[bytes, bytes, bytes, bytes]:
    """rank_mapping's result for a run ranked already: query i is the run's query ``ks[i]`` (-1:
    absent), each entry's rank its place in ``bounds[k]:bounds[k + 1]``; see ``_columns.c``."""
    edges, docs = _unpack(bounds, "q"), _unpack(doc, "q")
    num_ret: list[int] = []
    hits: list[tuple[int, int, float]] = []
    for i, k in enumerate(_unpack(ks, "q")):
        every = [] if k < 0 else [ids[c] for c in docs[edges[k] : edges[k + 1]]]
        for doc_id in every:
            if not isinstance(doc_id, str):
                raise TypeError(f"a RankedRun's doc ids must be str (got {doc_id!r})")
        entries = every[: None if max_docs < 0 else max_docs]
        num_ret.append(-1 if k < 0 else len(entries))
        hits += [(i, rank, float(judged[i][d])) for rank, d in enumerate(entries) if d in judged[i]]
    return (
        struct.pack(f"{len(num_ret)}q", *num_ret),
        struct.pack(f"{len(hits)}q", *[h[0] for h in hits]),
        struct.pack(f"{len(hits)}q", *[h[1] for h in hits]),
        struct.pack(f"{len(hits)}d", *[h[2] for h in hits]),
    )


def _writable(text: object, query: bool) -> bool:
    """An id write_run accepts: a non-empty str, UTF-8 encodable, with no TREC separator or NUL
    (a query id not starting with '#')."""
    if type(text) is not str or not text or (query and text.startswith("#")):
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        return False
    return not any(c in " \t\n\r\v\f\0" for c in text)


def writable(ids: list[str], query: bool) -> bool:
    """Whether write_run accepts every id of `ids` (as query ids with `query`)."""
    return all(_writable(i, query) for i in ids)


def run_text(
    names: list[str], bounds: Any, ids: list[str], doc: Any, score: Any, run_id: str, json: Any
) -> list[str] | None:
    """The TREC lines of entries in trec_eval's order, one str per query; ``None`` where an id is
    not one write_run accepts or a score is not finite. Each score is written as its repr (the
    kernel reads the digits from `json`, orjson's text of the scores, and checks them)."""
    edges, docs, scores = _unpack(bounds, "q"), _unpack(doc, "q"), _unpack(score, "d")
    out = []
    for k, name in enumerate(names):
        if not _writable(name, True):
            return None
        lines = []
        for rank, i in enumerate(range(edges[k], edges[k + 1]), start=1):
            if not 0 <= docs[i] < len(ids):
                raise ValueError(f"doc code {docs[i]} is out of range")
            if not _writable(ids[docs[i]], False) or not math.isfinite(scores[i]):
                return None
            lines.append(f"{name} Q0 {ids[docs[i]]} {rank} {scores[i]!r} {run_id}\n")
        out.append("".join(lines))
    return out
