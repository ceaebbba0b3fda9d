"""``ef eval --device`` and ``--batch-size`` reach the models that use them, and are refused where
none would (found by probing the CLI: with a pipeline flag such as ``--rerank`` or
``--segment-size`` they were dropped, the models ran on sentence-transformers' defaults; with BM25
alone they were ignored)."""

from __future__ import annotations

from typing import Any

import pytest

from ef.cli import main


@pytest.mark.parametrize("flag", [["--device", "cpu"], ["--batch-size", "8"]])
def test_bm25_alone_refuses_encoder_flags(capsys: pytest.CaptureFixture[str], flag: list[str]) -> None:
    assert main(["eval", "-q", *flag]) == 2
    assert capsys.readouterr() == (
        "", f"ef eval: error: {flag[0]} applies to a model (--embedder st:MODEL or hybrid, or --rerank); "
            "--embedder bm25 has none\n"
    )


def test_a_pipeline_gets_device_and_batch_size(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import ef.pipeline_stages

    def stop(self: object, corpus: Any, **options: Any) -> None:  # before any model is loaded
        raise ValueError(f"workspace of {len(corpus)} documents: {sorted(options.items())}")

    monkeypatch.setattr(ef.pipeline_stages.Workspace, "__init__", stop)
    assert main(["eval", "-q", "--rerank", "minilm", "--device", "cpu", "--batch-size", "8"]) == 2
    assert capsys.readouterr().err == (
        "ef eval: error: workspace of 100 documents: [('batch_size', 8), ('device', 'cpu'), ('show_progress', False)]\n"
    )
    assert main(["eval", "--segment-size", "50"]) == 2
    assert capsys.readouterr().err == (
        "ef eval: error: workspace of 100 documents: [('batch_size', 32), ('device', None), ('show_progress', True)]\n"
    )
