"""Kernels that fail on the chip, as the user sees them, and the chip free afterwards: a core halt, a
kernel that never ends (the wall-clock limit), a command stopped by a signal while its kernel spins.
After each, the catalog's tiled matmul must pass on the same chip: one job's failure is never the next
user's. The simulator's verdict on each kernel is the same status (see each test)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from tests.tpu.conftest import ROOT, assert_the_chip_runs_the_catalog_matmul, chip_here, cli

pytestmark = pytest.mark.tpu

# A DMA started and never waited for: the report on the lent v5e ends in RuntimeUnexpectedCoreHalt.
HALTS = """
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _body(x_hbm, o_ref, buf, sem):
    pltpu.make_async_copy(x_hbm, buf, sem).start()  # started, never waited for
    o_ref[...] = jnp.zeros_like(o_ref)


def kernel(x):
    return pl.pallas_call(
        _body,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        scratch_shapes=[pltpu.VMEM(x.shape, x.dtype), pltpu.SemaphoreType.DMA],
    )(x)


def make_inputs(seed):
    return (jnp.ones((256, 512), jnp.float32),)
"""

# A loop whose condition never turns false (n is 1): the kernel runs until something stops it.
SPINS = """
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _body(n_ref, o_ref):
    steps = jax.lax.while_loop(lambda i: n_ref[0] > 0, lambda i: i + 1, 0)
    o_ref[...] = jnp.full(o_ref.shape, steps, jnp.int32)


def kernel(n):
    return pl.pallas_call(
        _body,
        out_shape=jax.ShapeDtypeStruct((8, 128), jnp.int32),
        in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM)],
    )(n)


def make_inputs(seed):
    return (jnp.ones((1,), jnp.int32),)
"""


def test_a_kernel_that_halts_the_core_is_explained_and_the_next_run_passes(tmp_path):
    source = tmp_path / "halts.py"
    source.write_text(HALTS)
    result, _ = cli(str(source), "--chip", chip_here(), "--mode", "tpu")
    # The simulator: `error`, UnfinishedDMA naming the copy left in flight.
    assert result["status"] == "error", json.dumps(result)[:3000]
    assert result["error"]["type"] == "TpuCoreHalted", json.dumps(result["error"])[:3000]
    assert_the_chip_runs_the_catalog_matmul()


def test_a_kernel_that_never_ends_stops_at_the_wall_limit_and_the_chip_is_free(tmp_path):
    source = tmp_path / "spins.py"
    source.write_text(SPINS)
    started = time.monotonic()
    result, _ = cli(str(source), "--chip", chip_here(), "--mode", "tpu", "--wall-seconds", "40")
    # The simulator: `timeout` as well (tests/sandbox: the same kernel in interpret mode).
    assert result["status"] == "timeout", json.dumps(result)[:3000]
    assert time.monotonic() - started < 90
    assert_the_chip_runs_the_catalog_matmul()


def test_a_command_stopped_while_its_kernel_spins_ends_the_job_and_frees_the_chip(tmp_path):
    source = tmp_path / "spins.py"
    source.write_text(SPINS)
    command = [sys.executable, "-m", "sandbox", "run", str(source), "--chip", chip_here(), "--mode", "tpu"]
    run = subprocess.Popen(
        [*command, "--backend", "local", "--json"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(25)  # the job has opened the chip (2-11 s) and its kernel spins
    run.send_signal(signal.SIGTERM)
    out, err = run.communicate(timeout=60)
    assert "SIGTERM: ending the job first" in err, err[-3000:]
    assert json.loads(out)["status"] == "cancelled", out[-3000:]
    assert_the_chip_runs_the_catalog_matmul()
