"""A Workspace is refused for another corpus, not for its own documents given in another order
(the fingerprint compared was of the documents in order: a re-sorted corpus was "another")."""

from __future__ import annotations

import re

import pytest

from ef.datasets import demo_dataset
from ef.evaluation import read_beir
from ef.pipeline import Pipeline
from ef.pipeline_stages import PipelineRetriever, Workspace
from ef.sweep import sweep

CORPUS, QUERIES, QRELS = read_beir(demo_dataset())


def test_the_same_documents_in_another_order_are_the_workspace_s_corpus() -> None:
    workspace = Workspace(CORPUS, show_progress=False)
    reordered = dict(sorted(CORPUS.items(), reverse=True))
    assert list(reordered) != list(CORPUS)
    with_workspace = sweep({"k": 10}, (reordered, QUERIES, QRELS), workspace=workspace, show_progress=False)
    without = sweep({"k": 10}, (CORPUS, QUERIES, QRELS), show_progress=False)
    assert [row["mean"] for row in with_workspace.rows()] == [row["mean"] for row in without.rows()]
    PipelineRetriever(Pipeline(k=1), reordered, workspace=workspace)  # no error: the same corpus


def test_one_text_changed_is_still_another_corpus() -> None:
    workspace = Workspace({"d1": "cats purr", "d2": "dogs bark"})
    message = (
        "'workspace' was made for another corpus than 'corpus' (2 documents, 'corpus' has 2): make a "
        "Workspace of this corpus, or pass none"
    )
    with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
        PipelineRetriever(Pipeline(k=1), {"d2": "dogs bark", "d1": "cats purr!"}, workspace=workspace)
