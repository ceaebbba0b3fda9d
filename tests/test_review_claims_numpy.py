"""A support judge may answer with a numpy array of flags (a local model's ``probabilities > 0.5``),
as it could before its answer was checked (then refused as "not one row per claim")."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np
import pytest

from ef.measures.claims import LexicalSupport, analyse_claims

RESPONSE = "Paris is the capital of France. It has ten million bridges."
REFERENCE = "Paris is the capital of France. It lies on the Seine."
CONTEXTS = ["Paris, the capital of France, lies on the river Seine.", "Bridges: ten million."]


class ArrayJudge:
    """LexicalSupport's verdicts, as an array of the given dtype (or a list of array rows)."""

    def __init__(self, dtype: type, rows: bool = False) -> None:
        self.dtype, self.rows = dtype, rows

    def supported(self, claims: Sequence[str], texts: Sequence[str]) -> object:
        flags: np.ndarray = np.array(LexicalSupport().supported(claims, texts), dtype=self.dtype).reshape(
            len(claims), len(texts)
        )
        return list(flags) if self.rows else flags


@pytest.mark.parametrize("rows", [False, True])
def test_an_array_of_flags_is_the_judge_s_answer(rows: bool) -> None:
    analysis = analyse_claims(RESPONSE, REFERENCE, CONTEXTS, judge=ArrayJudge(bool, rows))  # type: ignore[arg-type]
    expected = analyse_claims(RESPONSE, REFERENCE, CONTEXTS)
    assert (analysis.claim_recall, analysis.claim_precision, analysis.faithfulness) == (0.5, 0.5, 1.0)
    assert analysis == expected
    assert all(type(flag) is bool for row in analysis.response_in_contexts for flag in row)


def test_an_array_of_numbers_is_still_no_flags() -> None:
    with pytest.raises(TypeError, match="^" + re.escape("the judge's flags[0][0] must be a bool (got 1.0)") + "$"):
        analyse_claims(RESPONSE, REFERENCE, CONTEXTS, judge=ArrayJudge(float))  # type: ignore[arg-type]


def test_an_array_of_the_wrong_shape_is_named() -> None:
    class Short:
        def supported(self, claims: Sequence[str], texts: Sequence[str]) -> object:
            return np.ones((len(claims), len(texts) - 1), dtype=bool)

    message = "the judge's row 0 must hold one flag per text (3) (got 2)"
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        analyse_claims(RESPONSE, REFERENCE, CONTEXTS, judge=Short())  # type: ignore[arg-type]
