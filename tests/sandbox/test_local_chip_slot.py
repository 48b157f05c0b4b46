"""The local backend on a TPU VM, tried on this CPU machine with a chip slot whose chip is not here:
the kernel's job gets the slot's libtpu environment (and says the TPU did not start, with libtpu's
reason), while the reference's job runs on the CPU and succeeds. On the lent v5e the same path passes
(tests/tpu)."""

from __future__ import annotations

from sandbox.backends.local import LocalBackend
from sandbox.catalog.entries import load_catalog
from sandbox.host.tpuhost import TpuSlot
from sandbox.jobs.build import make_job
from sandbox.protocol import RunStatus
from tests.sandbox.conftest import run_job_on

SLOT = TpuSlot(
    index=0,
    chip="v5e",
    accelerator_type="v5litepod-1",
    chips=(0,),
    box=(1, 1, 1),
    device_nodes=("/dev/vfio/vfio", "/dev/vfio/0"),
    devices=1,
)


def test_a_native_job_gets_the_chip_and_its_reference_the_cpu():
    entry = load_catalog().get("tiled_matmul_pallas_call")
    source = entry.solution_source
    backend = LocalBackend(tpu_slots=(SLOT,))
    assert "native runs on v5e chip 0, run as a v5litepod-1" in backend.health().detail
    try:
        result = run_job_on(backend, make_job(source, entry=entry, chip="v5e", mode="tpu"))
    finally:
        backend.close()
    # Not "the catalog entry's reference could not run": the reference ran on the CPU.
    assert result.status is RunStatus.ERROR and result.mode == "tpu"
    assert result.error is not None and result.error.message.startswith("the TPU did not start: ")
    assert "reference" not in result.summary


def test_an_interpret_job_on_a_tpu_host_stays_on_the_cpu():
    entry = load_catalog().get("tiled_matmul_pallas_call")
    source = entry.solution_source
    backend = LocalBackend(tpu_slots=(SLOT,))
    try:
        result = run_job_on(backend, make_job(source, entry=entry, chip="v5e", mode="interpret"))
    finally:
        backend.close()
    assert result.status is RunStatus.PASSED, result.summary
    assert result.versions is not None and "interpret mode" in result.versions.device_kind
