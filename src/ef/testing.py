"""A pytest plugin that keeps retrieval quality as a test: ``assert_no_regression`` and ``ef_baseline``.

Installed with ef, it registers itself (the ``pytest11`` entry point ``ef.testing``); elsewhere
``pytest -p ef.testing`` or ``pytest_plugins = ["ef.testing"]`` loads it. Importing it loads
no numpy: a test run that does not use it pays for two hooks.

- :func:`assert_no_regression` gates a result against a saved baseline with :func:`ef.gate.gate`
  and raises ``AssertionError`` with the verdict lines when it fails (or is inconclusive,
  unless told otherwise).
- The ``ef_baseline`` fixture does the same through :meth:`Baseline.check`, and with
  ``pytest --ef-update-baseline`` records the result as the new baseline instead.

.. code-block:: python

    def test_retrieval_quality(ef_baseline):
        report = evaluate_run("runs/candidate.trec", "qrels.txt", ["ndcg@10", "recall@100"])
        ef_baseline.check(report, "baselines/bm25.json", qrels="qrels.txt", margin="2%")
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pytest

if TYPE_CHECKING:
    from ef.gate import GateReport

__all__ = ["Baseline", "GateInconclusive", "assert_no_regression", "ef_baseline", "pytest_addoption"]

_OPTION = "--ef-update-baseline"


class GateInconclusive(AssertionError):  # noqa: N818 - an outcome, named as the gate names it
    """The gate could not tell: the query set is too small (the message says what it can detect)."""


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--ef-update-baseline``: record results as the new baselines instead of checking them."""
    parser.getgroup("ef").addoption(
        _OPTION, action="store_true", default=False,
        help="ef.testing: record each ef_baseline.check result as the new baseline instead of gating it",
    )


def assert_no_regression(
    result: Any,
    baseline_path: str | os.PathLike[str],
    margin: Any = None,
    *,
    measures: list[str] | None = None,
    qrels: Any = None,
    alpha: float = 0.05,
    resamples: int = 10_000,
    seed: int = 0,
    higher_is_better: dict[str, bool] | None = None,
    inconclusive: Literal["fail", "skip", "pass"] = "fail",
) -> GateReport:
    """Gate `result` against the baseline saved at `baseline_path`; raise when it is worse.

    `result` is anything :func:`ef.gate.load_result` reads (a report, a saved result, a TREC run
    with `qrels`); `margin` as :func:`ef.gate.gate` takes it (default 2% of the baseline mean).
    A fail raises ``AssertionError`` with the verdict lines; an inconclusive gate raises
    :class:`GateInconclusive` (`inconclusive` ``"fail"``), skips the test (``"skip"``) or passes
    (``"pass"``). Returns the :class:`~ef.gate.GateReport`.
    """
    if inconclusive not in ("fail", "skip", "pass"):
        raise ValueError(f"'inconclusive' must be 'fail', 'skip' or 'pass' (got {inconclusive!r})")
    path = Path(baseline_path)
    if not path.is_file():
        raise AssertionError(f"no baseline at {path}: record one with pytest {_OPTION}")
    from ef.gate import gate

    report = gate(
        path, result, measures, margin=margin, qrels=qrels, alpha=alpha, resamples=resamples, seed=seed,
        higher_is_better=higher_is_better,
    )
    text = "\n".join(report.lines())
    if report.outcome == "fail":
        raise AssertionError(f"retrieval quality regressed against {path}:\n{text}")
    if report.outcome == "inconclusive":
        if inconclusive == "fail":
            raise GateInconclusive(f"cannot show the result is no worse than {path}:\n{text}")
        if inconclusive == "skip":
            pytest.skip(f"gate inconclusive against {path}:\n{text}")
    return report


@dataclass(frozen=True)
class Baseline:
    """What the ``ef_baseline`` fixture gives a test: :meth:`check` a result, or record it."""

    update: bool

    def check(
        self,
        result: Any,
        baseline_path: str | os.PathLike[str],
        margin: Any = None,
        *,
        qrels: Any = None,
        dataset: str | os.PathLike[str] | None = None,
        pipeline_id: str | None = None,
        **options: Any,
    ) -> GateReport | None:
        """:func:`assert_no_regression`, or with ``--ef-update-baseline`` save `result` (with the
        qrels' hash, the dataset's checksum and `pipeline_id`) to `baseline_path` and return None."""
        if self.update:
            from ef.gate import save_result

            Path(baseline_path).parent.mkdir(parents=True, exist_ok=True)
            save_result(result, baseline_path, qrels=qrels, dataset=dataset, pipeline_id=pipeline_id,
                        measures=options.get("measures"))
            return None
        if dataset is not None:
            _check_dataset(Path(baseline_path), dataset)
        return assert_no_regression(result, baseline_path, margin, qrels=qrels, **options)


def _check_dataset(baseline_path: Path, dataset: str | os.PathLike[str]) -> None:
    """Refuse, as ``ef gate`` does, a `dataset` whose name or checksum is not the one the baseline
    records: the result checked carries no dataset of its own, so without this `dataset=` would be
    used when recording and ignored when checking."""
    if not baseline_path.is_file():
        return  # assert_no_regression says how to record one
    from ef.gate import load_result, result_metadata

    recorded = load_result(baseline_path).metadata.get("dataset") or {}
    given = result_metadata(dataset=dataset)
    now = {"name": given["dataset"], "checksum": given["dataset_checksum"]}
    problems = [
        f"dataset {key}: {recorded[key]!r} in the baseline, {now[key]!r} in the candidate"
        for key in ("name", "checksum")
        if recorded.get(key) is not None and recorded[key] != now[key]
    ]
    if problems:
        raise ValueError(
            f"the baseline ({baseline_path}) and the candidate (dataset {os.fspath(dataset)}) are not comparable: "
            + "; ".join(problems)
        )


@pytest.fixture
def ef_baseline(request: pytest.FixtureRequest) -> Baseline:
    """Check results against saved baselines; ``pytest --ef-update-baseline`` records them instead."""
    return Baseline(update=bool(request.config.getoption(_OPTION, default=False)))
