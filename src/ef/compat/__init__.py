"""Drop-in shims for code written against a peer: change one import, keep the peer's conventions.

- :mod:`ef.compat.pytrec_eval`: ``RelevanceEvaluator(qrels, measures).evaluate(run)``, pytrec_eval's
  argument order, measure syntax (``"P.5,10"``, ``"ndcg_cut"``), float values and its convention
  for a judged query the run lacks (left out).
- :mod:`ef.compat.ir_measures`: ``calc_aggregate``, ``iter_calc``, ``parse_measure`` and the measure
  objects (``nDCG@10``, ``P(rel=2)@5`` ...), ir_measures' ``(qrels, run)`` order and its convention
  (a judged query the run lacks counts, with zeros).

The numbers are ef's (trec_eval 10.0's); docs/coming-from.md lists what differs from each peer.
"""

__all__: list[str] = []
