"""ef.compat.ir_measures scores a run whose only judged queries have empty judgements ({'q2': {}}, as
qrels filtered to grade > 0 give) 0, as ir_measures does: since c939d8e evaluate_run leaves such a
query out, and calc_aggregate/iter_calc raised "no query to evaluate: no query of the run is judged
in 'qrels' (missing='skip')" (or "... 'qrels' holds no judgement ...")."""

from __future__ import annotations

import pytest

from ef.compat import ir_measures


@pytest.mark.parametrize("qrels", [{"q1": {"d1": 1}, "q2": {}}, {"q2": {}}])
def test_calc_aggregate_of_a_run_on_empty_judgements_only(qrels: dict[str, dict[str, int]]) -> None:
    run = {"q2": {"d1": 1.0}}
    assert ir_measures.calc_aggregate([ir_measures.nDCG @ 10, ir_measures.NumQ], qrels, run) == {
        ir_measures.nDCG @ 10: 0.0, ir_measures.NumQ: 0.0}
    assert [(m.query_id, m.value) for m in ir_measures.iter_calc([ir_measures.nDCG @ 10], qrels, run)] == [
        (q, 0.0) for q in sorted(qrels)]
