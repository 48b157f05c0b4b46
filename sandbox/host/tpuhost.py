"""The TPU host a runner sits on: its chips (read from sysfs), their device nodes, and its chip slots.

Host side, no JAX. `discover()` finds the chips the way JAX does (`jax/_src/hardware_utils.py`:
PCI vendor 0x1ae0 and a known device id under /sys/bus/pci/devices) and then each chip's device
node: an accel node (`/sys/class/accel/accel<N>/device` links to the chip) or a VFIO group
(`/sys/bus/pci/devices/<bdf>/iommu_group` names the group; the node is `/dev/vfio/<group>`, opened
together with the container node `/dev/vfio/vfio`). `plan_slots()` splits the chips into slots of
equal size, each with exactly its chips' nodes; `jobenv.tpu_environment()` turns a slot into the
variables libtpu reads. Only chips whose node exists are usable (a VM given one chip of a
four-chip host lists all four in sysfs); they are numbered in PCI address order, the order
`TPU_VISIBLE_CHIPS` is assumed to count in (a one-chip VM cannot tell: see docs/tpu-vm.md).
`environment_notes()` says where the VM's own host-wide `TPU_*` variables disagree with what it may
open: reported, never fatal (jobs get their own variables).

Measured on a TPU v5e VM (2026-12-05, libtpu 0.0.50.1): PCI id 0x0063, VFIO nodes, one usable chip of
four listed. Sources for the rest of the table (re-check on hardware):
- PCI device ids: jax `jax/_src/hardware_utils.py` (`_TPU_PCI_DEVICE_IDS`).
- chips per host and TensorCores per chip: Cloud TPU system architecture pages (v5e, v5p, v6e,
  TPU7x); ray `python/ray/_private/accelerators/tpu.py` (v5litepod and v6e: 8 chips per host, one
  core per chip; v4/v5p: 4 chips, two cores); JAX devices per chip: `TPU7x` shows two per chip,
  v5p one per chip (megacore).
- accelerator type names: v5e is `v5litepod-<chips>`, v6e `v6e-<chips>`, v5p `v5p-<TensorCores>`
  (a v5p-8 host has 4 chips); TPU7x `tpu7x-<TensorCores>` (not verified).
- chip boxes (`TPU_CHIPS_PER_HOST_BOUNDS`): 1 chip `1,1,1`, 2 chips `1,2,1` (ray), 4 chips `2,2,1`,
  8 chips `2,4,1` (v5e/v6e hosts are 2x4; torch_xla `_internal/tpu.py`, GKE's TPU topology table).
- device style: VFIO on v5e, v6e and later (v5p per gVisor's TPU guide), accel nodes on v4.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from sandbox.protocol import Chip, Mode

GOOGLE_PCI_VENDOR = "0x1ae0"
Bounds = tuple[int, int, int]


@dataclass(frozen=True)
class Generation:
    """One TPU generation as a host presents it."""

    chip: Chip
    pci_device_id: str
    chips_per_host: int  # on the largest single-host VM of this generation
    cores_per_chip: int  # TensorCores
    devices_per_chip: int  # JAX devices (megacore chips present one; TPU7x two)
    accelerator_prefix: str
    type_counts_cores: bool  # the accelerator type counts TensorCores (v5p-8 = 4 chips), not chips
    device_style: Literal["vfio", "accel"]

    def accelerator_type(self, chips: int) -> str:
        """`TPU_ACCELERATOR_TYPE` of a single-host VM with `chips` chips (e.g. v5litepod-8, v5p-8)."""
        return f"{self.accelerator_prefix}-{chips * (self.cores_per_chip if self.type_counts_cores else 1)}"


GENERATIONS: tuple[Generation, ...] = (
    Generation("v5e", "0x0063", 8, 1, 1, "v5litepod", False, "vfio"),
    Generation("v5p", "0x0062", 4, 2, 1, "v5p", True, "vfio"),
    Generation("v6e", "0x006f", 8, 1, 1, "v6e", False, "vfio"),
    Generation("tpu7x", "0x0076", 4, 2, 2, "tpu7x", True, "vfio"),
)
# Chips offered to simulate, lower and estimate, but not found on hosts: JAX 0.12.0.1 describes
# TPU8i and TPU8t (`tpu_info`), but no public source gives their PCI device ids or host layouts.
SIMULATED_ONLY: tuple[Chip, ...] = ("tpu8i", "tpu8t")
BY_PCI_ID = {g.pci_device_id: g for g in GENERATIONS}
# A box of chips for each slot size: what TPU_CHIPS_PER_HOST_BOUNDS / _PER_PROCESS_BOUNDS say.
CHIP_BOXES: dict[int, Bounds] = {1: (1, 1, 1), 2: (1, 2, 1), 4: (2, 2, 1), 8: (2, 4, 1)}


def generation_of(chip: Chip) -> Generation:
    return next(g for g in GENERATIONS if g.chip == chip)


@dataclass(frozen=True)
class TpuChip:
    pci_address: str  # e.g. 0000:00:04.0
    nodes: tuple[str, ...]  # this chip's own device node(s): /dev/accel<N> or /dev/vfio/<group>


@dataclass(frozen=True)
class AbsentChip:
    """A chip the PCI bus lists but this VM may not open: its device node does not exist (a TPU VM
    given one chip of a four-chip host sees all four in sysfs, and one node)."""

    pci_address: str
    expected_node: str  # the node it would have: /dev/vfio/<group>, or "" when sysfs names none


@dataclass(frozen=True)
class TpuHost:
    generation: Generation
    chips: tuple[TpuChip, ...]  # the usable ones, in PCI address order: index i is TPU_VISIBLE_CHIPS=i
    style: Literal["vfio", "accel"]
    dev_root: str = "/dev"
    absent: tuple[AbsentChip, ...] = ()

    @property
    def accelerator_type(self) -> str:
        return self.generation.accelerator_type(len(self.chips))

    def device_nodes(self, chips: tuple[int, ...]) -> tuple[str, ...]:
        """The nodes a process owning `chips` opens, and no others."""
        own = tuple(node for i in chips for node in self.chips[i].nodes)
        return (os.path.join(self.dev_root, "vfio/vfio"), *own) if self.style == "vfio" else own


@dataclass(frozen=True)
class TpuSlot:
    """A set of chips one job at a time owns, and what it needs to reach them."""

    index: int  # among the host's TPU slots: picks its ports
    chip: Chip
    accelerator_type: str  # of a VM with just this slot's chips: what libtpu is told
    chips: tuple[int, ...]
    box: Bounds
    device_nodes: tuple[str, ...]
    devices: int  # JAX devices the slot shows

    def describe(self) -> str:
        chips = ",".join(map(str, self.chips))
        return (
            f"{self.chip} chip{'s' if len(self.chips) > 1 else ''} {chips}, run as a {self.accelerator_type}"
        )


class TpuHostError(RuntimeError):
    """The TPU chips of this host cannot be used as found (unknown generation, missing nodes)."""


def discover(sys_root: str = "/sys", dev_root: str = "/dev") -> TpuHost | None:
    """This host's usable TPU chips, or None on a host without any on its PCI bus. Roots are for tests.

    A chip is usable when its device node exists: that is what a VM is given (measured on a TPU v5e
    VM that lists four chips in sysfs and has one `/dev/vfio/<group>`; JAX opened that one). Chips
    without a node are kept in `absent`, not fatal; a host that lists chips but may open none of
    them is an error that names them.
    """
    found = _pci_chips(Path(sys_root))
    if not found:
        return None
    generation = found[0][1]
    accel = _accel_nodes(Path(sys_root), dev_root)
    chips: list[TpuChip] = []
    absent: list[AbsentChip] = []
    styles = set()
    for address, _ in found:
        node = _chip_node(Path(sys_root), dev_root, address, accel, generation.device_style)
        if isinstance(node, AbsentChip):
            absent.append(node)
            continue
        chips.append(TpuChip(address, (node[0],)))
        styles.add(node[1])
    if not chips:
        raise TpuHostError(
            f"this machine lists {len(found)} {generation.chip} chip{'s' if len(found) > 1 else ''} on its "
            "PCI bus but may open none: "
            + "; ".join(f"{a.pci_address} has no {a.expected_node or 'device node'}" for a in absent)
        )
    if len(styles) > 1:
        raise TpuHostError("some chips have accel nodes and others VFIO groups")
    return TpuHost(generation, tuple(chips), styles.pop(), dev_root, tuple(absent))


@functools.cache  # asked per run request; chips do not come and go under a running server
def host_chip(sys_root: str = "/sys") -> Chip | None:
    """The chip of this host's TPUs from their PCI ids alone (no device node needed: a web server's
    container sees /sys but not the chips); None on a host without any."""
    found = _pci_chips(Path(sys_root))
    return found[0][1].chip if found else None


def _pci_chips(sys_root: Path) -> list[tuple[str, Generation]]:
    """(PCI address, generation) of every TPU chip, in address order; all of one generation."""
    found: list[tuple[str, Generation]] = []
    for device in sorted((sys_root / "bus/pci/devices").glob("*")):
        if _read(device / "vendor") != GOOGLE_PCI_VENDOR:
            continue
        generation = BY_PCI_ID.get(_read(device / "device"))
        if generation is None:
            raise TpuHostError(
                f"PCI device {device.name} is a Google TPU of an unknown generation "
                f"(device id {_read(device / 'device')}); this playground knows "
                + ", ".join(f"{g.chip} ({g.pci_device_id})" for g in GENERATIONS)
            )
        found.append((device.name, generation))
    generations = {g.chip for _, g in found}
    if len(generations) > 1:
        raise TpuHostError(f"chips of several generations on one host: {sorted(generations)}")
    return found


def _chip_node(
    sys_root: Path, dev_root: str, address: str, accel: dict[str, str], prefer: str
) -> tuple[str, Literal["vfio", "accel"]] | AbsentChip:
    """One chip's node and its style, looked for in the style its generation uses first (a host may
    bind a chip to vfio-pci or to the accel driver); `AbsentChip` when neither node exists."""
    group = sys_root / "bus/pci/devices" / address / "iommu_group"
    vfio = (
        os.path.join(dev_root, "vfio", os.path.basename(os.readlink(group))) if group.is_symlink() else None
    )
    found: dict[str, str] = {}
    if address in accel:
        found["accel"] = accel[address]
    if vfio is not None and os.path.exists(vfio):
        found["vfio"] = vfio
    for style in (prefer, "vfio", "accel"):
        if style in found:
            return found[style], "vfio" if style == "vfio" else "accel"
    return AbsentChip(address, vfio or "")


def _accel_nodes(sys_root: Path, dev_root: str) -> dict[str, str]:
    """PCI address → /dev/accel<N>, for the accel class devices whose node exists."""
    nodes = {}
    for entry in sorted((sys_root / "class/accel").glob("accel*")):
        link = entry / "device"
        node = os.path.join(dev_root, entry.name)
        if link.is_symlink() and os.path.exists(node):
            nodes[os.path.basename(os.readlink(link))] = node
    return nodes


def plan_slots(host: TpuHost, chips_per_slot: int = 1) -> tuple[TpuSlot, ...]:
    """Split the host's chips into slots of `chips_per_slot` consecutive chips."""
    total = len(host.chips)
    if chips_per_slot not in CHIP_BOXES or total % chips_per_slot:
        sizes = [n for n in CHIP_BOXES if n <= total and total % n == 0]
        raise TpuHostError(
            f"a {host.accelerator_type} host ({total} chips) splits into slots of "
            f"{', '.join(map(str, sizes))} chips, not {chips_per_slot}"
        )
    slots = []
    for index in range(total // chips_per_slot):
        chips = tuple(range(index * chips_per_slot, (index + 1) * chips_per_slot))
        slots.append(
            TpuSlot(
                index=index,
                chip=host.generation.chip,
                # The slot's own type, not the host's: measured on a v5e VM with one of four chips,
                # libtpu 0.0.50.1 opened it as a v5litepod-1 with a 1,1,1 box.
                accelerator_type=host.generation.accelerator_type(chips_per_slot),
                chips=chips,
                box=CHIP_BOXES[chips_per_slot],
                device_nodes=host.device_nodes(chips),
                devices=chips_per_slot * host.generation.devices_per_chip,
            )
        )
    return tuple(slots)


def host_slots(chips_per_slot: int = 1) -> tuple[TpuSlot, ...]:
    """This host's chip slots: none on a host without TPU chips."""
    host = discover()
    return plan_slots(host, chips_per_slot) if host is not None else ()


# The VM's own variables that describe a host's chips; a job never inherits them (`jobenv`).
HOST_VARIABLES = ("TPU_ACCELERATOR_TYPE", "TPU_CHIPS_PER_HOST_BOUNDS", "TPU_TOPOLOGY", "TPU_VISIBLE_CHIPS")


def environment_notes(host: TpuHost, environ: Mapping[str, str]) -> list[str]:
    """Where this VM's `TPU_*` variables describe other chips than the ones it may open."""
    notes = []
    usable = len(host.chips)
    kind = environ.get("TPU_ACCELERATOR_TYPE", "")
    if kind and kind != host.accelerator_type:
        notes.append(
            f"TPU_ACCELERATOR_TYPE={kind} names another host than the {usable} chip"
            f"{'s' if usable > 1 else ''} this machine may open ({host.accelerator_type})"
        )
    box = environ.get("TPU_CHIPS_PER_HOST_BOUNDS", "")
    if box and _box_chips(box) not in (None, usable):
        notes.append(f"TPU_CHIPS_PER_HOST_BOUNDS={box} is a box of {_box_chips(box)} chips, not {usable}")
    visible = environ.get("TPU_VISIBLE_CHIPS", "")
    if visible and len([c for c in visible.split(",") if c.strip()]) != usable:
        notes.append(f"TPU_VISIBLE_CHIPS={visible} names other chips than the {usable} with a node")
    if notes:
        notes.append("jobs get variables of their own chips, so these are only reported")
    return notes


def _box_chips(box: str) -> int | None:
    try:
        x, y, z = (int(v) for v in box.split(","))
    except ValueError:
        return None
    return x * y * z


def resolve_mode(mode: Mode, chip: Chip, host_chip: Chip | None) -> Mode:
    """Where a run goes, decided once where its job is made: `auto` runs natively when the chosen chip
    is this host's and is simulated otherwise; `tpu` and `interpret` stay as asked."""
    if mode != "auto":
        return mode
    return "tpu" if host_chip is not None and chip == host_chip else "interpret"


def runs_on_chip(mode: str, chip: Chip, host_chip: Chip | None, role: str = "kernel") -> bool:
    """Whether a job goes to a chip slot: mode `tpu` always (the harness refuses a chip the host does
    not have, by its real name); `auto` (a job made before `resolve_mode`) when the chosen chip is
    this host's. Never a reference's job: it computes the expected outputs in exact arithmetic on the
    CPU, the same for a simulated and a native run, and one program at a time may hold a chip."""
    if host_chip is None or role == "reference":
        return False
    return mode == "tpu" or (mode == "auto" and chip == host_chip)


def cpu_share(cpus: list[int], index: int, count: int) -> tuple[int, ...]:
    """The `index`-th of `count` equal, contiguous shares of `cpus` (all of them if they are fewer
    than the shares)."""
    ordered = sorted(cpus)
    if count <= 1 or len(ordered) < count:
        return tuple(ordered)
    size = len(ordered) // count
    return tuple(ordered[index * size : (index + 1) * size])


def _read(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""
