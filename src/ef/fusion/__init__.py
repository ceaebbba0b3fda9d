"""Fuse runs: every method people use, exact, in trec_eval's order, and tuned without leaking.

:func:`fuse` combines runs (mappings, TREC files or DataFrames) with one of :data:`METHODS`
after one of :data:`NORMS` into a :class:`RankedRun` (a read-only run mapping held as arrays);
:func:`fit` fits a trained method's tables on judgements; :func:`tune` picks a method's
parameters by cross-validation over query folds and tests the held-out result against every
input with :mod:`ef.compare`. ``docs/fusion.md`` gives every formula, reference and edge case.

>>> from ef.fusion import fuse
>>> fuse([{"q1": {"a": 2.0, "b": 1.0}}, {"q1": {"c": 5.0, "b": 4.0}}], method="rrf")  # a, c tie: c first
RankedRun({'q1': {'b': 0.03225806451612903, 'c': 0.01639344262295082, 'a': 0.01639344262295082}})
"""

from ef.fusion.methods import METHODS, Method, fit, fuse
from ef.fusion.norms import NORMS, Norm
from ef.fusion.tune import Candidate, TuneReport, tune, weight_grid
from ef.io.ranked import RankedRun

__all__ = [
    "METHODS", "NORMS", "Candidate", "Method", "Norm", "RankedRun", "TuneReport", "fit", "fuse", "tune", "weight_grid",
]
