"""The one builder of a job's environment: the CPU pin off a chip, and what libtpu reads on one."""

from __future__ import annotations

import pytest

from sandbox.host.jobenv import base_environment, job_environment, tpu_environment
from sandbox.host.tpuhost import CHIP_BOXES, TpuChip, TpuHost, generation_of, plan_slots, runs_on_chip

BASE = base_environment({"OPENBLAS_CORETYPE": "Haswell", "AWS_SECRET_ACCESS_KEY": "x"}, home="/tmp")


def host(chip: str, chips: int) -> TpuHost:
    nodes = [TpuChip(f"0000:00:{4 + i:02x}.0", (f"/dev/vfio/{30 + i}",)) for i in range(chips)]
    return TpuHost(generation_of(chip), tuple(nodes), "vfio")  # type: ignore[arg-type]


def test_a_job_off_a_chip_is_pinned_to_the_cpu():
    env = job_environment(BASE, devices=1)
    assert env["JAX_PLATFORMS"] == "cpu"
    assert not any(k.startswith("TPU_") for k in env)
    assert "AWS_SECRET_ACCESS_KEY" not in env and env["OPENBLAS_CORETYPE"] == "Haswell"


def test_a_multi_device_cpu_job_gets_simulated_devices():
    env = job_environment(BASE, devices=4)
    assert env["XLA_FLAGS"] == "--xla_force_host_platform_device_count=4"
    assert env["JAX_PLATFORMS"] == "cpu"


# Per generation: the slot's own accelerator type (one chip: measured on a v5e VM, where libtpu
# opened a v5litepod-1), the slot's chip, port and the nodes it owns.
@pytest.mark.parametrize(
    ("chip", "chips", "slot", "accelerator_type"),
    [
        ("v5e", 8, 5, "v5litepod-1"),
        ("v6e", 8, 7, "v6e-1"),
        ("v5p", 4, 3, "v5p-2"),
        ("tpu7x", 4, 2, "tpu7x-2"),
    ],
)
def test_a_single_chip_slot_environment(chip, chips, slot, accelerator_type):
    tpu = plan_slots(host(chip, chips))[slot]
    env = job_environment(BASE, devices=1, tpu=tpu)
    assert env == {
        **BASE,
        "JAX_PLATFORMS": "tpu,cpu",
        "TPU_SKIP_MDS_QUERY": "1",
        "TPU_ACCELERATOR_TYPE": accelerator_type,
        "TPU_WORKER_ID": "0",
        "TPU_WORKER_HOSTNAMES": "localhost",
        "TPU_HOST_BOUNDS": "1,1,1",
        "TPU_CHIPS_PER_HOST_BOUNDS": "1,1,1",
        "TPU_PROCESS_BOUNDS": "1,1,1",
        "TPU_CHIPS_PER_PROCESS_BOUNDS": "1,1,1",
        "TPU_VISIBLE_CHIPS": str(slot),
        "TPU_VISIBLE_DEVICES": str(slot),
        "TPU_PROCESS_PORT": str(8476 + slot),
        "TPU_PROCESS_ADDRESSES": f"localhost:{8476 + slot}",
        "TPU_RUNTIME_METRICS_PORTS": "",  # libtpu failed to start its metrics server without TCP
        "TPU_LOG_DIR": "/tmp/tpu_logs",
    }
    assert tpu.device_nodes == ("/dev/vfio/vfio", f"/dev/vfio/{30 + slot}")


def test_every_slot_of_a_host_has_its_own_ports_and_chips():
    envs = [tpu_environment(s) for s in plan_slots(host("v5e", 8))]
    for key in ("TPU_PROCESS_PORT", "TPU_VISIBLE_CHIPS"):
        assert len({e[key] for e in envs}) == 8, key
    assert {e["TPU_RUNTIME_METRICS_PORTS"] for e in envs} == {""}
    for env in envs:  # libtpu refuses a process port missing from the address list (notes/tpu-vm.md)
        assert f"localhost:{env['TPU_PROCESS_PORT']}" in env["TPU_PROCESS_ADDRESSES"].split(",")


@pytest.mark.parametrize("size", [2, 4, 8])
def test_a_multi_chip_slot_names_all_its_chips_and_their_box(size):
    tpu = plan_slots(host("v6e", 8), size)[-1]
    env = tpu_environment(tpu)
    assert env["TPU_VISIBLE_CHIPS"] == ",".join(str(c) for c in range(8 - size, 8))
    box = ",".join(map(str, CHIP_BOXES[size]))
    assert env["TPU_CHIPS_PER_HOST_BOUNDS"] == env["TPU_CHIPS_PER_PROCESS_BOUNDS"] == box
    assert env["TPU_PROCESS_BOUNDS"] == env["TPU_HOST_BOUNDS"] == "1,1,1"


@pytest.mark.parametrize(
    ("mode", "chip", "host_chip", "on_chip"),
    [
        ("auto", "v6e", "v6e", True),
        ("auto", "v5e", "v6e", False),  # simulated on the CPU, and reported as interpret mode
        ("tpu", "v6e", "v6e", True),
        ("tpu", "v5e", "v6e", True),  # goes to the chip, whose harness refuses it by its real name
        ("interpret", "v6e", "v6e", False),
        ("auto", "v6e", None, False),
        ("tpu", "v6e", None, False),  # no chip slot: the harness says the host has no TPU
    ],
)
def test_which_jobs_run_on_a_chip(mode, chip, host_chip, on_chip):
    assert runs_on_chip(mode, chip, host_chip) is on_chip
