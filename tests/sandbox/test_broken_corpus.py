"""The broken-kernel corpus through a real backend: the exact headline, the marked line, nothing internal.

Rows run two at a time (`run_jobs`), each in its own job process, as a user's run would; the table
is `tests/sandbox/broken_corpus.py`.
"""

from __future__ import annotations

import pytest

from sandbox.jobs.build import make_job
from sandbox.protocol import RunResult, RunStatus
from tests.sandbox.broken_corpus import CORPUS, HERE, SOURCES, Broken
from tests.sandbox.conftest import assert_nothing_internal, run_jobs

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def results() -> dict[str, RunResult]:
    jobs = [make_job(row.source, chip=row.chip, timing_budget_seconds=0.05, trace=False) for row in CORPUS]
    return {row.name: result for row, result in zip(CORPUS, run_jobs(jobs), strict=True)}


def marked(result: RunResult) -> int | None:
    if result.status is RunStatus.REJECTED:
        return result.lowering.error.line if result.lowering and result.lowering.error else None
    return result.error.line if result.error else None


@pytest.mark.parametrize("row", CORPUS, ids=lambda row: row.name)
def test_a_broken_kernel_gets_its_headline_and_marked_line(row: Broken, results: dict[str, RunResult]):
    result = results[row.name]
    assert (result.status, result.summary) == (row.status, row.headline)
    assert marked(result) == row.marked_line


def test_the_corpus_lists_every_broken_kernel_and_enough_of_them():
    assert {p.stem for p in HERE.glob("*.py")} | set(SOURCES) == {row.name for row in CORPUS}
    assert len(CORPUS) >= 25


def test_nothing_internal_reaches_a_user(results: dict[str, RunResult]):
    for name, result in results.items():
        assert_nothing_internal(name, result)


def test_every_error_is_a_sentence_with_a_line_to_look_at(results: dict[str, RunResult]):
    for name, result in results.items():
        if result.error is None:
            continue
        message = result.error.message
        assert len(message.split()) >= 8, f"{name}: {message!r} is too short to act on"
        assert result.summary.count(f"(line {result.error.line})") <= 1, f"{name}: the line is said twice"
