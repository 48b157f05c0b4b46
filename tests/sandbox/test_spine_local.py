"""The spine through real child processes (local backend): what a user sees for each kind of run.

tiled_matmul's second wrong kernel takes the first one's path and runs with `--long` (`tests.matrices`;
CI passes it)."""

import os
import time
from pathlib import Path

import pytest

from sandbox.catalog.entries import load_catalog
from sandbox.jobs.build import make_job
from sandbox.limits import MIB, default_limits
from sandbox.protocol import RunResult, RunStatus
from tests.matrices import split
from tests.sandbox.conftest import run_job

pytestmark = pytest.mark.slow
CATALOG = load_catalog()
ADD_KERNEL = """
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl

def add_kernel(x_ref, y_ref, o_ref):
    o_ref[...] = x_ref[...] + y_ref[...]

def make_inputs(seed):
    kx, ky = jax.random.split(jax.random.key(seed))
    return jax.random.normal(kx, (8, 128)), jax.random.normal(ky, (8, 128))

def kernel(x, y):
    return pl.pallas_call(add_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x, y)
"""


def run(source: str, entry: str | None = None, **limits) -> RunResult:
    job = make_job(
        source,
        entry=CATALOG.get(entry) if entry else None,
        limits=default_limits(**limits),
        timing_budget_seconds=0.2,
    )
    return run_job(job, "local")


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def test_tiled_matmul_solution_passes_with_timing_and_memory():
    entry = CATALOG.get("tiled_matmul")
    result = run(entry.solution_source, "tiled_matmul")
    assert result.status == RunStatus.PASSED, result.summary
    cpu_cases = [c for c in entry.spec().cases if not c.tpu_only]
    assert [c.passed for c in result.cases] == [True] * len(cpu_cases)
    assert result.timing and result.timing.simulated and result.timing.kernel.n >= 3
    assert result.timing.reference and result.timing.ratio_to_reference > 0
    # Hand calculation for case 1 (f32, 128-blocks): x, y and out tiles double-buffered by emit_pipeline,
    # 3 x 2 x 128*128*4 B = 393,216 B, plus the f32 accumulator 128*128*4 = 65,536 B.
    assert result.memory.vmem_bytes == 3 * 2 * 128 * 128 * 4 + 128 * 128 * 4
    assert result.memory.vmem_capacity_bytes == 64 * MIB  # v5p, per TensorCore
    assert result.memory.hbm_input_bytes == 2 * 256 * 256 * 4
    assert result.versions.jax == "0.12.0.1" and "interpret" in result.versions.device_kind


@pytest.mark.parametrize(
    "wrong", split([w.name for w in CATALOG.get("tiled_matmul").wrong], ("no_accumulator_reset",), id=str)
)
def test_tiled_matmul_wrong_kernels_are_rejected_with_a_report(wrong):
    source = next(w.source for w in CATALOG.get("tiled_matmul").wrong if w.name == wrong)
    result = run(source, "tiled_matmul")
    assert result.status == RunStatus.MISMATCH, result.summary
    bad = result.cases[0].outputs[0]
    assert bad.mismatch_count > 0 and bad.first_mismatches
    assert "differs in" in result.summary


def test_scratch_mode_with_reference_passes():
    result = run(ADD_KERNEL + "\ndef reference(x, y):\n    return x + y\n")
    assert result.status == RunStatus.PASSED, result.summary


def test_scratch_mode_without_reference_summarises_outputs():
    result = run(ADD_KERNEL)
    assert result.status == RunStatus.RAN, result.summary
    (out,) = result.outputs
    assert out.shape == (8, 128) and out.dtype == "float32" and out.nan_count == 0


def test_kernel_that_raises_reports_the_users_line():
    source = ADD_KERNEL.replace(
        "    o_ref[...] = x_ref[...] + y_ref[...]", "    raise ValueError('block shape is wrong')"
    )
    result = run(source)
    assert result.status == RunStatus.ERROR
    assert result.error.type == "ValueError" and result.error.line == 6
    assert 'File "kernel.py", line 6' in result.error.traceback


def test_syntax_error_reports_its_line():
    result = run("import jax\n\ndef kernel(x:\n    pass\n")
    assert result.status == RunStatus.ERROR and result.error.type == "SyntaxError"
    assert result.error.line == 3 and result.error.phase == "import"


def test_infinite_loop_times_out_and_keeps_partial_stdout():
    source = (
        "import os, subprocess\nprint('pid', os.getpid(), flush=True)\n"
        "child = subprocess.Popen(['sleep', '600'])\nprint('grandchild', child.pid, flush=True)\n"
        "while True:\n    pass\n"
    )
    started = time.monotonic()
    result = run(source, wall_seconds=4)
    assert result.status == RunStatus.TIMEOUT and result.limit == "wall_seconds"
    assert "4 s wall-clock limit" in result.summary
    assert time.monotonic() - started < 15
    pids = [int(line.split()[1]) for line in result.stdout.splitlines()]
    assert len(pids) == 2 and not any(alive(p) for p in pids), "a process of the job survived"


def test_print_flood_is_capped_and_flagged():
    result = run("while True:\n    print('x' * 1000)\n", output_kill_bytes=4 * MIB, output_bytes=64 * 1024)
    assert result.status == RunStatus.RESOURCE_LIMIT and result.limit == "output_bytes"
    assert result.stdout_truncated and len(result.stdout) <= 64 * 1024


def test_huge_allocation_is_a_resource_limit():
    source = "import jax.numpy as jnp\nx = jnp.zeros((10**12,), jnp.float32)\nprint(x.sum())\n"
    result = run(source)
    assert result.status == RunStatus.RESOURCE_LIMIT, result.summary
    assert result.limit == "memory_bytes" and "memory limit" in result.summary
