"""Multi-device jobs: the harness's device mesh is the current mesh, and it carries the chosen chip."""

import dataclasses

import pytest

from sandbox.jobs.build import make_job
from sandbox.protocol import RunResult, RunStatus
from tests.sandbox.conftest import run_job

pytestmark = pytest.mark.slow

# Inside shard_map (no mesh=): the axis "x" has 4 devices, and get_tpu_info() sees TPU7x (16 SC lanes).
SOURCE = """
import jax, jax.numpy as jnp
from jax.experimental.pallas import tpu as pltpu
from jax.sharding import PartitionSpec as P

def make_inputs(seed):
    return (jnp.arange(4 * 8, dtype=jnp.float32).reshape(4, 8),)

def reference(x):
    return x + 16 + 4

def shard(s):
    return s + pltpu.get_tpu_info().sparse_core.num_lanes + jax.lax.axis_size("x")

def kernel(x):
    return jax.shard_map(shard, in_specs=P("x"), out_specs=P("x"))(x)
"""


def run(source: str, devices: int) -> RunResult:
    job = dataclasses.replace(make_job(source, chip="tpu7x", timing_budget_seconds=0.1), devices=devices)
    return run_job(job)


def test_shard_map_sees_the_device_mesh_and_the_chip():
    result = run(SOURCE, devices=4)
    assert result.status == RunStatus.PASSED, result.summary


def test_single_device_jobs_have_no_device_mesh():
    result = run(SOURCE, devices=1)
    assert result.status == RunStatus.ERROR
    assert result.error is not None
    assert result.error.message.startswith(
        "jax.shard_map needs a device mesh, and this run simulates one device"
    )
    shard_map_line = next(i for i, line in enumerate(SOURCE.splitlines(), 1) if "jax.shard_map(" in line)
    assert result.error.line == shard_map_line
