"""pytrec_eval's ``RelevanceEvaluator``, computed by ef: change ``import pytrec_eval`` to
``from ef.compat import pytrec_eval`` and nothing else.

pytrec_eval's conventions are kept: the qrels come first, measures are trec_eval's ``-m`` forms
(``"map"``, ``"P.5,10"``, ``"ndcg_cut"`` for its default cutoffs, ``"official"``), every value is a
float, and only the queries both judged and in the run are scored (a judged query the run lacks is
left out, as trec_eval without ``-c``).

>>> from ef.compat import pytrec_eval
>>> evaluator = pytrec_eval.RelevanceEvaluator({"q1": {"d1": 1}, "q2": {"d2": 1}}, {"P.1", "num_ret"})
>>> evaluator.evaluate({"q1": {"d1": 0.9, "d3": 0.5}})
{'q1': {'num_ret': 2.0, 'P_1': 1.0}}

As in pytrec_eval, a query's ``gm_map`` and ``gm_bpref`` are the logarithm of its value (floored at
1e-5), which :func:`compute_aggregated_measure` turns into trec_eval's geometric mean:

>>> per_query = pytrec_eval.RelevanceEvaluator({"q1": {"d1": 1}, "q2": {"d2": 1}}, {"gm_map"}).evaluate(
...     {"q1": {"d1": 1.0}, "q2": {"d9": 1.0, "d2": 0.5}})
>>> per_query["q1"]["gm_map"], round(per_query["q2"]["gm_map"], 4)
(0.0, -0.6931)
>>> pytrec_eval.compute_aggregated_measure("gm_map", [v["gm_map"] for v in per_query.values()])
0.7071067811865476
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping

from ef.measures import MEASURES, NICKNAMES, resolve

__all__ = [
    "RelevanceEvaluator",
    "compute_aggregated_measure",
    "parse_qrel",
    "parse_run",
    "supported_measures",
    "supported_nicknames",
]

_MIN_GEO_MEAN = 1e-5  # trec_eval's floor before the logarithm of a gm_ measure
_BARE_KEYS = frozenset({"set_F", "11pt_avg"})  # keyed by the family alone, whatever the parameters

supported_measures = frozenset(name for name, family in MEASURES.items() if family.trec)
"""The trec_eval measure families, as pytrec_eval names its ``supported_measures``."""
supported_nicknames = frozenset(NICKNAMES)
"""``official``, ``all_trec`` and ``set``."""


class RelevanceEvaluator:
    """Score runs against `query_relevance` with `measures`, as ``pytrec_eval.RelevanceEvaluator``.

    Parameters
    ----------
    query_relevance
        ``{query_id: {doc_id: grade}}``.
    measures
        trec_eval ``-m`` forms (a set, as pytrec_eval takes them): ``"map"``, ``"P.5,10"``,
        ``"ndcg_cut"``, ``"official"`` … ; any spelling ef reads works too (``"ndcg@10"``).
    relevance_level
        The lowest grade that counts as relevant (trec_eval ``-l``).
    judged_docs_only_flag
        trec_eval ``-J``: unjudged documents are removed from each ranking first.
    """

    def __init__(
        self,
        query_relevance: Mapping[str, Mapping[str, int]],
        measures: Iterable[str],
        relevance_level: int = 1,
        judged_docs_only_flag: bool = False,
    ) -> None:
        if not isinstance(query_relevance, Mapping):
            raise TypeError(f"'query_relevance' must be a mapping of query ids to judgements (got "
                            f"{type(query_relevance).__name__})")
        if isinstance(measures, str):
            raise TypeError(f"'measures' must be a set of measure names, not a str (got {measures!r})")
        self.qrels = {q: dict(docs) for q, docs in query_relevance.items()}
        # trec_eval's reading of a -m list: each measure once, in its output order; relstring is text.
        self.measures = [(name, m) for name, m in resolve(_combined(measures), trec_eval=True)
                         if m.spec.aggregate != "none"]
        self.relevance_level = relevance_level
        self.judged_docs_only_flag = bool(judged_docs_only_flag)

    def evaluate(self, scores: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
        """``{query_id: {measure: value}}`` for each query both in `scores` and judged."""
        from ef.evaluation import evaluate_run

        # A query judged by no document ({}) is not judged, as in trec_eval's qrels: pytrec_eval leaves it out.
        run = {q: dict(docs) for q, docs in scores.items() if self.qrels.get(q)}
        if self.judged_docs_only_flag:
            run = {q: {d: s for d, s in docs.items() if self.qrels[q].get(d, -1) >= 0} for q, docs in run.items()}
        if not run:
            return {}
        qrels = {q: self.qrels[q] for q in run}
        names = [name for name, _ in self.measures]
        report = evaluate_run(run, qrels, names, missing="skip", relevance_level=self.relevance_level)
        # pytrec_eval hands out trec_eval's per-query value of a geometric mean, the logarithm, which
        # its compute_aggregated_measure exponentiates; ef's per-query value is the plain one.
        logged = {name for name, m in self.measures if m.spec.aggregate == "geometric"}
        # pytrec_eval's trec_eval 9 keys set_F.0.5 "set_F" and 11pt_avg.X "11pt_avg"; trec_eval 10 keeps the text.
        keys = {name: m.family if m.family in _BARE_KEYS else name for name, m in self.measures}
        return {q: {keys[name]: math.log(max(float(value), _MIN_GEO_MEAN)) if name in logged else float(value)
                    for name, value in values.items()} for q, values in report.per_query.items()}


_PARAMETERS = re.compile(r"([A-Za-z0-9_]+?)[._]([0-9]+(?:\.[0-9]+)?(?:,[0-9]+(?:\.[0-9]+)?)*)")


def _combined(measures: Iterable[str]) -> list[str]:
    """The measures as pytrec_eval hands them to trec_eval: nicknames expanded, and the parameters a
    family is given anywhere in the set (``P.5``, ``P_10``, ``P.20,30``) joined into one ``-m``,
    to which the family named alone adds nothing; trec_eval's command line would keep only the first.

    >>> _combined({"P.5", "P_10", "P", "map", "ndcg@10"})
    ['P.10,5', 'map', 'ndcg@10']
    """
    expanded: list[str] = []
    for text in measures:
        expanded.extend(NICKNAMES.get(text, (text,)))
    params: dict[str, set[str]] = {}
    others: set[str] = set()
    for text in expanded:
        match = None if text in supported_measures else _PARAMETERS.fullmatch(text)
        if text in supported_measures:
            params.setdefault(text, set())
        elif match is not None and match.group(1) in supported_measures:
            params.setdefault(match.group(1), set()).update(match.group(2).split(","))
        else:  # another spelling (ndcg@10, utility.1,-1,0,0): as it is
            others.add(text)
    joined = {f"{family}.{','.join(sorted(values))}" if values else family for family, values in params.items()}
    return sorted(joined | others)


def compute_aggregated_measure(measure: str, values: Iterable[float]) -> float:
    """The summary of `measure` over per-query `values`, as ``pytrec_eval.compute_aggregated_measure``.

    By the name, as pytrec_eval: a sum for ``num_*``, ``exp`` of the mean for ``gm_*`` (whose
    per-query values are logarithms), the mean otherwise.

    >>> compute_aggregated_measure("num_ret", [2.0, 3.0]), compute_aggregated_measure("map", [0.5, 1.0])
    (5.0, 0.75)
    """
    import numpy as np

    array = np.asarray(list(values), dtype=float)
    if measure.startswith("num_"):
        return float(np.sum(array))
    if measure.startswith("gm_"):
        return float(np.exp(np.sum(array) / len(array)))
    return float(np.mean(array))


def parse_qrel(f_qrel: Iterable[str]) -> dict[str, dict[str, int]]:
    """``{query_id: {doc_id: grade}}`` from the lines of a TREC qrels file, as ``pytrec_eval.parse_qrel``,
    read and checked as :func:`ef.trec.read_qrels` reads a file.

    >>> parse_qrel(["q1 0 d1 1", "q1 0 d2 0"])
    {'q1': {'d1': 1, 'd2': 0}}
    """
    from ef.io._source import text_bytes
    from ef.io.trec import parse_qrels

    return parse_qrels(*text_bytes(f_qrel, "qrels", "f_qrel"))  # type: ignore[return-value]  # TREC qrels grades are int


def parse_run(f_run: Iterable[str]) -> dict[str, dict[str, float]]:
    """``{query_id: {doc_id: score}}`` from the lines of a TREC run file, as ``pytrec_eval.parse_run``,
    read and checked as :func:`ef.trec.read_run` reads a file.

    >>> parse_run(["q1 Q0 d1 1 2.5 bm25", "q1 Q0 d2 2 1.5 bm25"])
    {'q1': {'d1': 2.5, 'd2': 1.5}}
    """
    from ef.evaluation._hits import parse_run as parse
    from ef.io._source import text_bytes

    return parse(*text_bytes(f_run, "run", "f_run"))
