"""make_reranker names its own parameter, 'spec', for a bad spec (it said 'rerank', the Pipeline
field the parser was written for), and both rerankers name a device that is not a str."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from ef.pipeline import Pipeline
from ef.rerank import BiEncoderReranker, make_reranker

SPEC_RULE = "must be 'bi:MODEL' (bi-encoder cosine), 'cross:PATH' (a local CrossEncoder) or 'minilm'"


def exactly(message: str) -> str:
    return "^" + re.escape(message) + "$"


@pytest.mark.parametrize(
    ("spec", "error", "message"),
    [
        (None, TypeError, "'spec' must be a non-empty str (got None)"),
        (3, TypeError, "'spec' must be a non-empty str (got 3)"),
        (b"minilm", TypeError, "'spec' must be a non-empty str (got b'minilm')"),
        ("", ValueError, "'spec' must be a non-empty str (got '')"),
        ("colbert", ValueError, f"'spec' {SPEC_RULE} (got 'colbert')"),
        ("bi:", ValueError, f"'spec' {SPEC_RULE} (got 'bi:')"),
        ("cross:  ", ValueError, f"'spec' {SPEC_RULE} (got 'cross:  ')"),
        ("MINILM", ValueError, f"'spec' {SPEC_RULE} (got 'MINILM')"),
    ],
)
def test_a_bad_spec_names_spec(spec: object, error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=exactly(message)):
        make_reranker(spec)  # type: ignore[arg-type]


def test_the_pipeline_field_is_still_named_rerank() -> None:
    with pytest.raises(ValueError, match=exactly(f"'rerank' {SPEC_RULE} (got 'colbert')")):
        Pipeline(rerank="colbert")


@pytest.mark.parametrize(
    ("make", "got"),
    [
        (lambda: make_reranker("minilm", device=3), "3"),  # type: ignore[arg-type]
        (lambda: BiEncoderReranker(device=["cpu"]), "list"),  # type: ignore[arg-type]
        (lambda: make_reranker("cross:/no/such", device=0), "0"),  # type: ignore[arg-type]  # before the directory is looked at
    ],
)
def test_a_device_that_is_not_a_str_is_named(make: Callable[[], object], got: str) -> None:
    rule = "'device' must be a torch device or its name such as 'cpu' or 'cuda:0', or None"
    with pytest.raises(TypeError, match=exactly(f"{rule} (got {got})")):
        make()


def test_a_torch_device_is_taken_as_its_name() -> None:
    torch = pytest.importorskip("torch")
    from ef.pipeline_stages import Workspace

    assert BiEncoderReranker(device=torch.device("cpu")).device == "cpu"
    assert Workspace({"d1": "text"}, device=torch.device("cuda", 1)).device == "cuda:1"  # no model loaded yet


# --- BiEncoderReranker.remember / vectors / __call__ ---------------------------------------------


@pytest.mark.parametrize(
    ("texts", "vectors", "error", "message"),
    [
        ("ab", np.ones((2, 3)), TypeError, "'texts' must be a sequence of str texts, not a single str"),
        (None, np.ones((1, 3)), TypeError, "'texts' must be a sequence of str texts (got NoneType)"),
        ([3], np.ones((1, 3)), TypeError, "'texts'[0] must be a str (got 3)"),
        (["a", "b"], np.ones((1, 3)), ValueError, "'vectors' must be a 2-D array of one row per text (2) "
                                                  "(got shape (1, 3))"),
        (["a"], np.ones(3), ValueError, "'vectors' must be a 2-D array of one row per text (1) (got shape (3,))"),
        (["a"], np.full((1, 3), np.nan), ValueError, "'vectors' holds NaN or infinity: cosine scores of them would "
                                                     "be NaN"),
        (["a", "long text"], np.array([[0.6, 0.8], [3.0, 4.0]]), ValueError,
         "'vectors' row 1 ('long text') has norm 5, not 1: cosine scores need normalized rows (divide each by its "
         "norm, or encode with normalize_embeddings=True)"),
        (["a"], np.zeros((1, 2)), ValueError, "'vectors' row 0 ('a') has norm 0, not 1: cosine scores need "
                                              "normalized rows (divide each by its norm, or encode with "
                                              "normalize_embeddings=True)"),
    ],
)
def test_remember_checks_texts_and_vectors(texts: Any, vectors: Any, error: type[Exception], message: str) -> None:
    reranker = BiEncoderReranker()
    with pytest.raises(error, match=exactly(message)):
        reranker.remember(texts, vectors)
    assert reranker.vectors([]).shape == (0, 0)  # nothing was remembered


def test_remember_refuses_another_width_and_scores_what_it_holds() -> None:
    reranker = BiEncoderReranker()
    reranker.remember(["q", "a", "b"], np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]], dtype=np.float32))
    with pytest.raises(ValueError, match=exactly("'vectors' rows are 3 wide, the vectors remembered before 2")):
        reranker.remember(["c"], np.ones((1, 3), dtype=np.float32))  # failed later, inside np.stack
    assert reranker("q", ["b", "a"]) == [0.0, 1.0]
    assert reranker.encoded == 0
    with pytest.raises(TypeError, match=exactly("'candidates' must be a sequence of str texts, not a single str")):
        reranker("q", "ab")  # was each character a candidate
    with pytest.raises(TypeError, match=exactly("'texts' must be a sequence of str texts, not a single str")):
        reranker.vectors("ab")
