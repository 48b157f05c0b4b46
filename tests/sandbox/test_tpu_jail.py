"""libtpu inside the real jail, on a machine without chips: what a CPU can prove of the TPU path.

One hardened backend on the TPU job runtime (jax[tpu], so libtpu is installed, as on a TPU VM) with
one CPU slot and one chip slot for chip 0 of a v5litepod-8. On the chip slot, libtpu starts inside
every layer (Landlock, seccomp with sockets denied, the slot uid, the pids and thread limits) with
the slot's environment, and must fail *fast*, saying it found no device: not waiting for the
metadata server, not refused a file. On the CPU slot an interpret job must never load libtpu.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from sandbox.backends import capability_report, default_backend_name
from sandbox.backends.hardened import HardenedBackend
from sandbox.host.tpuhost import TpuSlot
from sandbox.jail import probe
from sandbox.jail.runtime import Runtime
from sandbox.jobs.build import make_job
from sandbox.limits import default_limits
from sandbox.protocol import RunResult, RunStatus
from tests.sandbox.conftest import run_job_on

TPU_RUNTIME = Runtime(Path(os.environ.get("PLAYGROUND_TPU_JOB_RUNTIME", "/opt/pallas-playground-tpu")))
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        default_backend_name() != "hardened", reason=f"no hardened backend here: {capability_report()}"
    ),
    pytest.mark.skipif(
        TPU_RUNTIME.problem(tpu=True) is not None,
        reason=f"{TPU_RUNTIME.problem(tpu=True)} (scripts/test installs it as root)",
    ),
]
UID_BASE = 23300
CHIP_0 = TpuSlot(
    index=0,
    chip="v5e",
    accelerator_type="v5litepod-8",
    chips=(0,),
    box=(1, 1, 1),
    device_nodes=(),  # no chip here: libtpu must find none, fast
    devices=1,
)
# Reports, from inside the job, what touched libtpu: its library mapped, its lock file in /tmp.
PROBE = """
import os
import jax, jax.numpy as jnp

def make_inputs(seed):
    return (jnp.ones((8, 128)),)

def kernel(x):
    maps = open("/proc/self/maps").read()
    print("platform", jax.devices()[0].platform)
    print("libtpu loaded", "libtpu" in maps)
    print("lock file", os.path.exists("/tmp/libtpu_lockfile"))
    return x + 1
"""


@pytest.fixture(scope="module")
def backend():
    # This machine's memlock hard limit is 8 MiB and no process here may raise it; VFIO would need
    # more, but with no chip nothing is pinned. The probe's check itself is a unit test.
    saved, probe.TPU_MEMLOCK_BYTES = probe.TPU_MEMLOCK_BYTES, 0
    try:
        runner = HardenedBackend(slots=1, tpu_slots=(CHIP_0,), runtime=TPU_RUNTIME, uid_base=UID_BASE)
    finally:
        probe.TPU_MEMLOCK_BYTES = saved
    assert runner.wait_ready(120) is not None, "the pool did not start"
    yield runner
    runner.close()


def run(backend: HardenedBackend, mode: str) -> tuple[RunResult, float]:
    job = make_job(PROBE, chip="v5e", mode=mode, limits=default_limits(wall_seconds=30), trace=False)
    start = time.monotonic()
    return run_job_on(backend, job), time.monotonic() - start


def test_libtpu_starts_in_the_jail_and_fails_fast_for_want_of_a_device(backend):
    result, seconds = run(backend, "tpu")
    assert result.status == RunStatus.ERROR, result.summary
    text = f"{result.summary}\n{result.error.message if result.error else ''}\n{result.stderr}"
    assert "the TPU did not start" in text and "No jellyfish device found" in text, text
    for wrong in ("Permission denied", "EACCES", "metadata", "timed out"):
        assert wrong not in text, (wrong, text)
    assert seconds < 10, f"{seconds:.1f} s: libtpu waited for something"
    print(f"libtpu in the jail: {seconds:.2f} s, {result.error.message if result.error else result.summary}")


def test_an_interpret_job_beside_libtpu_stays_on_the_cpu(backend):
    result, _ = run(backend, "interpret")  # on the CPU slot, though a v5e chip slot exists
    assert result.status == RunStatus.RAN, result.summary
    assert result.versions and "interpret mode" in result.versions.device_kind
    assert result.versions.libtpu == "0.0.50.1"  # libtpu is installed for this job, and unused:
    assert "platform cpu" in result.stdout
    assert "libtpu loaded False" in result.stdout and "lock file False" in result.stdout, result.stdout
