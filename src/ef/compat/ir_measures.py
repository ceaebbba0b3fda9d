"""ir_measures' ``calc_aggregate``, ``iter_calc``, ``parse_measure`` and measure objects, computed by ef:
change ``import ir_measures`` (or ``from ir_measures import ...``) to ``from ef.compat import ir_measures``.

ir_measures' conventions are kept: ``(measures, qrels, run)`` in that order; qrels and runs as
mappings, paths, DataFrames or iterables of :class:`Qrel` / :class:`ScoredDoc`; a judged query the
run lacks scores 0 for every measure (``NumRel`` and ``NumQ`` too, where trec_eval ``-c`` would
count its judgements) and counts in the means; aggregates are means, sums for counts such as
``NumRet``; values are floats, keyed by the measure objects given.

>>> from ef.compat.ir_measures import P, nDCG, calc_aggregate, iter_calc
>>> qrels, run = {"q1": {"d1": 1}, "q2": {"d2": 1}}, {"q1": {"d1": 1.0, "d3": 0.5}}
>>> calc_aggregate([nDCG@10, P@1], qrels, run)
{nDCG@10: 0.5, P@1: 0.5}
>>> sorted(iter_calc([P@1], qrels, run))
[Metric(query_id='q1', measure=P@1, value=1.0), Metric(query_id='q2', measure=P@1, value=0.0)]
>>> P(rel=2)@5, nDCG(judged_only=True)@10
(P(rel=2)@5, nDCG(judged_only=True)@10)
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from ef.measures import parse_measure as _parse

__all__ = [
    "AP",
    "ERR",
    "MAP",
    "MRR",
    "NDCG",
    "RBP",
    "RR",
    "BPref",
    "Bpref",
    "Evaluator",
    "IPrec",
    "Judged",
    "Measure",
    "Metric",
    "NumQ",
    "NumRel",
    "NumRelRet",
    "NumRet",
    "P",
    "Precision",
    "Qrel",
    "R",
    "RPrec",
    "Recall",
    "Rprec",
    "ScoredDoc",
    "SetAP",
    "SetF",
    "SetP",
    "SetR",
    "Success",
    "calc_aggregate",
    "evaluator",
    "infAP",
    "iter_calc",
    "nDCG",
    "parse_measure",
    "read_trec_qrels",
    "read_trec_run",
]


class Qrel(NamedTuple):
    """One judgement, as ir_measures' ``Qrel``."""

    query_id: str
    doc_id: str
    relevance: int
    iteration: str = "0"


class ScoredDoc(NamedTuple):
    """One retrieved document, as ir_measures' ``ScoredDoc``."""

    query_id: str
    doc_id: str
    score: float


class Metric(NamedTuple):
    """One query's value of one measure, as ir_measures' ``Metric``."""

    query_id: str
    measure: Measure
    value: float


class Measure:
    """An ir_measures measure: ``nDCG``, ``nDCG@10``, ``P(rel=2)@5``; prints and compares as ir_measures'.

    ``@`` sets the cutoff and calling sets parameters, each giving a new measure; the name is read
    by :func:`ef.measures.parse_measure` when the measure is built, so a measure ef cannot compute
    fails there, with ef's message.
    """

    __slots__ = ("_cutoff", "_name", "_params", "_text")

    def __init__(self, name: str, params: tuple[tuple[str, Any], ...] = (), cutoff: float | None = None) -> None:
        self._name, self._params, self._cutoff = name, params, cutoff
        text = name
        if params:
            text += "(" + ",".join(f"{key}={value!r}" for key, value in params) + ")"
        if cutoff is not None:
            text += f"@{cutoff}"
        self._text = text

    def __matmul__(self, cutoff: float) -> Measure:
        return Measure(self._name, self._params, cutoff)

    def __call__(self, **params: Any) -> Measure:
        return Measure(self._name, tuple({**dict(self._params), **params}.items()), self._cutoff)

    def __str__(self) -> str:
        return self._text

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        return str(other) == self._text if isinstance(other, Measure | str) else NotImplemented

    def __hash__(self) -> int:
        return hash(self._text)

    def __lt__(self, other: Measure) -> bool:
        return self._text < str(other)


