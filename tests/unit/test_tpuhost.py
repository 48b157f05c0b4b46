"""TPU hosts from a fake sysfs: chips, generations, device nodes, and how a host splits into slots."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sandbox.host.tpuhost import (
    GENERATIONS,
    SIMULATED_ONLY,
    TpuHostError,
    cpu_share,
    discover,
    generation_of,
    plan_slots,
)
from sandbox.protocol.chips import CHIPS
from sandbox.protocol.device_kinds import chip_of_device_kind

PCI_IDS = {"v5e": "0x0063", "v5p": "0x0062", "v6e": "0x006f", "tpu7x": "0x0076"}


def fake_host(root: Path, device_id: str, chips: int, style: str = "vfio", first_group: int = 17) -> None:
    """A sysfs and /dev under `root` as a TPU VM shows them; IOMMU group numbers do not start at 0."""
    devices = root / "sys/bus/pci/devices"
    devices.mkdir(parents=True)
    (root / "dev/vfio").mkdir(parents=True)
    (root / "sys/class/accel").mkdir(parents=True)
    (root / "dev/vfio/vfio").touch()
    other = devices / "0000:00:01.0"  # a NIC, which must be ignored
    other.mkdir()
    (other / "vendor").write_text("0x1af4\n")
    (other / "device").write_text("0x1000\n")
    for i in reversed(range(chips)):  # created out of order: discovery sorts by PCI address
        address = f"0000:00:{4 + i:02x}.0"
        chip = devices / address
        chip.mkdir()
        (chip / "vendor").write_text("0x1ae0\n")
        (chip / "device").write_text(device_id + "\n")
        if style == "vfio":
            os.symlink(f"../../../kernel/iommu_groups/{first_group + 2 * i}", chip / "iommu_group")
            (root / f"dev/vfio/{first_group + 2 * i}").touch()
        else:
            (root / f"sys/class/accel/accel{i}").mkdir()
            os.symlink(f"../../../bus/pci/devices/{address}", root / f"sys/class/accel/accel{i}/device")
            (root / f"dev/accel{i}").touch()


def host_at(root: Path):
    return discover(str(root / "sys"), str(root / "dev"))


def test_a_cpu_machine_has_no_tpu_host(tmp_path):
    (tmp_path / "sys/bus/pci/devices").mkdir(parents=True)
    assert host_at(tmp_path) is None


def test_this_machine_is_not_a_tpu_host():
    assert discover() is None


@pytest.mark.parametrize(
    ("chip", "chips", "accelerator_type", "devices_per_chip"),
    [
        ("v5e", 8, "v5litepod-8", 1),
        ("v6e", 8, "v6e-8", 1),
        ("v5p", 4, "v5p-8", 1),
        ("tpu7x", 4, "tpu7x-8", 2),
    ],
)
def test_each_generation_is_found_with_its_vfio_groups(
    tmp_path, chip, chips, accelerator_type, devices_per_chip
):
    fake_host(tmp_path, PCI_IDS[chip], chips)
    host = host_at(tmp_path)
    assert host is not None and host.generation.chip == chip
    assert host.accelerator_type == accelerator_type
    assert [c.pci_address for c in host.chips] == [f"0000:00:{4 + i:02x}.0" for i in range(chips)]
    # chip i's group is 17 + 2i: the node comes from sysfs, never from the chip's index
    assert host.device_nodes((1,)) == (str(tmp_path / "dev/vfio/vfio"), str(tmp_path / "dev/vfio/19"))
    assert generation_of(chip).devices_per_chip == devices_per_chip


def test_accel_nodes_are_found_through_the_accel_class(tmp_path):
    fake_host(tmp_path, PCI_IDS["v5p"], 4, style="accel")
    host = host_at(tmp_path)
    assert host is not None and host.style == "accel"
    assert host.device_nodes((2, 3)) == (str(tmp_path / "dev/accel2"), str(tmp_path / "dev/accel3"))


def test_an_unknown_tpu_generation_is_refused_by_name(tmp_path):
    fake_host(tmp_path, "0x005e", 4)  # TPU v4: real, but not a chip this playground offers
    with pytest.raises(TpuHostError, match=r"unknown generation \(device id 0x005e\)"):
        host_at(tmp_path)


def test_a_chip_without_its_vfio_node_is_not_this_machines(tmp_path):
    fake_host(tmp_path, PCI_IDS["v6e"], 8)
    (tmp_path / "dev/vfio/21").unlink()
    host = host_at(tmp_path)
    assert len(host.chips) == 7 and "0000:00:06.0" not in [c.pci_address for c in host.chips]
    assert [(a.pci_address, a.expected_node) for a in host.absent] == [
        ("0000:00:06.0", str(tmp_path / "dev/vfio/21"))
    ]


def test_a_host_splits_into_one_slot_per_chip(tmp_path):
    fake_host(tmp_path, PCI_IDS["v5e"], 8)
    host = host_at(tmp_path)
    slots = plan_slots(host)
    assert [s.chips for s in slots] == [(i,) for i in range(8)]
    assert [s.index for s in slots] == list(range(8))
    assert {s.box for s in slots} == {(1, 1, 1)}
    every_node = [n for s in slots for n in s.device_nodes if not n.endswith("/vfio")]
    assert len(every_node) == len(set(every_node)) == 8  # no chip's node is in two slots
    assert slots[3].describe() == "v5e chip 3, run as a v5litepod-1"


@pytest.mark.parametrize(("size", "box"), [(2, (1, 2, 1)), (4, (2, 2, 1)), (8, (2, 4, 1))])
def test_multi_chip_slots_have_the_box_of_their_size(tmp_path, size, box):
    fake_host(tmp_path, PCI_IDS["v6e"], 8)
    slots = plan_slots(host_at(tmp_path), size)
    assert len(slots) == 8 // size and slots[-1].chips == tuple(range(8 - size, 8))
    assert slots[0].box == box and slots[0].devices == size


def test_a_slot_size_that_does_not_divide_the_host_is_refused(tmp_path):
    fake_host(tmp_path, PCI_IDS["v5p"], 4)
    with pytest.raises(
        TpuHostError, match="v5p-8 host \\(4 chips\\) splits into slots of 1, 2, 4 chips, not 8"
    ):
        plan_slots(host_at(tmp_path), 8)


def test_tpu7x_slots_show_two_devices_per_chip(tmp_path):
    fake_host(tmp_path, PCI_IDS["tpu7x"], 4)
    assert [s.devices for s in plan_slots(host_at(tmp_path), 2)] == [4, 4]


def test_every_offered_chip_has_a_generation_and_real_device_kinds():
    assert sorted([*(g.chip for g in GENERATIONS), *SIMULATED_ONLY]) == sorted(CHIPS)
    assert chip_of_device_kind("TPU8i") == "tpu8i" and chip_of_device_kind("TPU8t") == "tpu8t"
    assert chip_of_device_kind("TPU v5 lite") == "v5e"
    assert chip_of_device_kind("TPU v6 lite") == "v6e"
    assert chip_of_device_kind("TPU v5") == "v5p"
    assert chip_of_device_kind("TPU7x") == "tpu7x"
    assert chip_of_device_kind("TPU v4") is None


@pytest.mark.parametrize(
    ("cpus", "index", "count", "share"),
    [
        (list(range(8)), 1, 4, (2, 3)),
        (list(range(224)), 7, 8, tuple(range(196, 224))),
        ([0, 1], 1, 4, (0, 1)),  # fewer CPUs than slots: every slot may use all of them
        ([5, 3, 4, 2], 0, 1, (2, 3, 4, 5)),
    ],
)
def test_cpu_share(cpus, index, count, share):
    assert cpu_share(cpus, index, count) == share


def test_a_native_run_on_another_chip_is_refused_by_the_real_name():
    from sandbox.harness.target import TargetError, _check_chip

    _check_chip("v6e", "TPU v6 lite")
    with pytest.raises(TargetError) as caught:
        _check_chip("v5e", "TPU v6 lite")
    assert str(caught.value) == (
        "this host's TPU is a TPU v6 lite (v6e), not a v5e: choose v6e to run natively, "
        "or mode 'interpret' to simulate a v5e on the CPU"
    )


def test_a_chip_slot_job_gets_room_for_libtpus_threads():
    from sandbox.limits import TPU_PROCESSES, default_limits, for_tpu

    limits = default_limits()
    assert for_tpu(limits).processes == TPU_PROCESSES > limits.processes
    assert for_tpu(limits).memory_bytes == limits.memory_bytes


def test_a_sweep_on_a_chip_slot_gets_the_time_its_configs_take_there():
    # On the v5e a config compiles natively twice and is timed: 10 s a config (enough in the simulator)
    # stopped a 6-config paged-attention sweep before its first config; a chip slot gives 30.
    from sandbox.jobs import sweeps
    from sandbox.jobs.build import make_job, make_sweep_job
    from sandbox.limits import SWEEP_CHIP_WALL_SECONDS_PER_CONFIG, TPU_PROCESSES, WALL_SECONDS, on_chip

    spec = sweeps.make_spec(None, params={"ppcb": [1, 2, 4, 8, 16, 32]}, size={"s": 2048})
    swept = on_chip(make_sweep_job("def kernel(x): ...\n", spec))
    assert swept.limits.wall_seconds == WALL_SECONDS + 6 * SWEEP_CHIP_WALL_SECONDS_PER_CONFIG
    assert swept.limits.processes == TPU_PROCESSES
    shard = on_chip(make_sweep_job("def kernel(x): ...\n", sweeps.shards(spec, 3)[0]))
    assert shard.limits.wall_seconds == WALL_SECONDS + 2 * SWEEP_CHIP_WALL_SECONDS_PER_CONFIG
    assert on_chip(make_job("def kernel(x): ...\n")).limits.wall_seconds == WALL_SECONDS  # a run: as it was


def test_a_runner_that_cannot_pin_memory_or_lacks_a_node_is_refused(tmp_path, monkeypatch):
    import resource

    from sandbox.jail import probe

    fake_host(tmp_path, PCI_IDS["v6e"], 8)
    slots = plan_slots(host_at(tmp_path))
    monkeypatch.setattr(resource, "getrlimit", lambda _: (8 << 20, 8 << 20))  # Docker's default
    (tmp_path / "dev/vfio/19").unlink()
    problems = probe._tpu_problems(slots)
    assert problems[0].startswith("RLIMIT_MEMLOCK is 8388608 bytes") and "--ulimit memlock=-1" in problems[0]
    assert problems[1] == f"TPU device nodes missing here: {tmp_path}/dev/vfio/19 (pass them to the runner)"
    monkeypatch.setattr(resource, "getrlimit", lambda _: (resource.RLIM_INFINITY,) * 2)
    (tmp_path / "dev/vfio/19").touch()
    assert probe._tpu_problems(slots) == []


def test_the_chip_is_known_from_pci_ids_where_the_nodes_are_not(tmp_path):
    from sandbox.host.tpuhost import host_chip

    fake_host(tmp_path, PCI_IDS["v6e"], 8)
    for node in (tmp_path / "dev/vfio").iterdir():
        node.unlink()  # a web server's container: /sys is there, the chips are the runner's
    assert host_chip(str(tmp_path / "sys")) == "v6e"
    with pytest.raises(TpuHostError, match=r"lists 8 v6e chips on its PCI bus but may open none"):
        host_at(tmp_path)


def test_the_tpu_command_shows_each_slots_nodes_and_environment(tmp_path, monkeypatch, capsys):
    import sandbox.__main__ as cli
    from sandbox.host import tpu_report

    fake_host(tmp_path, PCI_IDS["v5e"], 8)
    monkeypatch.setattr(tpu_report, "discover", lambda: host_at(tmp_path))
    assert cli.main(["tpu", "--chips-per-slot", "4", "--no-probe"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "v5e: 8 chips this machine may open, of 8 on its PCI bus; vfio nodes\n  chip 0: 0000:00:04.0 "
    )
    assert "slot 1: v5e chips 4,5,6,7, run as a v5litepod-4; nodes " in out
    assert "  TPU_VISIBLE_CHIPS=4,5,6,7\n" in out and "  TPU_PROCESS_PORT=8477\n" in out


def test_a_job_runtime_without_libtpu_is_refused_on_a_tpu_host(tmp_path):
    from importlib.metadata import version

    from sandbox.jail.runtime import Runtime

    runtime = Runtime(tmp_path)
    runtime.python.parent.mkdir(parents=True)
    runtime.python.touch()
    (tmp_path / ".installed").touch()
    runtime.site_packages.mkdir(parents=True)
    for dist in ("jax", "jaxlib"):
        (runtime.site_packages / f"{dist}-{version(dist)}.dist-info").mkdir()
    assert runtime.problem() is None
    assert runtime.problem(tpu=True) == (
        f"this host has TPU chips, but the job runtime at {tmp_path} has no libtpu "
        "(run scripts/install-job-runtime --extra tpu)"
    )
    (runtime.site_packages / "libtpu-0.0.50.1.dist-info").mkdir()
    assert runtime.problem(tpu=True) is None
