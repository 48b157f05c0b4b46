"""A kernel that can never finish is stopped and explained; one that is only slow says how slow.

Deadlocks are caught by the interpreter monitor's watchdog (`sandbox.harness.monitor.deadlock`);
slowness is explained from the `progress` events the parent keeps after killing the job.
"""

from __future__ import annotations

import re

import pytest

from sandbox.jobs.build import make_job
from sandbox.limits import default_limits
from sandbox.protocol import Event, RunStatus
from tests.sandbox.broken_corpus import CORPUS
from tests.sandbox.conftest import line_of, run_job

pytestmark = pytest.mark.slow

NEVER_SIGNALLED = next(row for row in CORPUS if row.name == "semaphore_never_signalled")

# Core 1 waits while core 0 works through 64 ref operations first: a long wait, not a deadlock.
LATE_SIGNAL = """
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

def make_inputs(seed):
    return (jnp.ones((8, 128), jnp.float32),)

def reference(x):
    return x * 2.0**64

def late_kernel(x_hbm, o_hbm, buf, sem):
    core = jax.lax.axis_index("core")

    @pl.when(core == 0)
    def _():
        pltpu.sync_copy(x_hbm, buf)

        @pl.loop(0, 64)
        def _(i):
            buf[...] = buf[...] * 2

        pltpu.sync_copy(buf, o_hbm)
        pl.semaphore_signal(sem, 1, core_index=1)

    @pl.when(core == 1)
    def _():
        pl.semaphore_wait(sem, 1)

def kernel(x):
    return pl.kernel(late_kernel, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
                     mesh=pltpu.TensorCoreMesh(axis_name="core", num_cores=2),
                     scratch_types=[pltpu.VMEM((8, 128), jnp.float32), pltpu.SemaphoreType.REGULAR])(x)
"""

# 8 x 8 blocks of a 256^3 matmul: 32,768 grid steps at a few milliseconds each.
TINY_BLOCKS = """
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

def make_inputs(seed):
    kx, ky = jax.random.split(jax.random.key(seed))
    return jax.random.normal(kx, (256, 256)), jax.random.normal(ky, (256, 256))

def reference(x, y):
    return x @ y

def matmul_kernel(x_ref, y_ref, o_ref, acc_ref):
    @pl.when(pl.program_id(2) == 0)
    def _():
        acc_ref[...] = jnp.zeros_like(acc_ref)

    acc_ref[...] += jnp.dot(x_ref[...], y_ref[...])
    o_ref[...] = acc_ref[...]

def kernel(x, y, b=8):
    return pl.pallas_call(
        matmul_kernel, out_shape=jax.ShapeDtypeStruct((256, 256), x.dtype), grid=(256 // b,) * 3,
        in_specs=[pl.BlockSpec((b, b), lambda i, j, k: (i, k)), pl.BlockSpec((b, b), lambda i, j, k: (k, j))],
        out_specs=pl.BlockSpec((b, b), lambda i, j, k: (i, j)),
        scratch_shapes=[pltpu.VMEM((b, b), jnp.float32)],
    )(x, y)
"""


def test_a_deadlocked_kernel_ends_in_under_five_seconds_with_the_wait_marked():
    events: list[Event] = []
    result = run_job(make_job(NEVER_SIGNALLED.source, timing_budget_seconds=0.05), on_event=events.append)
    assert result.status == RunStatus.ERROR and result.error is not None
    assert result.error.type == "Deadlock"
    assert result.error.line == NEVER_SIGNALLED.marked_line
    # From the user's code being imported to the verdict: compiling, running, detecting, unwinding.
    # (Starting the job, mostly `import jax`, comes before and depends on the machine's load.)
    at = {e.kind: e.t for e in events}
    assert at["error"] - at["imported"] < 5.0, f"the deadlock took {at['error'] - at['imported']:.2f} s"
    assert result.wall_seconds < 20.0
    # The kernel traced, so the TPU compiler's verdict is there too.
    assert result.lowering is not None and result.lowering.lowers is True


def test_a_core_that_signals_late_is_not_a_deadlock():
    result = run_job(make_job(LATE_SIGNAL, timing_budget_seconds=0.05))
    assert result.status == RunStatus.PASSED, result.summary


def test_a_timeout_says_how_far_the_kernel_got_and_that_bigger_blocks_help():
    # Long enough to get past `import jax` and compiling on a busy machine, so that steps have run.
    job = make_job(TINY_BLOCKS, limits=default_limits(wall_seconds=12), trace=False)
    result = run_job(job)
    assert result.status == RunStatus.TIMEOUT and result.limit == "wall_seconds"
    pattern = (
        r"timeout: stopped after the 12 s wall-clock limit while running the kernel \(case 'scratch'\): "
        r"[\d,]+ grid steps, [\d,]+ ref and semaphore operations in [\d.]+ s, about [\d.]+ ms per grid "
        r"step\. Interpret mode runs every ref access, DMA and semaphore operation as a host callback of "
        r"about 1–2 ms, so the run time grows with the number of steps: bigger blocks mean fewer steps"
    )
    assert re.fullmatch(pattern, result.summary), result.summary


def test_the_marked_line_of_the_corpus_row_is_the_wait():
    assert NEVER_SIGNALLED.marked_line == line_of(NEVER_SIGNALLED.source, "pl.semaphore_wait(sem, 1)")