# ir_measures' names, spelled as ir_measures spells them (the mixed case is the API being mirrored).
P = Measure("P")
R = Measure("R")
nDCG = Measure("nDCG")  # noqa: N816
AP = Measure("AP")
RR = Measure("RR")
Success = Measure("Success")
Judged = Measure("Judged")
ERR = Measure("ERR")
Rprec = Measure("Rprec")
Bpref = Measure("Bpref")
infAP = Measure("infAP")  # noqa: N816
NumQ = Measure("NumQ")
NumRet = Measure("NumRet")
NumRel = Measure("NumRel")
NumRelRet = Measure("NumRelRet")
SetP = Measure("SetP")
SetR = Measure("SetR")
SetF = Measure("SetF")
SetAP = Measure("SetAP")
IPrec = Measure("IPrec")
RBP = Measure("RBP")
# ir_measures' aliases: the same measure objects, so they print as ir_measures prints them (MRR@10 is RR@10).
MAP = AP
MRR = RR
NDCG = nDCG
BPref = Bpref
RPrec = Rprec
Precision = P
Recall = R


def read_trec_qrels(file: Any) -> Iterator[Qrel]:
    """:class:`Qrel` rows of a TREC qrels file (a path, ``.gz`` too), its text, or an open file, as
    ``ir_measures.read_trec_qrels``.

    >>> list(read_trec_qrels("q1 0 d1 2\\nq1 0 d2 0\\n"))
    [Qrel(query_id='q1', doc_id='d1', relevance=2, iteration='0'), Qrel(query_id='q1', doc_id='d2', relevance=0, \
iteration='0')]
    """
    from ef.io._source import text_bytes
    from ef.io.trec import parse_qrels, read_qrels

    qrels = read_qrels(file) if _is_path(file) else parse_qrels(*text_bytes(file, "qrels", "file"))
    for query_id, judged in qrels.items():
        for doc_id, grade in judged.items():
            yield Qrel(query_id, doc_id, grade, "0")  # type: ignore[arg-type]  # TREC qrels grades are int


def read_trec_run(file: Any) -> Iterator[ScoredDoc]:
    """:class:`ScoredDoc` rows of a TREC run file (a path, ``.gz`` too), its text, or an open file, as
    ``ir_measures.read_trec_run``.

    >>> list(read_trec_run("q1 Q0 d1 1 2.5 bm25\\n"))
    [ScoredDoc(query_id='q1', doc_id='d1', score=2.5)]
    """
    from ef.evaluation._hits import parse_run, read_run
    from ef.io._source import text_bytes

    run = read_run(file) if _is_path(file) else parse_run(*text_bytes(file, "run", "file"))
    for query_id, scored in run.items():
        for doc_id, score in scored.items():
            yield ScoredDoc(query_id, doc_id, score)


def _is_path(file: Any) -> bool:
    """As ir_measures: a str with a newline is the text itself, any other str (or a path) a file."""
    return isinstance(file, os.PathLike) or (isinstance(file, str) and "\n" not in file)


_MIN_GEO_MEAN = 1e-5  # trec_eval's floor before a geometric mean
_FORM = re.compile(r"([A-Za-z_]+)(?:\(([^()]*)\))?(?:@(.+))?")


def parse_measure(text: str) -> Measure:
    """The measure written `text` (``"nDCG@10"``, ``"P(rel=2)@5"``), checked by ef's parser.

    >>> parse_measure("P(rel=2)@5") == P(rel=2)@5
    True
    >>> parse_measure("IPrec@0.5") == IPrec@0.5
    True
    """
    _parse(text)  # ef's message for a measure it does not compute
    match = _FORM.fullmatch(text)
    if match is None:
        raise ValueError(f"measure {text!r}: not an ir_measures measure name")
    name, args, cutoff = match.groups()
    params = tuple((key.strip(), _value(value.strip())) for key, _, value in
                   (item.partition("=") for item in args.split(","))) if args else ()
    # IPrec's "cutoff" is a recall level (IPrec@0.5), as ir_measures writes it; the others' are ranks.
    return Measure(name, params, _value(cutoff) if cutoff is not None else None)


def _value(text: str) -> Any:
    if text in ("True", "False"):
        return text == "True"
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text.strip("'\"")


def _measures(measures: Iterable[Measure | str]) -> list[Measure]:
    if isinstance(measures, Measure | str):
        raise TypeError(f"'measures' must be a list of measures, not one measure (got {measures!r})")
    out = [m if isinstance(m, Measure) else parse_measure(m) for m in measures]
    for m in out:
        _parse(str(m))  # refused here, with ef's message, before any scoring
    return list(dict.fromkeys(out))  # a measure given twice (RR and its alias MRR) is one, as ir_measures


