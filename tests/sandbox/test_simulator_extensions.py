"""Kernels a TPU runs that JAX 0.12.0.1's interpret mode cannot: the harness's fixes run them, and what
it still cannot run is `unsupported` with JAX's exact error, never the kernel's `error`.

Each row is a file in `simulated/` (its docstring says what it does), run through a real backend as a
user's run is: the hardened jail where it can run (so every fix is checked as deployed), else the
local backend. `passed` rows failed before the fixes in `sandbox/harness/jaxapi/fixes/` (the fix's name is
in the run's versions); the `# MARK` comment is the line the run must mark.

Every fix and every error has an everyday row; a further row for a fix that another row already
checks (a second `pl.select_ref` use, the scatter and accumulating forms of the indexed DMA) runs with
`--long` (`tests.matrices`; CI passes it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from sandbox.harness.jaxapi import interpret_fixes as fixes
from sandbox.harness.jaxapi.fixes.rounding import stochastic_round
from sandbox.jobs.build import make_job
from sandbox.protocol import Chip, RunResult, RunStatus
from tests.backends import hardened_suite_backend
from tests.matrices import running, split
from tests.sandbox.conftest import assert_nothing_internal, run_jobs

pytestmark = pytest.mark.slow

HERE = Path(__file__).parent / "simulated"
PASSED, ERROR, UNSUPPORTED = RunStatus.PASSED, RunStatus.ERROR, RunStatus.UNSUPPORTED
SIMULATOR = "is not supported by TPU interpret mode in JAX 0.12.0.1: a limitation of the simulator, not a mistake in your kernel"


@dataclass(frozen=True)
class Row:
    name: str
    status: RunStatus
    headline: str = "passed: 1/1 cases match the reference"
    fix: str = ""
    chip: Chip = "v5p"

    @property
    def source(self) -> str:
        return (HERE / f"{self.name}.py").read_text()

    @property
    def marked_line(self) -> int | None:
        lines = [i for i, text in enumerate(self.source.splitlines(), start=1) if "# MARK" in text]
        return lines[0] if lines else None


ROWS = (
    Row("revisit_any", PASSED, fix=fixes.REVISIT_ANY),
    Row(
        "revisit_immediate",
        ERROR,
        "error in kernel: RuntimeError: `o_ref` (output 1, f32[8, 256]): the same output block is written "
        "again at grid step (i=1, j=0), after the grid moved on from it",
    ),
    Row("semaphore_read", PASSED, fix=fixes.SEMAPHORE_READ),
    Row("stochastic_round", PASSED, fix=fixes.STOCHASTIC_ROUND),
    Row("select_ref_loop", PASSED, fix=fixes.SELECT_REF),
    Row("select_ref_views", PASSED, fix=fixes.SELECT_REF),
    Row("sparsecore_gather_dma", PASSED, fix=fixes.INDEXED_DMA, chip="tpu7x"),
    Row("sparsecore_scatter_dma", PASSED, fix=fixes.INDEXED_DMA, chip="tpu7x"),
    Row(
        "sparsecore_gather_bad_id",
        ERROR,
        "error in kernel: IndexError: an indexed DMA reads `table_hbm` (input 1, f32[32, 128]) at row ",
        chip="tpu7x",
    ),
    Row("vector_gather_scatter", PASSED, fix=fixes.VECTOR_GATHER_SCATTER, chip="tpu7x"),
    Row(
        "scatter_bf16",
        ERROR,
        "error in kernel: TypeError: plsc.addupdate_scatter takes int32 or float32 refs only "
        "(ref.dtype=bfloat16 must be int32 or float32)",
        chip="tpu7x",
    ),
    Row("key_output", PASSED, "passed: 1/1 cases match the reference", fix=fixes.KEY_OPERANDS),
    Row("semaphore_output", PASSED, fix=fixes.SEMAPHORE_OPERANDS),
    Row("empty_ref_in_body", PASSED, fix=fixes.EMPTY_REF_IN_KERNEL),
    Row("prng_stateful", PASSED, fix=fixes.PRNG_STATE),
    Row("ref_views", PASSED, fix=fixes.REF_VIEWS),
    Row("aliased_vmem", PASSED, fix=fixes.ALIASED_RESIDENT),
    Row("accumulating_dma", PASSED, fix=fixes.INDEXED_DMA, chip="tpu7x"),
    Row("subcore_barrier", PASSED, fix=fixes.SUBCORE_BARRIER, chip="tpu7x"),
    Row("masked_store_rank3", PASSED, fix=fixes.MASKED_STORE_BOUNDS),
    Row(
        "barrier_skipped",
        ERROR,
        "error in kernel: Deadlock: a subcore would wait forever at `plsc.subcore_barrier()`: 3 of the 4 subcores "
        "reached it",
        chip="tpu7x",
    ),
    Row(
        "barrier_two_sparsecores",
        UNSUPPORTED,
        "unsupported by the simulator: NotImplementedError: plsc.subcore_barrier() or plsc.fetch_and_add on a mesh "
        f"of several SparseCores {SIMULATOR} (the simulator says: ",
        chip="tpu7x",
    ),
    Row(
        "select_ref_signal",
        ERROR,
        "error in kernel: ValueError: a ref picked by `pl.select_ref(...)` is usable only as a DMA's source, "
        "destination or semaphore; JAX 0.12.0.1 cannot build `pl.semaphore_signal` on one for any target, a TPU "
        "included",
    ),
)
FURTHER = ("select_ref_views", "sparsecore_scatter_dma", "accumulating_dma")  # a fix another row checks
ROW_PARAMS = split(ROWS, [row.name for row in ROWS if row.name not in FURTHER], id=lambda row: row.name)


@pytest.fixture(scope="module")
def results(request: pytest.FixtureRequest) -> dict[str, RunResult]:
    """Each row this session runs, once, through the session's backend: the hardened jail where it can
    run (as deployed)."""
    rows = running(ROW_PARAMS, request.config)
    jobs = [make_job(row.source, chip=row.chip, timing_budget_seconds=0.05, trace=False) for row in rows]
    return {row.name: result for row, result in zip(rows, run_jobs(jobs), strict=True)}


@pytest.mark.parametrize("row", ROW_PARAMS)
def test_a_tpu_kernel_runs_or_is_told_the_simulator_cannot(row: Row, results: dict[str, RunResult]):
    result = results[row.name]
    assert result.status == row.status, result.summary
    assert result.summary.startswith(row.headline), result.summary
    if row.status is PASSED:
        assert result.versions is not None and row.fix in result.versions.interpret_fixes
        assert result.lowering is not None and result.lowering.lowers is True, "the TPU compiler accepts it"
    if row.status is UNSUPPORTED:
        assert result.error is not None and result.error.limitation
    if row.marked_line is not None:
        assert result.error is not None and result.error.line == row.marked_line


def test_the_table_lists_every_kernel(results: dict[str, RunResult]):
    assert {p.stem for p in HERE.glob("*.py")} == {row.name for row in ROWS}
    for name, result in results.items():
        assert_nothing_internal(name, result)


def test_the_readme_counts_the_table():
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    count = {status: sum(row.status is status for row in ROWS) for status in (PASSED, ERROR, UNSUPPORTED)}
    said = (
        f"**{len(ROWS)} kernels for constructs JAX's interpret mode cannot run**",
        f"**{count[PASSED]} pass**",
        f"**{count[ERROR]} are errors**",
        f"**{count[UNSUPPORTED]} is `unsupported`**"
        if count[UNSUPPORTED] == 1
        else f"**{count[UNSUPPORTED]} are",
    )
    flat = " ".join(readme.split())
    assert all(part in flat for part in said), said


def test_stochastic_rounding_lands_on_a_neighbour_and_is_unbiased():
    import jax
    import jax.numpy as jnp

    x = jnp.full((4096,), 1.0 + 2.0**-9, jnp.float32)  # a quarter of the way from 1 to the next bf16
    bits = jax.random.bits(jax.random.key(0), x.shape, jnp.uint32)
    got = np.asarray(stochastic_round(x, bits, target_dtype=jnp.bfloat16).astype(jnp.float32))
    assert set(np.unique(got)) == {1.0, 1.0 + 2.0**-7}
    assert abs(got.mean() - float(x[0])) < 2.0**-12
    exact = jnp.array([1.0, -2.5, 0.0], jnp.float32)
    assert np.array_equal(stochastic_round(exact, bits[:3], target_dtype=jnp.bfloat16), exact)


def test_every_fix_works_in_the_hardened_jail(results: dict[str, RunResult]):
    hardened_suite_backend()  # skips where the hardened jail cannot run (the rows ran on the local backend)
    for row in ROWS:
        if row.fix and row.name in results:
            result = results[row.name]
            assert result.status is PASSED, (row.name, result.summary)
            assert result.versions is not None and row.fix in result.versions.interpret_fixes
