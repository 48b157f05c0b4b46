"""Chip discovery on recorded TPU VM layouts (tests/data/tpu_vms/*.json): what `python -m sandbox tpu`
says, which chips a job may open, and how the VM's own host-wide `TPU_*` variables are reported.

Each layout is a sysfs and /dev as read on a VM (or as documented for one), with the VM's `TPU_*`
variables and the answer a JAX probe gave there; the test builds the tree and replays the probe.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from sandbox.host import chipprobe, tpu_report
from sandbox.host.tpuhost import TpuHostError, discover, environment_notes, plan_slots, resolve_mode

LAYOUTS = Path(__file__).resolve().parents[1] / "data" / "tpu_vms"


def build(root: Path, name: str) -> dict:
    """The layout's sysfs and /dev under `root`; returns its record."""
    data = json.loads((LAYOUTS / f"{name}.json").read_text())
    devices = root / "sys/bus/pci/devices"
    devices.mkdir(parents=True)
    (root / "sys/class/accel").mkdir(parents=True)
    (root / "dev").mkdir()
    nic = devices / "0000:00:03.0"
    nic.mkdir()
    (nic / "vendor").write_text("0x1af4\n")
    (nic / "device").write_text("0x1000\n")
    for i, chip in enumerate(data["chips"]):
        d = devices / chip["pci"]
        d.mkdir()
        (d / "vendor").write_text("0x1ae0\n")
        (d / "device").write_text(chip["device"] + "\n")
        if data["style"] == "vfio":
            os.symlink(f"../../../kernel/iommu_groups/{chip['iommu_group']}", d / "iommu_group")
        else:
            (root / f"sys/class/accel/accel{i}").mkdir()
            os.symlink(f"../../../bus/pci/devices/{chip['pci']}", root / f"sys/class/accel/accel{i}/device")
    for node in data["nodes"]:
        (root / "dev" / node).parent.mkdir(parents=True, exist_ok=True)
        (root / "dev" / node).touch()
    return data


def report(root: Path, data: dict, probe: bool = True) -> tuple[int, str]:
    out = io.StringIO()

    def replay(python: str, env: object) -> chipprobe.ProbeResult:
        recorded = data["probe"]
        return chipprobe.read_probe(recorded["stdout"], recorded["stderr"], recorded["returncode"], 3.0)

    code = tpu_report.show(
        probe=replay if probe else None,
        out=out,
        find=lambda: discover(str(root / "sys"), str(root / "dev")),
        environ=data["environ"],
    )
    return code, out.getvalue()


@pytest.mark.parametrize(
    ("name", "address", "node"),
    [
        ("v5e_one_of_four_group1", "0000:00:08.0", "vfio/1"),
        ("v5e_one_of_four_group0", "0000:00:0b.0", "vfio/0"),
    ],
)
def test_a_vm_given_one_chip_of_four_opens_that_one(tmp_path, name, address, node):
    data = build(tmp_path, name)
    host = discover(str(tmp_path / "sys"), str(tmp_path / "dev"))
    assert host is not None and [c.pci_address for c in host.chips] == [address]
    assert len(host.absent) == 3 and address not in {a.pci_address for a in host.absent}
    (slot,) = plan_slots(host)
    assert slot.accelerator_type == "v5litepod-1" and slot.chips == (0,)
    assert slot.device_nodes == (str(tmp_path / "dev/vfio/vfio"), str(tmp_path / "dev" / node))
    code, text = report(tmp_path, data)
    assert code == 0
    assert text.splitlines()[0] == "v5e: 1 chip this machine may open, of 4 on its PCI bus; vfio nodes"
    assert f"  chip 0: {address} {tmp_path / 'dev' / node}" in text
    assert text.count("not given to this machine:") == 3
    assert (
        "note: TPU_ACCELERATOR_TYPE=v5litepod-4 names another host than the 1 chip this machine may open"
        in text
    )
    assert "TPU_CHIPS_PER_HOST_BOUNDS=2,2,1 is a box of 4 chips, not 1" in text
    assert "  TPU_ACCELERATOR_TYPE=v5litepod-1" in text and "  TPU_RUNTIME_METRICS_PORTS=" in text
    assert text.rstrip().endswith("slot 0: JAX sees 1 × TPU v5 lite (3.0 s to open)")


def test_a_chip_held_by_another_program_is_named_with_its_holder(tmp_path):
    data = build(tmp_path, "v5e_chip_held")
    code, text = report(tmp_path, data)
    assert code == 1
    assert text.rstrip().endswith("slot 0: the chip is held by another program (pid 3139); jobs wait for it")


