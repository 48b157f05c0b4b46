"""The model's estimate for a run: the kernel call the harness just checked, on the job's chip.

Traced again as a TPU would get it (interpret mode off); the call's small concrete inputs (index
tables) are read as values, so a block-sparse kernel's skipped blocks are seen. The model is an
extra: if it cannot handle a kernel, the run goes on without an estimate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sandbox.harness.model.estimate import estimate_jaxpr, known_values, trace
from sandbox.harness.model.families import registry
from sandbox.harness.model.outside import outside_work, xla_kind
from sandbox.harness.target import Target
from sandbox.protocol import Estimate, chip_info


def estimate_call(fn: Callable[..., Any], args: Sequence[Any], target: Target) -> Estimate | None:
    try:
        closed = trace(fn, args, target.chip_context())
        return estimate_jaxpr(closed, known_values(args), chip_info(target.chip))
    except Exception:  # the model's limits are not the run's failure
        return None


def xla_baseline(fn: Callable[..., Any], args: Sequence[Any], target: Target) -> tuple[float | None, str]:
    """XLA's own op on the job's chip (a plain-XLA function: the entry's reference, or what a user would
    run instead of the kernel), from one trace: its device time by the model's costing of XLA's ops
    (`outside.outside_work`: fusions at HBM bandwidth, dots at the MXU's peak; None when it costs
    nothing), and how far that costing held for ops of its kind where they were timed on this chip
    (`registry.xla_validation`). (None, "") when it cannot be traced or costed."""
    try:
        closed = trace(fn, args, target.chip_context())
        chip = chip_info(target.chip)
        found = outside_work(closed, chip)
        validation = registry.xla_validation(xla_kind(closed), chip.name, chip.title)
    except Exception:  # the model's limits are not the run's failure
        return None, ""
    return float(found.seconds) or None, validation


def estimate_xla(fn: Callable[..., Any], args: Sequence[Any], target: Target) -> float | None:
    """`xla_baseline`'s device time alone."""
    return xla_baseline(fn, args, target)[0]


def xla_validation(fn: Callable[..., Any], args: Sequence[Any], target: Target) -> str:
    """`xla_baseline`'s word on how far its costing held on this chip, alone."""
    return xla_baseline(fn, args, target)[1]
