"""A run held as flat arrays in trec_eval's order: what :func:`ef.fusion.fuse` returns.

A :class:`RankedRun` is a read-only ``{query_id: {doc_id: score}}`` mapping, so everything in ef
that takes a run takes it (``evaluate_run``, ``ef.compare``, ``write_run`` ...), but nothing is
made per entry until it is asked for: a query's documents become a read-only mapping when the
query is looked up, :meth:`RankedRun.to_dict` makes the whole run a dict of dicts (what
``json.dumps`` or pytrec_eval need), and ``write_run`` writes the arrays as text directly. At
10,000 queries of 2,000 fused docs, the dicts alone cost about what reading the runs did.

>>> import numpy as np
>>> ids, doc, score = ["d1", "d2", "d9"], np.array([1, 0, 2]), np.array([0.9, 0.5, 2.0])
>>> run = RankedRun(("q1", "q2"), np.array([0, 2, 3]), ids, doc, score)
>>> run["q1"]
mappingproxy({'d2': 0.9, 'd1': 0.5})
>>> run == {"q1": {"d2": 0.9, "d1": 0.5}, "q2": {"d9": 2.0}}, len(run), "q3" in run
(True, 2, False)
>>> run.to_dict()
{'q1': {'d2': 0.9, 'd1': 0.5}, 'q2': {'d9': 2.0}}
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import InitVar, dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # numpy is imported by whoever holds the arrays; importing this module loads none
    import numpy as np
    import numpy.typing as npt

__all__ = ["RankedRun"]


@dataclass(frozen=True, eq=False)
class RankedRun(Mapping[str, Mapping[str, float]]):
    """Query ``queries[k]`` holds entries ``bounds[k]:bounds[k + 1]``: doc ``ids[doc[i]]`` with ``score[i]``.

    Each query's entries are in trec_eval's order (score descending, then doc id descending,
    byte-wise) and name each document once, and ``write_run`` ranks them in that order:
    :func:`ef.fusion.fuse` makes them so, and a run made by hand is checked for it (a pass in
    Python over its entries). The arrays are kept read-only, and those of a run made by hand are
    copied, as is its list of ids, so that a caller's later change cannot undo the checks; each
    query's mapping, once made, is kept. Equal to any mapping with the same queries,
    doc ids and scores. For pandas, make a frame from ``to_dict()``: ``DataFrame(run)`` reads any
    mapping that is not a dict as a list of its keys.

    Raises
    ------
    ValueError
        For bounds that do not rise from 0 to the number of entries, a doc code out of range, a
        query id given twice, `doc` and `score` of different lengths, a non-finite score, or a
        query's entries out of trec_eval's order or naming a doc twice.
    TypeError
        For a query or doc id that is not a str, or an array a cast would change: `bounds` or
        `doc` not of integers, `score` not of real numbers (bool, str, object, complex).
    """

    queries: tuple[str, ...]
    bounds: npt.NDArray[np.int64]
    ids: list[str]
    doc: npt.NDArray[np.int64]
    score: npt.NDArray[np.float64]
    _in_order: InitVar[bool] = False  # True only where ef made the entries in order (fusion, a pickle)
    _index: dict[str, int] = field(init=False, repr=False)
    _made: dict[str, Mapping[str, float]] = field(init=False, repr=False)

    def __post_init__(self, _in_order: bool) -> None:
        import numpy as np

        def frozen(name: str, dtype: type) -> Any:
            given = np.asarray(getattr(self, name))
            # The cast below would truncate 1.5 to 1, read '1.0' as 1.0 and True as 1: refuse instead
            # (an empty list comes as float64 and is taken).
            if given.size and given.dtype.kind not in ("iu" if dtype is np.int64 else "iuf"):
                kind = "integers" if dtype is np.int64 else "real numbers"
                raise TypeError(f"'{name}' must hold {kind} (got an array of {given.dtype})")
            # A run made by hand keeps copies (checked once, a caller's later change cannot reach
            # them); ef.fusion's arrays are its own.
            view: Any = (np.ascontiguousarray(given, dtype=dtype) if _in_order else np.array(given, dtype=dtype)).view()
            view.flags.writeable = False  # a view: the caller's own array stays as it was
            object.__setattr__(self, name, view)
            if view.ndim != 1:
                raise ValueError(f"'{name}' must be one-dimensional (got shape {view.shape})")
            return view

        bounds, doc, score = frozen("bounds", np.int64), frozen("doc", np.int64), frozen("score", np.float64)
        object.__setattr__(self, "queries", tuple(self.queries))
        object.__setattr__(self, "ids", self.ids if _in_order and type(self.ids) is list else list(self.ids))
        if len(doc) != len(score):
            raise ValueError(f"'doc' and 'score' must have one value per entry (got {len(doc)} and {len(score)})")
        rise = len(bounds) == len(self.queries) + 1 and bounds[0] == 0 and bounds[-1] == len(doc)
        if not rise or (np.diff(bounds) < 0).any():
            raise ValueError(f"'bounds' must rise from 0 to the number of entries ({len(doc)}), one more value "
                             f"than 'queries' ({len(self.queries)})")
        if len(doc) and (doc.min() < 0 or doc.max() >= len(self.ids)):
            raise ValueError(f"'doc' must hold codes into 'ids' (0 to {len(self.ids) - 1})")
        index = {query_id: k for k, query_id in enumerate(self.queries)}
        if len(index) != len(self.queries):
            raise ValueError("'queries' must name each query once")
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_made", {})
        if not _in_order:
            self._check_order()

    def _check_order(self) -> None:
        """Each query's entries ranked in trec_eval's order, each doc once (a run made by hand)."""
        import numpy as np

        for wrong in (query_id for query_id in self.queries if not isinstance(query_id, str)):
            raise TypeError(f"'queries' must hold str query ids (got {wrong!r}, {type(wrong).__name__})")
        for wrong in (doc_id for doc_id in self.ids if not isinstance(doc_id, str)):
            raise TypeError(f"'ids' must hold str doc ids (got {wrong!r}, {type(wrong).__name__})")
        if not np.isfinite(self.score).all():
            raise ValueError("'score' must hold finite numbers (a TREC run file ranks no NaN or infinity)")
        doc, score = self.doc.tolist(), self.score.tolist()
        for k, query_id in enumerate(self.queries):
            seen: set[str] = set()
            before: tuple[float, bytes] | None = None
            for i in range(int(self.bounds[k]), int(self.bounds[k + 1])):
                doc_id = self.ids[doc[i]]
                key = (score[i], doc_id.encode("utf-8", "surrogatepass"))
                if doc_id in seen:
                    raise ValueError(f"query {query_id!r} lists doc {doc_id!r} twice")
                if before is not None and key > before:
                    raise ValueError(f"query {query_id!r} is not in trec_eval's order (score descending, then doc "
                                     f"id descending): doc {doc_id!r} at entry {i} ranks ahead of the one before it")
                seen.add(doc_id)
                before = key

    def __getitem__(self, query_id: str) -> Mapping[str, float]:
        made = self._made.get(query_id)
        if made is None:
            k = self._index[query_id]  # a KeyError, as a dict's
            made = MappingProxyType(self._dicts([query_id], self.bounds[k : k + 2])[query_id])
            self._made[query_id] = made
        return made

    def __contains__(self, query_id: object) -> bool:
        return query_id in self._index

    def __iter__(self) -> Iterator[str]:
        return iter(self.queries)

    def __len__(self) -> int:
        return len(self.queries)

    def __repr__(self) -> str:
        return f"RankedRun({self.to_dict()!r})"

    def __reduce__(self) -> tuple[type[RankedRun], tuple[Any, ...]]:  # the made mappings are not pickled
        return RankedRun, (self.queries, self.bounds, self.ids, self.doc, self.score, True)

    def to_dict(self) -> dict[str, dict[str, float]]:
        """The run as a new ``{query_id: {doc_id: score}}`` dict of dicts, each query's docs in trec_eval's order."""
        return self._dicts(list(self.queries), self.bounds)

    def _dicts(self, queries: list[str], bounds: npt.NDArray[np.int64]) -> dict[str, dict[str, float]]:
        from ef.evaluation._engine import engine  # the compiled engine makes the dicts in one pass

        return engine.build_run(queries, bounds, self.ids, self.doc, self.score)
