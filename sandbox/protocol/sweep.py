"""A sweep ("Tune"): kernel parameters × value lists, each config judged and estimated at a target size.

The request travels in `Job.sweep` (`SweepSpec`); the child checks one config at a time and reports
each as a `config` event (`ConfigResult`); `classify` gathers them into `RunResult.sweep`
(`SweepResult`). A sweep may be split over several jobs (shards, `SweepSpec.only`); the server
merges their configs back into one result.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Literal

from sandbox.protocol.chips import Chip
from sandbox.protocol.estimate import Estimate

ParamValue = bool | int | float | str

# Why a config is not a candidate, in the order they are decided: it cannot even be traced at the
# target size, or fails at the check size ("error"); it needs more VMEM than the chip has
# ("over_vmem"); the TPU compiler rejects it ("rejected"); it computes the wrong answer ("wrong").
# A correct, accepted config with no time to rank it by (the model gave no estimate and nothing was
# measured) is "unestimated", not "ok": "ok" means a candidate for the best config.
ConfigStatus = Literal["ok", "error", "over_vmem", "rejected", "wrong", "unestimated"]
# How the Tune tab names each (frontend/static/js/vocab.js is generated from this by scripts/vocab.py).
CONFIG_WORDS: dict[ConfigStatus, str] = {
    "ok": "ok",
    "error": "error",
    "over_vmem": "over VMEM",
    "rejected": "rejected",
    "wrong": "wrong",
    "unestimated": "no estimate",
}


@dataclass(frozen=True)
class SweepSpec:
    params: dict[str, tuple[ParamValue, ...]]  # keyword arguments of the kernel and their values
    size: dict[str, int]  # the target problem size (keyword arguments of make_inputs)
    chips: tuple[Chip, ...] = ()  # lower for these chips too (the job's chip always)
    check_size: dict[str, int] = field(default_factory=dict)  # correctness size, before fitting blocks
    bind: dict[str, str] = field(default_factory=dict)  # parameter → the size dimension its block tiles
    only: tuple[int, ...] = ()  # this job's configs (indices into the full product); () = all
    case: str = ""  # catalog mode: the case whose dtype and seed the sweep uses

    @property
    def total(self) -> int:
        return math.prod(len(v) for v in self.params.values())

    def configs(self) -> list[tuple[int, dict[str, ParamValue]]]:
        """(index, params) of this job's configs: the product of the value lists, row-major."""
        names = list(self.params)
        wanted = set(self.only)
        return [
            (i, dict(zip(names, values, strict=True)))
            for i, values in enumerate(itertools.product(*self.params.values()))
            if not wanted or i in wanted
        ]

    def check_dims(self, params: dict[str, ParamValue], base: dict[str, int]) -> dict[str, int]:
        """The correctness size for one config: `base`, each bound dimension rounded up to a
        multiple of the blocks that tile it (so a 512 block gets a 512 problem, not a failure)."""
        dims = {**base, **self.check_size}
        for dim in dims:
            blocks = [
                int(v) for p, v in params.items() if self.bind.get(p) == dim and isinstance(v, int) and v > 0
            ]
            step = math.lcm(*blocks) if blocks else 1
            dims[dim] = -(-dims[dim] // step) * step
        return dims


@dataclass(frozen=True)
class LoweringVerdict:
    chip: Chip
    lowers: bool | None  # None: could not be checked
    message: str = ""  # the compiler's first line when it rejects
    warnings: tuple[str, ...] = ()
    compiled: bool | None = None  # libtpu's own compile for the chip, off the chip (`LoweringCheck.compiled`)


# A measured time this far under its roofline (flops at the MXU's peak, bytes at HBM bandwidth) is not a run the
# chip made faster than it can: the timing missed part of it (a kernel's config; XLA's own op's, `measure`).
FASTER_THAN_ROOFLINE = 1.02


@dataclass(frozen=True)
class ConfigResult:
    index: int  # in the full product, row-major over the params in the order given
    params: dict[str, ParamValue]
    status: ConfigStatus
    reason: str  # one line for the table: why this status
    check_size: dict[str, int]
    estimated_seconds: float | None = None
    bound: str | None = None
    roofline_fraction: float | None = None
    steps: int | None = None
    vmem_bytes: int | None = None
    vmem_capacity_bytes: int | None = None
    lowering: tuple[LoweringVerdict, ...] = ()
    correct: bool | None = None  # at the check size; None: not checked (already ruled out, or no reference)
    max_abs_error: float | None = None
    measured_seconds: float | None = None  # on a TPU host: the median device time at the target size
    measured_host_seconds: float | None = None  # the median host dispatch around it (profiler traces)
    # On a TPU host: XLA's own op (the entry's plain-jnp reference, jitted) at the target size, its
    # median device time on this chip; the same for every config of a sweep (the baseline it is shown against).
    xla_measured_seconds: float | None = None
    xla_not_measured: str = ""  # on a TPU host where XLA's op was not timed: why (`measure`'s words)
    estimate: Estimate | None = None
    host_seconds: dict[str, float] = field(default_factory=dict)  # what each phase cost here

    @property
    def measured_roofline_fraction(self) -> float | None:
        """The roofline (the estimate's: its flops at the MXU's peak, its bytes at HBM bandwidth) over the
        measured time; above 1 (a few percent of slack aside) the timing missed part of the run."""
        if not self.measured_seconds or self.estimated_seconds is None or self.roofline_fraction is None:
            return None
        return self.estimated_seconds * self.roofline_fraction / self.measured_seconds

    @property
    def faster_than_the_chip(self) -> bool:
        """Measured past the roofline (`FASTER_THAN_ROOFLINE`): the estimate's roofline counts the bytes a
        program moves where fewer than its operands' (a kernel that reads a slice of an input, or none of
        one), so only a timing that missed part of the run beats it."""
        fraction = self.measured_roofline_fraction
        return fraction is not None and fraction > FASTER_THAN_ROOFLINE


@dataclass(frozen=True)
class SweepResult:
    chip: Chip
    spec: SweepSpec
    total: int  # configs in the full product
    configs: tuple[ConfigResult, ...]
    best: int | None  # index of the fastest "ok" config (measured time if every ok one has one)
    note: str = ""
