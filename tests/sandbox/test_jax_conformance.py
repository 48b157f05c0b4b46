"""JAX's own TPU test kernels (rebuilt in `conformance_kernels.py` and `conformance/`) through the user's
path: what passes on a TPU passes here, or gets the exact honest message and the `unsupported` status.

The everyday suite runs an inline kernel and two file rows that need the harness's fixes (async copy
futures; scoped allocations, semaphores and DMAs); the other rows take the same path with more kernels
and run with `--long` (`tests.matrices`; CI passes it). Each interpret-mode fix they lean on has an
everyday row of its own in `test_simulator_extensions.py`."""

from __future__ import annotations

import pytest

from sandbox.jobs.build import make_job
from sandbox.protocol import RunResult, RunStatus
from tests.matrices import running, split
from tests.sandbox.conformance_files import FILE_ROWS
from tests.sandbox.conformance_kernels import ROWS as KERNEL_ROWS
from tests.sandbox.conformance_kernels import Conformance
from tests.sandbox.conftest import assert_nothing_internal, run_jobs

pytestmark = pytest.mark.slow

ROWS = KERNEL_ROWS + FILE_ROWS
ROW_PARAMS = split(ROWS, ("scalar_prefetch", "futures_more", "dma_scopes"), id=lambda row: row.name)


@pytest.fixture(scope="module")
def results(request: pytest.FixtureRequest) -> dict[str, RunResult]:
    """Each row this session runs through the user's path, on the session's backend (the hardened jail
    where it can run)."""
    rows = running(ROW_PARAMS, request.config)
    jobs = [make_job(row.source, chip=row.chip, timing_budget_seconds=0.05, trace=False) for row in rows]
    return {row.name: result for row, result in zip(rows, run_jobs(jobs), strict=True)}


@pytest.mark.parametrize("row", ROW_PARAMS)
def test_a_jax_tpu_test_kernel_passes_or_is_honestly_unsupported(row: Conformance, results):
    result = results[row.name]
    assert result.status == row.status, result.summary
    assert result.summary.startswith(row.headline), result.summary
    if row.status is RunStatus.PASSED:
        assert result.lowering is not None and result.lowering.lowers is True, result.summary
    assert_nothing_internal(row.name, result)


def test_each_row_follows_distinct_jax_tests():
    tests = [test for row in ROWS for test in row.jax_tests]
    assert len(set(tests)) == len(tests)


def test_each_file_row_has_its_file_and_each_file_a_row():
    from pathlib import Path

    files = {p.stem for p in (Path(__file__).parent / "conformance").glob("*.py")}
    assert files == {row.name for row in FILE_ROWS}


def test_the_readme_and_the_user_guide_state_the_suites_size_and_pass_share():
    from pathlib import Path

    root = Path(__file__).parents[2]
    total = sum(len(row.jax_tests) for row in ROWS)
    passing = sum(len(row.jax_tests) for row in ROWS if row.status is RunStatus.PASSED)
    figure = f"**{total} JAX tests in {len(ROWS)} jobs, {passing} pass ({passing / total:.0%})**".replace(
        "%", " %"
    )
    assert figure in (root / "README.md").read_text()
    assert figure in (root / "docs" / "user-guide.md").read_text()
