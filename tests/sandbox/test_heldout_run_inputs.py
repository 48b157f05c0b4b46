"""Issue 41, attacking the run pipeline through its inputs (a sixth round, on the sandbox's side).

- A file that starts with a byte-order mark (as some editors save UTF-8) is valid Python, but the
  job compiled its text, which refuses U+FEFF: every such file was "SyntaxError: invalid
  non-printable character U+FEFF (line 1)", and its `DEVICES = N` went unread. `make_job` drops the
  mark, as Python does for a file.
"""

from __future__ import annotations

import pytest

from sandbox.jobs.build import make_job
from sandbox.protocol import RunStatus
from tests.sandbox.conftest import run_job
from tests.sandbox.hostile_corpus import PASSING_KERNEL

DEVICES_FILE = """DEVICES = 4
import jax, jax.numpy as jnp
from jax.sharding import PartitionSpec as P

def make_inputs(seed):
    return (jnp.arange(4 * 8, dtype=jnp.float32).reshape(4, 8),)

def reference(x):
    return x + 4

def kernel(x):
    return jax.shard_map(lambda s: s + jax.lax.axis_size("x"), in_specs=P("x"), out_specs=P("x"))(x)
"""


def test_a_byte_order_mark_is_dropped_before_the_job_reads_the_file():
    job = make_job("\ufeff" + DEVICES_FILE)
    assert job.source == DEVICES_FILE and job.devices == 4
    assert make_job("x = '\ufeff'\n").source == "x = '\ufeff'\n"  # a mark inside the file is its own


@pytest.mark.slow
@pytest.mark.parametrize("source", [PASSING_KERNEL, DEVICES_FILE], ids=["one-device", "four-devices"])
def test_a_file_saved_with_a_byte_order_mark_runs(source):
    result = run_job(make_job("\ufeff" + source, timing_budget_seconds=0.0, trace=False))
    assert result.status is RunStatus.PASSED, result.summary