def test_accel_nodes_are_usable_chips(tmp_path):
    data = build(tmp_path, "v5p_accel")
    code, text = report(tmp_path, data, probe=False)
    assert code == 0
    assert "v5p: 4 chips this machine may open, of 4 on its PCI bus; accel nodes" in text
    assert text.count("slot ") == 4 and "run as a v5p-2" in text  # a v5p chip is two TensorCores
    assert "note:" not in text  # v5p-8 is a host of four v5p chips: the variable agrees


def test_a_whole_host_splits_into_a_slot_per_chip_and_agrees_with_its_variables(tmp_path):
    data = build(tmp_path, "v5e_eight")
    host = discover(str(tmp_path / "sys"), str(tmp_path / "dev"))
    assert (
        host is not None
        and not host.absent
        and environment_notes(host, {"TPU_ACCELERATOR_TYPE": "v5litepod-8"}) == []
    )
    code, text = report(tmp_path, data, probe=False)
    assert code == 0 and text.count("run as a v5litepod-1") == 8


def test_a_vm_given_no_chip_says_which_it_lists(tmp_path):
    data = build(tmp_path, "v5e_none_given")
    with pytest.raises(TpuHostError, match="lists 2 v5e chips on its PCI bus but may open none"):
        discover(str(tmp_path / "sys"), str(tmp_path / "dev"))
    code, text = report(tmp_path, data)
    assert code == 1 and text.startswith("no usable TPU on this machine: ")
    assert "0000:00:08.0 has no " in text and "/dev/vfio/2" in text


def test_a_cpu_machine_says_so_in_one_line(tmp_path):
    data = build(tmp_path, "cpu_only")
    code, text = report(tmp_path, data)
    assert code == 1
    assert text == "no TPU on this machine: no PCI device of vendor 0x1ae0 (Google) with a TPU id\n"


def test_auto_mode_runs_natively_only_on_this_hosts_chip(tmp_path):
    build(tmp_path, "v5e_one_of_four_group0")
    find = lambda: discover(str(tmp_path / "sys"), str(tmp_path / "dev"))  # noqa: E731
    mode, why = tpu_report.resolve_auto("auto", "v5e", find)
    assert (mode, why) == ("tpu", "this machine's v5e chip (0000:00:0b.0)")
    assert (
        tpu_report.auto_line(mode, "v5e", why)
        == "mode auto: native on this machine's v5e chip (0000:00:0b.0)"
    )
    mode, why = tpu_report.resolve_auto("auto", "v6e", find)
    assert tpu_report.auto_line(mode, "v6e", why) == (
        "mode auto: simulated on the CPU as a v6e (this machine's TPU is a v5e, not a v6e)"
    )
    assert tpu_report.resolve_auto("interpret", "v5e", find) == ("interpret", "")
    assert resolve_mode("auto", "v5e", "v5e") == "tpu" and resolve_mode("auto", "v5e", None) == "interpret"
    assert resolve_mode("tpu", "v6e", None) == "tpu"


def test_the_cli_on_this_cpu_machine_says_there_is_no_tpu(capsys):
    from sandbox.__main__ import main

    assert main(["tpu"]) == 1
    assert capsys.readouterr().out.startswith("no TPU on this machine: ")


def test_a_probe_that_dies_reports_the_end_of_its_log():
    found = chipprobe.read_probe("", "line 1\nF1205 abort: bad topology\n", -6)
    assert not found.ok and found.error == "the probe died (line 1 | F1205 abort: bad topology)"
    assert (
        found.describe() == "JAX could not open the chip: the probe died (line 1 | F1205 abort: bad topology)"
    )
    cpu = chipprobe.read_probe('PROBE {"kinds": ["cpu"], "platform": "cpu"}\n', "", 0)
    assert not cpu.ok and cpu.describe() == "JAX started on cpu, not the TPU"


def test_the_cli_without_root_says_why_the_hardened_backend_cannot_start(capsys, monkeypatch, tmp_path):
    """The lent v5e runs commands as an ordinary user (gVisor): `--backend hardened` is one line and
    exit 2, not a traceback. The real probe runs; only the uid it sees is an ordinary user's."""
    from sandbox.__main__ import main

    source = tmp_path / "k.py"
    source.write_text("def kernel(x):\n    return x\n")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert main(["run", str(source), "--mode", "interpret", "--backend", "hardened"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: the hardened backend cannot start on this machine: ")
    assert "not root (euid 1000)" in err[0] and "--backend local" in err[0]
