"""The options of a paired comparison, their names and their checks: no numpy, cheap to import.

``ef compare --help`` lists :data:`TESTS` and :data:`CORRECTIONS` from here, and both
:func:`ef.compare.compare` and ``fastrag.benchmark.compare_results`` check their options with
:func:`check_options`, in ef's template: ``TypeError`` for a wrong type, ``ValueError`` for a
wrong value, ``'<name>' must be <rule> (got <value>)``; numpy numbers are accepted.
"""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Literal

from ef._validate import check_positive_int

__all__ = ["CORRECTIONS", "TESTS", "Correction", "Test", "check_options"]

Test = Literal["t", "randomization", "bootstrap", "wilcoxon"]
Correction = Literal["holm", "bh", "bonferroni", "none"]

TESTS: dict[str, str] = {
    "t": "paired Student t-test",
    "randomization": "paired randomization test",
    "bootstrap": "paired bootstrap test (shift method)",
    "wilcoxon": "Wilcoxon signed-rank test",
}
"""The paired tests, by the name ``test=`` takes, with what each is."""
CORRECTIONS: dict[str, str] = {
    "holm": "Holm",
    "bh": "Benjamini-Hochberg",
    "bonferroni": "Bonferroni",
    "none": "no",
}
"""The multiple-comparison corrections, by the name ``correction=`` takes."""


def _check_choice(value: object, name: str, choices: dict[str, str]) -> None:
    rule = f"one of {', '.join(choices)}"
    if not isinstance(value, str):
        raise TypeError(f"'{name}' must be {rule} (got {value!r})")
    if value not in choices:
        raise ValueError(f"'{name}' must be {rule} (got {value!r})")


def check_options(
    test: object, correction: object, alpha: object, confidence: object, resamples: object, seed: object
) -> None:
    """Check a comparison's options, raising for the first bad one, named, with what it got.

    >>> check_options("t", "holm", 0.05, 0.95, 10_000, 0)
    >>> check_options("t", "holm", 0.05, 0.95, 10_000, -1)
    Traceback (most recent call last):
    ...
    ValueError: 'seed' must be a non-negative integer (got -1)
    >>> check_options("t", "holm", "0.05", 0.95, 10_000, 0)
    Traceback (most recent call last):
    ...
    TypeError: 'alpha' must be a number between 0 and 1, exclusive (got '0.05')
    >>> check_options("t", "holm", 0.05, 0.95, 1, 0)
    Traceback (most recent call last):
    ...
    ValueError: 'resamples' must be at least 40 for a 0.95 confidence interval, one resample in each tail (got 1)
    """
    _check_choice(test, "test", TESTS)
    _check_choice(correction, "correction", CORRECTIONS)
    for name, value in (("alpha", alpha), ("confidence", confidence)):
        rule = f"'{name}' must be a number between 0 and 1, exclusive (got {value!r})"
        if isinstance(value, bool) or not isinstance(value, Real):
            raise TypeError(rule)
        if not math.isfinite(float(value)) or not 0.0 < float(value) < 1.0:
            raise ValueError(rule)
    check_positive_int(resamples, "resamples")
    # A percentile interval needs a resample in each tail, (1 - confidence) / 2 of them: fewer
    # (resamples=1) gives an interval of width 0 around one resample, which looks certain.
    least = math.ceil(round(2.0 / (1.0 - float(confidence)), 9))  # type: ignore[arg-type]
    if resamples < least:  # type: ignore[operator]
        raise ValueError(
            f"'resamples' must be at least {least} for a {float(confidence):g} confidence interval, "  # type: ignore[arg-type]
            f"one resample in each tail (got {resamples!r})"
        )
    if isinstance(seed, bool) or not isinstance(seed, Integral):
        raise TypeError(f"'seed' must be a non-negative integer (got {seed!r})")
    if seed < 0:
        raise ValueError(f"'seed' must be a non-negative integer (got {seed!r})")
