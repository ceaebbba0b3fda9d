"""The measure registry: one source of truth for every measure :func:`evaluate_run` computes.

Each :class:`MeasureFamily` carries its trec_eval name, its description, whether higher is better,
how it is parameterised, its trec_eval default parameters, how it is aggregated over queries, and
the vectorised kernel (in :mod:`ef.evaluation._bulk`) that computes it for all queries at once.
The parser, error messages, :class:`~ef.evaluation.RunEvalReport`, the ``ef trec-eval`` help and
the docs all read from :data:`MEASURES`.

Two spellings are accepted and mean the same measure:

========================  =========================  ===================================
ef                        trec_eval                  canonical (``str(measure)``)
========================  =========================  ===================================
``ndcg@10``               ``ndcg_cut_10``            ``ndcg_cut_10``
``ndcg``                  ``ndcg``                   ``ndcg``
``recall@100``            ``recall_100``             ``recall_100``
``precision@5``           ``P_5``                    ``P_5``
``mrr``                   ``recip_rank``             ``recip_rank``
``mrr@10``                ``recip_rank_10``          ``recip_rank_10`` (an ef extension)
``map``, ``map@100``      ``map``, ``map_cut_100``   ``map``, ``map_cut_100``
``hit_rate@10``           ``success_10``             ``success_10``
========================  =========================  ===================================

plus trec_eval's ``Rprec``, ``bpref``, ``gm_map``, ``iprec_at_recall_0.50``, ``num_q``,
``num_ret``, ``num_rel`` and ``num_rel_ret``. trec_eval's ``-m`` syntax (``P.5,10``, a family
name alone for its default parameters, ``official`` and ``all_trec``) is read by
:func:`expand_measure_spec`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ef.evaluation import _bulk

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "MEASURES",
    "Measure",
    "MeasureFamily",
    "expand_measure_spec",
    "parse_measure",
    "valid_forms",
]

ParamKind = Literal["none", "cutoff", "optional_cutoff", "recall"]
Aggregate = Literal["mean", "sum", "geometric", "count"]
Kernel = Callable[["_bulk.HitTable", "int | float | None"], "npt.NDArray[np.float64]"]

_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)


@dataclass(frozen=True)
class MeasureFamily:
    """One registry entry: a measure family such as ``P`` (``P_5``, ``P_10`` …) or ``map``.

    Parameters
    ----------
    name
        trec_eval's name of the family (``"P"``, ``"ndcg_cut"``, ``"recip_rank"`` …).
    description
        One line: what the measure is, with its trec_eval edge cases.
    higher_is_better
        ``True`` for scores, ``False`` for counts that are not quality scores.
    param
        ``"none"``, ``"cutoff"`` (a positive rank), ``"optional_cutoff"``, or ``"recall"``
        (a recall level in ``[0, 1]``).
    defaults
        The parameters trec_eval uses when ``-m`` names the family alone.
    aggregate
        How the per-query values are summarised: ``"mean"``, ``"sum"`` (trec_eval's counts),
        ``"geometric"`` (``gm_map``) or ``"count"`` (``num_q``).
    integer
        Whether values are counts, printed without decimals.
    kernel
        ``kernel(table, param)`` returns the per-query values for all queries of a
        :class:`~ef.evaluation._bulk.HitTable`.
    """

    name: str
    description: str
    higher_is_better: bool
    param: ParamKind
    defaults: tuple[int | float, ...]
    aggregate: Aggregate
    integer: bool
    kernel: Kernel


def _family(
    name: str,
    description: str,
    kernel: Kernel,
    *,
    param: ParamKind = "none",
    defaults: tuple[int | float, ...] = (),
    aggregate: Aggregate = "mean",
    integer: bool = False,
    higher_is_better: bool = True,
) -> MeasureFamily:
    return MeasureFamily(name, description, higher_is_better, param, defaults, aggregate, integer, kernel)


# Ordered as trec_eval prints them (its te_trec_measures table).
MEASURES: dict[str, MeasureFamily] = {
    f.name: f
    for f in (
        _family(
            "num_q",
            "Number of queries evaluated (summary only).",
            _bulk.num_q,
            aggregate="count",
            integer=True,
            higher_is_better=False,
        ),
        _family(
            "num_ret",
            "Number of documents retrieved (after -M).",
            _bulk.num_ret,
            aggregate="sum",
            integer=True,
            higher_is_better=False,
        ),
        _family(
            "num_rel",
            "Number of relevant documents judged (grade >= relevance level).",
            _bulk.num_rel,
            aggregate="sum",
            integer=True,
            higher_is_better=False,
        ),
        _family(
            "num_rel_ret", "Number of relevant documents retrieved.", _bulk.num_rel_ret, aggregate="sum", integer=True
        ),
        _family(
            "map",
            "Mean average precision: precision at each relevant document retrieved, "
            "summed and divided by all relevant judged.",
            _bulk.average_precision,
        ),
        _family(
            "gm_map",
            "Geometric mean of average precision (each floored at 1e-5); the "
            "per-query value is the query's average precision.",
            _bulk.average_precision,
            aggregate="geometric",
        ),
        _family("Rprec", "Precision after R documents, R = number of relevant judged.", _bulk.r_precision),
        _family(
            "bpref",
            "Binary preference: for each relevant retrieved, the fraction of the "
            "first R judged non-relevant ranked below it.",
            _bulk.bpref,
        ),
        _family(
            "recip_rank",
            "Reciprocal rank of the first relevant document (ef extension: an "
            "optional cutoff, recip_rank_10 = MRR@10).",
            _bulk.reciprocal_rank,
            param="optional_cutoff",
        ),
        _family(
            "iprec_at_recall",
            "Interpolated precision at a recall level: the best precision at any rank whose recall reaches it.",
            _bulk.iprec_at_recall,
            param="recall",
            defaults=(0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0),
        ),
        _family(
            "P",
            "Precision at k: relevant in the top k divided by k (also when fewer than k were retrieved).",
            _bulk.precision,
            param="cutoff",
            defaults=_CUTOFFS,
        ),
        _family(
            "recall",
            "Recall at k: relevant in the top k divided by all relevant judged.",
            _bulk.recall,
            param="cutoff",
            defaults=_CUTOFFS,
        ),
        _family(
            "ndcg",
            "Normalised DCG over the whole ranking: gain = grade, discount "
            "log2(rank + 1), ideal from every judged grade > 0.",
            _bulk.ndcg,
        ),
        _family(
            "ndcg_cut",
            "Normalised DCG at k (the ideal ranking is cut at k too).",
            _bulk.ndcg,
            param="cutoff",
            defaults=_CUTOFFS,
        ),
        _family(
            "map_cut",
            "Average precision at k, divided by all relevant judged.",
            _bulk.average_precision,
            param="cutoff",
            defaults=_CUTOFFS,
        ),
        _family(
            "success",
            "1 if a relevant document is in the top k, else 0 (hit rate).",
            _bulk.success,
            param="cutoff",
            defaults=(1, 5, 10),
        ),
    )
}
"""Every measure family ef computes, in trec_eval's output order, keyed by trec_eval's name."""

# ef's names: "<alias>" alone and "<alias>@<k>".
_PLAIN_ALIASES = {"mrr": "recip_rank", "ndcg": "ndcg", "map": "map"}
_AT_ALIASES = {
    "ndcg": "ndcg_cut",
    "ndcg_cut": "ndcg_cut",
    "recall": "recall",
    "precision": "P",
    "P": "P",
    "mrr": "recip_rank",
    "recip_rank": "recip_rank",
    "map": "map_cut",
    "map_cut": "map_cut",
    "hit_rate": "success",
    "success": "success",
    "iprec_at_recall": "iprec_at_recall",
}

_OFFICIAL = (
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
)
_NICKNAMES = {
    "official": _OFFICIAL,
    # all_trec, less the families ef does not compute (listed in _UNSUPPORTED).
    "all_trec": (*_OFFICIAL, "recall", "ndcg", "ndcg_cut", "map_cut", "success"),
}

# trec_eval measures ef does not compute: named in the error instead of "unknown".
_UNSUPPORTED = frozenset(
    {
        "relstring",
        "infAP",
        "gm_bpref",
        "Rprec_mult",
        "utility",
        "11pt_avg",
        "binG",
        "G",
        "dcg",
        "ideal_dcg",
        "ndcg_rel",
        "Rndcg",
        "relative_P",
        "set_P",
        "set_relative_P",
        "set_recall",
        "set_map",
        "set_F",
        "num_nonrel_judged_ret",
        "rbp",
        "rbp_resid",
        "unj",
        "runid",
    }
)


@dataclass(frozen=True, order=True)
class Measure:
    """One measure with its parameter, e.g. ``P_5``; ``str()`` gives the canonical name.

    Equality and hashing follow the canonical name, so both spellings give equal measures.

    >>> parse_measure("ndcg@10") == parse_measure("ndcg_cut_10")
    True
    >>> str(parse_measure("precision@5")), str(parse_measure("iprec_at_recall_0.5"))
    ('P_5', 'iprec_at_recall_0.50')
    """

    family: str
    param: int | float | None = None

    def __str__(self) -> str:
        if self.param is None:
            return self.family
        if MEASURES[self.family].param == "recall":
            return f"{self.family}_{self.param:.2f}"
        return f"{self.family}_{self.param}"

    @property
    def spec(self) -> MeasureFamily:
        """The registry entry of this measure's family."""
        return MEASURES[self.family]


def valid_forms() -> str:
    """A one-paragraph list of the valid measure names, for error messages and ``--help``.

    >>> valid_forms().splitlines()[0]
    'valid measures: ef names ndcg@K, ndcg, recall@K, precision@K, mrr, mrr@K, map, map@K, hit_rate@K;'
    """
    trec = []
    for family in MEASURES.values():
        if family.param == "cutoff":
            trec.append(f"{family.name}_K")
        elif family.param == "recall":
            trec.append(f"{family.name}_X (X in [0, 1])")
        elif family.param == "optional_cutoff":
            trec.append(f"{family.name}, {family.name}_K")
        else:
            trec.append(family.name)
    return (
        "valid measures: ef names ndcg@K, ndcg, recall@K, precision@K, mrr, mrr@K, map, map@K, "
        "hit_rate@K;\ntrec_eval names " + ", ".join(trec) + " (K a positive integer)"
    )


def _unknown(name: str, why: str | None = None) -> ValueError:
    if why is None:
        root = name.split("@")[0].split(".")[0]
        why = (
            f"trec_eval measure {root!r} is not computed by ef"
            if root in _UNSUPPORTED or root.rsplit("_", 1)[0] in _UNSUPPORTED
            else "unknown measure"
        )
    return ValueError(f"measure {name!r}: {why}; {valid_forms()}")


def _parse_param(name: str, family: str, text: str, *, trec_cutoff: bool = False) -> int | float:
    kind = MEASURES[family].param
    if kind == "recall":
        try:
            value = float(text)
        except ValueError:
            raise _unknown(name, f"recall level {text!r} is not a number") from None
        if not 0.0 <= value <= 1.0:
            raise _unknown(name, f"recall level must be in [0, 1] (got {text})")
        if float(f"{value:.2f}") != value:  # the name keeps 2 decimals: 0.501 would print as 0.50
            raise _unknown(name, f"recall level must have at most 2 decimals (got {text})")
        return value
    if trec_cutoff:
        # trec_eval reads -m cutoffs as numbers and truncates them (ndcg_cut.23.4 -> 23).
        try:
            number = float(text)
        except ValueError:
            raise _unknown(name, f"cutoff {text!r} is not a number") from None
        cutoff = int(number) if math.isfinite(number) else 0
    elif text.isdigit() and text.isascii():
        cutoff = int(text)
    else:
        raise _unknown(name, f"cutoff must be a positive integer (got {text!r})")
    if cutoff < 1:
        raise _unknown(name, f"cutoff must be a positive integer (got {text!r})")
    return cutoff


def parse_measure(name: str) -> Measure:
    """Parse one measure name, in ef's or trec_eval's spelling.

    Parameters
    ----------
    name
        ``"ndcg@10"``, ``"ndcg_cut_10"``, ``"mrr"``, ``"P_5"``, ``"iprec_at_recall_0.50"`` …

    Returns
    -------
    Measure
        The measure; ``str()`` of it is its canonical trec_eval name.

    Raises
    ------
    ValueError
        For an unknown name, a family that needs a parameter given none (``"P"``), or a bad
        parameter; the message lists the valid forms.

    Examples
    --------
    >>> parse_measure("mrr@10")
    Measure(family='recip_rank', param=10)
    >>> str(parse_measure("hit_rate@10")), str(parse_measure("map@100"))
    ('success_10', 'map_cut_100')
    >>> parse_measure("P")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: measure 'P': needs a parameter, e.g. 'P_10'; valid measures: ...
    """
    if not isinstance(name, str):
        raise TypeError(f"a measure name must be a str (got {type(name).__name__})")
    if "@" in name:
        alias, _, text = name.partition("@")
        family = _AT_ALIASES.get(alias)
        if family is None:
            raise _unknown(name)
        return Measure(family, _parse_param(name, family, text))
    family_name = _PLAIN_ALIASES.get(name, name)
    if family_name in MEASURES:
        kind = MEASURES[family_name].param
        if kind in ("cutoff", "recall"):
            example = "0.50" if kind == "recall" else "10"
            raise _unknown(name, f"needs a parameter, e.g. '{family_name}_{example}'")
        return Measure(family_name)
    root, sep, text = name.rpartition("_")
    if sep and root in MEASURES and MEASURES[root].param != "none":
        return Measure(root, _parse_param(name, root, text))
    raise _unknown(name)


def expand_measure_spec(spec: str) -> list[Measure]:
    """Expand one trec_eval ``-m`` argument into measures.

    Accepts a nickname (``official``, ``all_trec``), a family alone (its trec_eval default
    parameters), ``family.p1,p2`` (parameters sorted, as trec_eval prints them), or any name
    :func:`parse_measure` reads.

    >>> [str(m) for m in expand_measure_spec("P.5,10,3")]
    ['P_3', 'P_5', 'P_10']
    >>> [str(m) for m in expand_measure_spec("success")]
    ['success_1', 'success_5', 'success_10']
    >>> [str(m) for m in expand_measure_spec("iprec_at_recall..25,.5")]
    ['iprec_at_recall_0.25', 'iprec_at_recall_0.50']
    """
    if spec in _NICKNAMES:
        return [m for family in _NICKNAMES[spec] for m in expand_measure_spec(family)]
    name, dot, params = spec.partition(".")
    if name in MEASURES:
        family = MEASURES[name]
        if not dot:
            if family.param in ("none", "optional_cutoff"):
                return [Measure(name)]
            return [Measure(name, p) for p in family.defaults]
        if family.param == "none":
            raise _unknown(spec, f"{name!r} takes no parameters")
        texts = params.split(",")
        values = sorted({_parse_param(spec, name, t, trec_cutoff=True) for t in texts})
        if len(values) != len(texts):
            raise _unknown(spec, "a parameter is given twice")
        return [Measure(name, v) for v in values]
    return [parse_measure(spec)]
