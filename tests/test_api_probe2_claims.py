"""ef.measures.claims probed: LexicalSupport.supported read a str of claims (or texts) as its
characters, a judge's wrong-shaped answer was an IndexError and its "no" counted as supported, a
hand-made ClaimAnalysis of mismatched lengths divided by zero in a metric, and lexical_analysis
could not take a list. Each is now an exception naming what was wrong."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import pytest

from ef.measures.claims import ClaimAnalysis, LexicalSupport, analyse_claims, lexical_analysis


def exactly(message: str) -> str:
    return "^" + re.escape(message) + "$"


@pytest.mark.parametrize(
    ("claims", "texts", "message"),
    [
        ("Paris is in France.", ["Paris, France"], "'claims' must be a list of str (got str)"),
        (["Paris is in France."], "Paris, France", "'texts' must be a list of str (got str)"),
        (None, ["x"], "'claims' must be a list of str (got NoneType)"),
        ([3], ["x"], "'claims'[0] must be a str (got int)"),
    ],
)
def test_lexical_support_names_its_arguments(claims: Any, texts: Any, message: str) -> None:
    with pytest.raises(TypeError, match=exactly(message)):
        LexicalSupport().supported(claims, texts)


class _Judge:
    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def supported(self, claims: Sequence[str], texts: Sequence[str]) -> Any:
        return self.answer(claims, texts)


@pytest.mark.parametrize(
    ("answer", "error", "message"),
    [
        (lambda c, t: None, ValueError, "the judge must return one row per claim (1) (got NoneType)"),
        (lambda c, t: [], ValueError, "the judge must return one row per claim (1) (got 0)"),
        (lambda c, t: [[True] * (len(t) - 1) for _ in c], ValueError,
         "the judge's row 0 must hold one flag per text (2) (got 1)"),
        (lambda c, t: [["no"] * len(t) for _ in c], TypeError, "the judge's flags[0][0] must be a bool (got 'no')"),
        (lambda c, t: [[1] * len(t) for _ in c], TypeError, "the judge's flags[0][0] must be a bool (got 1)"),
    ],
)
def test_a_judges_answer_is_checked(answer: Any, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=exactly(message)):
        analyse_claims("Paris is big.", "Paris is big.", ["ctx"], judge=_Judge(answer))


def test_a_judge_without_supported_is_named() -> None:
    with pytest.raises(TypeError, match=exactly(
        "'judge' must have a supported(claims, texts) method, as LexicalSupport and ef.measures.checker's Checker "
        "do (got int)"
    )):
        analyse_claims("a", "b", [], judge=3)  # type: ignore[arg-type]


def test_a_judge_of_numpy_bools_is_taken() -> None:
    np = pytest.importorskip("numpy")
    judge = _Judge(lambda c, t: [list(np.ones(len(t), dtype=bool)) for _ in c])
    analysis = analyse_claims("Paris is big.", "Paris is big.", ["ctx"], judge=judge)
    assert (analysis.claim_recall, analysis.faithfulness) == (1.0, 1.0)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"response_in_reference": ()}, "'response_in_reference' must hold 1 entries, one per claim (got 0)"),
        ({"response_in_reference": (True, False)},
         "'response_in_reference' must hold 1 entries, one per claim (got 2)"),
        ({"reference_in_contexts": ((True, False),)}, "'reference_in_contexts'[0] must hold 1 flags, one per context "
                                                      "(got 2)"),
        ({"reference_in_response": ()}, "'reference_in_response' must hold 1 entries, one per claim (got 0)"),
    ],
)
def test_a_claim_analysis_of_mismatched_lengths_is_refused(fields: dict[str, Any], message: str) -> None:
    good: dict[str, Any] = {
        "response_claims": ("a",), "reference_claims": ("b",), "response_in_reference": (True,),
        "reference_in_response": (True,), "response_in_contexts": ((True,),), "reference_in_contexts": ((False,),),
    }
    assert ClaimAnalysis(**good).claim_precision == 1.0
    with pytest.raises(ValueError, match=exactly(message)):
        ClaimAnalysis(**{**good, **fields})


def test_lexical_analysis_takes_a_list_and_remembers_it() -> None:
    first = lexical_analysis("Paris is big.", "Paris is big.", ["Paris is big."])  # was: unhashable type: 'list'
    assert first is lexical_analysis("Paris is big.", "Paris is big.", ("Paris is big.",))
    assert first.faithfulness == 1.0
    with pytest.raises(TypeError, match=exactly("'contexts' must be a list of str (got str)")):
        lexical_analysis("a", "b", "ctx")
