"""Read libtpu's final bundle listing (`*-final_bundles.txt`, `--xla_jf_dump_to`): how many VLIW bundles a
kernel's program has, at each loop depth, and what they issue.

A line of the listing is one bundle: its address, an optional control mark (`LB:` a loop body starts,
`LH:`, `LE:`, `PB:`/`PF:` a predicated region), one `>` per enclosing loop, then its operations between
braces, separated by `;;`. On the lent v5e a compute-bound loop ran about one bundle a cycle (ragged
paged attention: 1,524 bundles a step, 1,614 cycles a step measured), so the bundle count of a grid
step's loop body is a floor on its compute time that the compiler itself wrote.
"""

from __future__ import annotations

import collections
import re
from dataclasses import dataclass, field
from pathlib import Path

_BUNDLE = re.compile(r"\s*(0x[0-9a-f]+|\d+)\s+(\w\w:)?\s*:?\s*([> ]*)\{(.*)\}")
_OP = re.compile(r"=\s*([a-z_][\w.]*)")
_TRANSCENDENTAL = ("vexp", "vrcp", "vrsqrt", "vtanh", "vlog", "vpow", "verf", "vsin", "vcos", "vsigmoid")
_CROSS_LANE = ("vrot", "vxpose", "vperm", "vbcast.lane")


def unit_of(op: str) -> str:
    """The part of the core an operation of the listing issues on, by its mnemonic: "mxu" (pushing weights,
    matmuls), "pop" (a result taken from the MXU, the EUP or the cross-lane unit into a vreg), "eup"
    (transcendentals), "xlu" (cross-lane: lane reductions, rotates), "load" and "store" (VMEM <-> vregs),
    "valu" (every other vector operation), "dma", else "scalar"."""
    if op.startswith(("vmatmul", "vmatpush")):
        return "mxu"
    if op.startswith("vpop"):
        return "pop"
    if op.startswith(_TRANSCENDENTAL):
        return "eup"
    if ".xlane" in op or op.startswith(_CROSS_LANE):
        return "xlu"
    if op.startswith("vld"):
        return "load"
    if op.startswith("vst"):
        return "store"
    if op.startswith("dma"):
        return "dma"
    return "valu" if op.startswith("v") else "scalar"


@dataclass
class Listing:
    """One program's bundles: per loop depth, how many; per operation name, how many (loops once each)."""

    bundles: int = 0
    by_depth: collections.Counter[int] = field(default_factory=collections.Counter)
    ops: collections.Counter[str] = field(default_factory=collections.Counter)
    # Per loop depth, operations per unit (`unit_of`), and the most of each unit one bundle issued.
    units_by_depth: dict[int, collections.Counter[str]] = field(default_factory=dict)
    most_per_bundle: collections.Counter[str] = field(default_factory=collections.Counter)

    @property
    def deepest(self) -> int:
        return max(self.by_depth, default=0)

    def in_loops(self) -> int:
        """Bundles inside any loop (a grid kernel's step body, its own loops in it)."""
        return sum(n for depth, n in self.by_depth.items() if depth >= 1)


def read(path: Path) -> Listing:
    found = Listing()
    for line in path.read_text().splitlines():
        match = _BUNDLE.match(line)
        if match is None:
            continue
        depth = match.group(3).count(">")
        found.bundles += 1
        found.by_depth[depth] += 1
        here: collections.Counter[str] = collections.Counter()
        for op in match.group(4).split(";;"):
            name = _OP.search(op)
            if name is not None:
                found.ops[name.group(1)] += 1
                here[unit_of(name.group(1))] += 1
        found.units_by_depth.setdefault(depth, collections.Counter()).update(here)
        for unit, n in here.items():
            found.most_per_bundle[unit] = max(found.most_per_bundle[unit], n)
    return found


def kernel_listings(folder: Path, names: set[str] | None = None) -> dict[str, Listing]:
    """The final listings in a dump folder, by program name, leaving out XLA's own wrappers (the
    top-level program and its late initialization and finalization)."""
    found: dict[str, Listing] = {}
    for path in sorted(folder.glob("*-final_bundles.txt")):
        if "schedule-analysis" in path.name:
            continue
        name = re.sub(r"^\d+-", "", path.name).rsplit("-", 2)[0]
        if name == "TLP" or name.startswith("<late-") or (names is not None and name not in names):
            continue
        found[name] = read(path)
    return found
