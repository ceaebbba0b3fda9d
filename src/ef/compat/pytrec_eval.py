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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ef.measures import MEASURES, NICKNAMES, resolve

__all__ = ["RelevanceEvaluator", "supported_measures", "supported_nicknames"]

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
        self.measures = [(name, m) for name, m in resolve(sorted(measures), trec_eval=True)
                         if m.spec.aggregate != "none"]
        self.relevance_level = relevance_level
        self.judged_docs_only_flag = bool(judged_docs_only_flag)

    def evaluate(self, scores: Mapping[str, Mapping[str, float]]) -> dict[str, dict[str, float]]:
        """``{query_id: {measure: value}}`` for each query both in `scores` and judged."""
        from ef.evaluation import evaluate_run

        run = {q: dict(docs) for q, docs in scores.items() if q in self.qrels}
        if self.judged_docs_only_flag:
            run = {q: {d: s for d, s in docs.items() if self.qrels[q].get(d, -1) >= 0} for q, docs in run.items()}
        if not run:
            return {}
        qrels = {q: self.qrels[q] for q in run}
        names = [name for name, _ in self.measures]
        report = evaluate_run(run, qrels, names, missing="skip", relevance_level=self.relevance_level)
        return {q: {name: float(value) for name, value in values.items()} for q, values in report.per_query.items()}
