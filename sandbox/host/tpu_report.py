"""`python -m sandbox tpu`, and where `--mode auto` runs: this machine's chips as a user reads them.

One line per usable chip, the chips the PCI bus lists but this VM may not open, the VM's own `TPU_*`
variables where they disagree, each slot's job environment, and what JAX sees when it opens the
first slot (`sandbox.host.chipprobe`). On a machine without a TPU: one line and exit code 1.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Callable, Mapping
from typing import TextIO

from sandbox.host import chipprobe
from sandbox.host.jobenv import base_environment, job_environment
from sandbox.host.tpuhost import TpuHost, TpuHostError, discover, environment_notes, plan_slots
from sandbox.protocol import Chip, Mode

Probe = Callable[[str, Mapping[str, str]], chipprobe.ProbeResult]


def show(
    chips_per_slot: int = 1,
    *,
    probe: Probe | None = chipprobe.probe,
    out: TextIO | None = None,
    find: Callable[[], TpuHost | None] | None = None,
    environ: Mapping[str, str] = os.environ,
    python: str = sys.executable,
) -> int:
    """Print the report (to stdout by default); 0 when a chip is usable (and, probed, JAX opened it),
    1 otherwise."""
    out, find = out or sys.stdout, find or discover
    try:
        host = find()
        if host is None:
            print("no TPU on this machine: no PCI device of vendor 0x1ae0 (Google) with a TPU id", file=out)
            return 1
        slots = plan_slots(host, chips_per_slot)
    except TpuHostError as exc:
        print(f"no usable TPU on this machine: {exc}", file=out)
        return 1
    listed = len(host.chips) + len(host.absent)
    print(
        f"{host.generation.chip}: {len(host.chips)} chip{'s' if len(host.chips) > 1 else ''} this machine "
        f"may open, of {listed} on its PCI bus; {host.style} nodes",
        file=out,
    )
    for i, chip in enumerate(host.chips):
        print(f"  chip {i}: {chip.pci_address} {' '.join(chip.nodes)}", file=out)
    for absent in host.absent:
        node = f"no {absent.expected_node}" if absent.expected_node else "no device node"
        print(f"  not given to this machine: {absent.pci_address} ({node})", file=out)
    for note in environment_notes(host, environ):
        print(f"note: {note}", file=out)
    with tempfile.TemporaryDirectory(prefix="playground-probe-") as home:
        base = base_environment(environ, home=home)
        for slot in slots:
            env = job_environment(base, devices=slot.devices, tpu=slot)
            print(f"slot {slot.index}: {slot.describe()}; nodes {' '.join(slot.device_nodes)}", file=out)
            for key, value in env.items():
                if key.startswith(("TPU_", "JAX_")):
                    print(f"  {key}={value}", file=out)
        if probe is None:
            return 0
        found = probe(python, job_environment(base, devices=slots[0].devices, tpu=slots[0]))
    print(f"slot 0: {found.describe()}", file=out)
    return 0 if found.ok else 1


def resolve_auto(
    mode: Mode, chip: Chip, find: Callable[[], TpuHost | None] | None = None
) -> tuple[Mode, str]:
    """Where a CLI run in `mode` goes on this machine, and for mode `auto` why: the chip it runs on,
    or what keeps it off one."""
    if mode != "auto":
        return mode, ""
    try:
        host = (find or discover)()
    except TpuHostError as exc:
        return "interpret", f"this machine's TPU cannot be used: {exc}"
    if host is None:
        return "interpret", "there is no TPU on this machine"
    if host.generation.chip != chip:
        return "interpret", f"this machine's TPU is a {host.generation.chip}, not a {chip}"
    return "tpu", f"this machine's {chip} chip ({host.chips[0].pci_address})"


def both_refused(chip: Chip, find: Callable[[], TpuHost | None] | None = None) -> str | None:
    """Why a CLI run in mode `both` cannot run here (it needs this machine's `chip`), or None."""
    native, why = resolve_auto("auto", chip, find)
    return (
        None if native == "tpu" else f"mode both runs the kernel on this machine's {chip} chip too, but {why}"
    )


def auto_line(mode: Mode, chip: Chip, why: str) -> str:
    """What the CLI says of a run in mode `auto`."""
    return (
        f"mode auto: native on {why}"
        if mode == "tpu"
        else f"mode auto: simulated on the CPU as a {chip} ({why})"
    )
