"""A local checker model as the judge of claim support: an NLI or fact-checking checkpoint on disk.

:class:`Checker` loads a transformers sequence-classification model from a local directory — what
``CrossEncoder.save`` writes for a sentence-transformers cross-encoder, or
``save_pretrained`` for an NLI or fact-checking model — with the network off: Hugging Face's
offline mode is set while it loads, and a path that is not a model directory is a
``ValueError``, never a download. Its entailment probability of each (text, claim) pair decides
whether the text supports the claim, so every claim metric of :mod:`ef.measures.claims`
(faithfulness, claim recall …) can be computed with it instead of the lexical rule.

Which output is "entailment":

- one output (a cross-encoder or a score head such as HHEM's): its sigmoid;
- a label named ``entailment`` / ``entailed`` / ``supported`` / ``consistent`` in the model's
  ``id2label`` (NLI models): its softmax probability;
- two outputs without such a name (MiniCheck-style "unsupported / supported"): the second's;
- otherwise name the label with `entailment_label`.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["Checker"]

_INSTALL_HINT = "pip install 'ef-eval[dense]'"
_ENTAILMENT_NAMES = ("entailment", "entailed", "entail", "supported", "support", "consistent")


class Checker:
    """Claim support judged by a local sequence-classification model (premise = text, hypothesis = claim).

    Parameters
    ----------
    path
        A local directory holding the model (``config.json``, weights, tokenizer files).
    threshold
        The entailment probability from which a text supports a claim (default 0.5).
    entailment_label
        The name (in ``id2label``) or index of the entailment output, if it cannot be told.
    batch_size
        Pairs per forward pass.
    max_length
        Tokens per pair; a longer pair is cut, its longer side first (usually the text).

    Raises
    ------
    ValueError
        If `path` is not a directory with a ``config.json``, the model cannot be loaded from it, or
        its entailment output cannot be told.
    ImportError
        Without transformers and torch (the ``dense`` extra).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        threshold: float = 0.5,
        entailment_label: str | int | None = None,
        batch_size: int = 16,
        max_length: int = 512,
    ) -> None:
        directory = Path(os.fspath(path)).expanduser()
        if not directory.is_dir():
            what = "a file, not a directory" if directory.exists() else "no such directory"
            raise ValueError(f"'checker' must be a local model directory (got {os.fspath(path)!r}: {what})")
        if not (directory / "config.json").is_file():
            raise ValueError(
                f"'checker' {os.fspath(path)!r} is not a model directory: it has no config.json "
                "(save a CrossEncoder or a transformers sequence-classification model there)"
            )
        if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not 0 < threshold < 1:
            raise ValueError(f"'threshold' must be a number in (0, 1) (got {threshold!r})")
        for name, value in (("batch_size", batch_size), ("max_length", max_length)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"'{name}' must be a positive integer (got {value!r})")
        try:
            import torch
            import transformers
        except ImportError as error:
            raise ImportError(f"a checker model needs transformers and torch ({error}): {_INSTALL_HINT}") from error
        from ef.source_manager._models import _offline

        with _offline():
            try:
                self._tokenizer = transformers.AutoTokenizer.from_pretrained(directory, local_files_only=True)
                self._model = transformers.AutoModelForSequenceClassification.from_pretrained(
                    directory, local_files_only=True
                )
            except Exception as error:
                raise ValueError(
                    f"'checker' {os.fspath(path)!r}: cannot load a sequence-classification model and its "
                    f"tokenizer from it offline ({type(error).__name__}: {error})"
                ) from error
        self._model.eval()
        self._torch = torch
        self.path = directory
        self.threshold = float(threshold)
        self._batch_size = batch_size
        self._max_length = max_length
        self._index = _entailment_index(self._model.config, entailment_label, os.fspath(path))

    def __repr__(self) -> str:
        return f"Checker({os.fspath(self.path)!r}, threshold={self.threshold})"

    def entailment(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """The entailment probability of each ``(text, claim)`` pair, in ``[0, 1]``."""
        torch = self._torch
        out: list[float] = []
        for start in range(0, len(pairs), self._batch_size):
            batch = pairs[start : start + self._batch_size]
            encoded = self._tokenizer(
                [p for p, _ in batch], [h for _, h in batch],
                padding=True, truncation=True, max_length=self._max_length, return_tensors="pt",
            )
            with torch.no_grad():
                logits = self._model(**encoded).logits.float()
            if logits.shape[-1] == 1:
                probs = torch.sigmoid(logits[:, 0])
            else:
                probs = torch.softmax(logits, dim=-1)[:, self._index]
            out.extend(float(p) for p in probs)
        return out

    def supported(self, claims: Sequence[str], texts: Sequence[str]) -> list[list[bool]]:
        """``result[i][j]``: the entailment probability of ``claims[i]`` given ``texts[j]`` reaches the threshold."""
        pairs = [(text, claim) for claim in claims for text in texts]
        probs = self.entailment(pairs) if pairs else []
        n = len(texts)
        return [[p >= self.threshold for p in probs[i * n : (i + 1) * n]] for i in range(len(claims))]


def _entailment_index(config: Any, label: str | int | None, path: str) -> int:
    n = int(config.num_labels)
    names = {int(i): str(name) for i, name in (getattr(config, "id2label", None) or {}).items()}
    if label is not None:
        if isinstance(label, int) and not isinstance(label, bool):
            if not 0 <= label < n:
                raise ValueError(f"'entailment_label' {label} is out of range: the model has {n} outputs")
            return label
        for i, name in names.items():
            if name.lower() == str(label).lower():
                return i
        raise ValueError(f"'entailment_label' {label!r} is not a label of {path!r}; its labels: {names}")
    if n == 1:
        return 0
    for wanted in _ENTAILMENT_NAMES:
        for i, name in names.items():
            if name.lower() == wanted:
                return i
    if n == 2:
        return 1
    raise ValueError(
        f"cannot tell which of the {n} outputs of {path!r} is entailment (labels {names}); "
        "pass entailment_label="
    )
