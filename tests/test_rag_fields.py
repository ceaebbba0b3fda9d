"""evaluate_rag checks the Ragas fields it only forwards against SingleTurnSample's types, naming the sample."""

from __future__ import annotations

from typing import Any

import pytest

from ef.evaluation import evaluate_rag

BASE = {"user_input": "q", "response": "a b", "reference": "a b"}


@pytest.mark.parametrize(("extra", "message"), [
    ({"retrieved_context_ids": 5}, "samples[1]['retrieved_context_ids'] must be a list of str or int ids (got int)"),
    ({"retrieved_context_ids": "d1"}, "samples[1]['retrieved_context_ids'] must be a list of str or int ids (got str)"),
    ({"reference_context_ids": ["d1", 2.5]}, "samples[1]['reference_context_ids'][1] must be a str or int id "
                                             "(got float)"),
    ({"reference_context_ids": [True]}, "samples[1]['reference_context_ids'][0] must be a str or int id (got bool)"),
    ({"multi_responses": "one"}, "samples[1]['multi_responses'] must be a list of str (got str)"),
    ({"multi_responses": ["a", 3]}, "samples[1]['multi_responses'][1] must be a str (got int)"),
    ({"rubrics": ["r"]}, "samples[1]['rubrics'] must be a mapping of str to str (got list)"),
    ({"rubrics": {"score1": 1}}, "samples[1]['rubrics'] must map str to str (got str: int)"),
    ({"persona_name": 7}, "samples[1]['persona_name'] must be a str (got int)"),
    ({"query_length": ["long"]}, "samples[1]['query_length'] must be a str (got list)"),
])
def test_a_forwarded_field_of_the_wrong_type_is_refused(extra: dict[str, Any], message: str) -> None:
    with pytest.raises(TypeError) as error:
        evaluate_rag([BASE, {**BASE, **extra}], metrics=["exact_match"])
    assert str(error.value) == message


def test_forwarded_fields_of_the_right_types_pass() -> None:
    sample = {**BASE, "retrieved_context_ids": ["d1", 2], "reference_context_ids": [], "multi_responses": ["a"],
              "rubrics": {"score1": "poor"}, "persona_name": "p", "query_style": "s", "query_length": "short"}
    assert evaluate_rag([sample], metrics=["exact_match"]).metrics == {"exact_match": 1.0}