def _plain(qrels: Any, run: Any) -> tuple[dict[str, dict[str, Any]], dict[str, dict[str, Any]]]:
    """Both inputs as mappings, whatever form ir_measures would take (paths, frames, iterables)."""
    from ef.evaluation import _inputs, _run
    from ef.evaluation.scoring import load_run_and_qrels

    if isinstance(run, list | tuple) and not run:  # no ScoredDoc: a run of no query, as ir_measures reads it
        run = {}
    given_run, given_qrels = _inputs.normalise(run, qrels)
    if isinstance(given_run, Mapping) and not given_run:
        # ir_measures scores a run of no query 0 on every judged query; evaluate_run refuses it.
        return {q: dict(d) for q, d in _run._load_qrels(given_qrels).items()}, {}
    plain_run, plain_qrels = load_run_and_qrels(given_run, given_qrels)
    as_dict = plain_run.to_dict() if hasattr(plain_run, "to_dict") else plain_run
    return {q: dict(d) for q, d in plain_qrels.items()}, {q: dict(d) for q, d in as_dict.items()}


def _scores(measures: list[Measure], qrels: Any, run: Any) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """Per query and aggregated, with ir_measures' convention: a judged query the run lacks scores 0
    for every measure (NumRel and NumQ too), and counts in the means."""
    from ef.evaluation import evaluate_run

    qrels, run = _plain(qrels, run)
    names = [str(m) for m in measures]
    per_query: dict[str, dict[str, float]] = {q: {} for q in sorted(qrels, key=str.encode)}
    # A query whose judgements are empty ({"q2": {}}) scores 0 here, as in ir_measures, but evaluate_run
    # leaves it out: asked of such queries alone, it raised "no query to evaluate".
    if any(len(qrels.get(q, ())) for q in run):
        report = evaluate_run(run=run, qrels=qrels, measures=names, missing="skip")
        per_query.update((q, dict(values)) for q, values in report.per_query.items())
    zeros = dict.fromkeys(names, 0.0)
    rows = {q: {n: float(v) for n, v in (values or zeros).items()} for q, values in per_query.items()}
    aggregate: dict[str, float] = {}
    n = len(rows)
    for name in names:
        values = [row[name] for row in rows.values()]
        how = _parse(name).spec.aggregate
        if how in ("sum", "count"):
            aggregate[name] = float(sum(values))
        elif how == "geometric":
            aggregate[name] = math.exp(sum(math.log(max(v, _MIN_GEO_MEAN)) for v in values) / n)
        else:
            aggregate[name] = sum(values) / n
    return rows, aggregate


def calc_aggregate(measures: Iterable[Measure | str], qrels: Any, run: Any) -> dict[Measure, float]:
    """``{measure: value}`` over every judged query, as ``ir_measures.calc_aggregate``."""
    chosen = _measures(measures)
    _, aggregate = _scores(chosen, qrels, run)
    return {m: aggregate[str(m)] for m in chosen}


def iter_calc(measures: Iterable[Measure | str], qrels: Any, run: Any) -> Iterator[Metric]:
    """One :class:`Metric` per (judged query, measure), as ``ir_measures.iter_calc``."""
    chosen = _measures(measures)
    rows, _ = _scores(chosen, qrels, run)
    for query_id, values in rows.items():
        for m in chosen:
            yield Metric(query_id, m, values[str(m)])


class Evaluator:
    """`measures` against `qrels`, for several runs, as the evaluator ``ir_measures.evaluator`` returns.

    >>> scorer = evaluator([P@1], {"q1": {"d1": 1}})
    >>> scorer.calc_aggregate({"q1": {"d1": 1.0}}), scorer.calc_aggregate({"q1": {"d2": 1.0}})
    ({P@1: 1.0}, {P@1: 0.0})
    """

    def __init__(self, measures: Iterable[Measure | str], qrels: Any) -> None:
        self.measures = _measures(measures)
        # an iterator of Qrel (read_trec_qrels) is read once, for every run to come
        self.qrels = list(qrels) if isinstance(qrels, Iterator) else qrels

    def calc_aggregate(self, run: Any) -> dict[Measure, float]:
        """As :func:`calc_aggregate` of these measures and qrels."""
        return calc_aggregate(self.measures, self.qrels, run)

    def iter_calc(self, run: Any) -> Iterator[Metric]:
        """As :func:`iter_calc` of these measures and qrels."""
        return iter_calc(self.measures, self.qrels, run)


def evaluator(measures: Iterable[Measure | str], qrels: Any) -> Evaluator:
    """An :class:`Evaluator` of `measures` against `qrels`, as ``ir_measures.evaluator``."""
    return Evaluator(measures, qrels)
