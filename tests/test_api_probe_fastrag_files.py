"""A fastrag file write that cannot encode a record (a lone surrogate has no UTF-8 form) names
the file and the sample, and leaves no file behind, like any other record JSON cannot hold."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from fastrag.benchmark import EvalSample, load_samples, save_samples


def test_save_samples_names_the_sample_whose_text_utf8_cannot_encode(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    samples = [EvalSample("q1", "fine", ["a"]), EvalSample("q2", "bad \udcff", ["a"])]
    with pytest.raises(
        ValueError,
        match="^" + re.escape(f"{path}: record 1 (sample 'q2'): ") + r"'utf-8' codec can't "
        r"encode character '\\udcff' in position \d+: surrogates not allowed$",
    ):
        save_samples(samples, path)
    assert os.listdir(tmp_path) == []


def test_save_samples_keeps_the_old_file_when_a_record_cannot_be_encoded(tmp_path: Path) -> None:
    path = tmp_path / "samples.jsonl"
    good = [EvalSample("q1", "fine", ["a"])]
    save_samples(good, path)
    with pytest.raises(ValueError, match=r"record 0 \(sample 'q\\udcff'\)"):
        save_samples([EvalSample("q\udcff", "?", ["a"])], path)
    assert load_samples(path) == good
    assert os.listdir(tmp_path) == ["samples.jsonl"]
