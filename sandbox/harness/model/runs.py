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


def estimate_xla(fn: Callable[..., Any], args: Sequence[Any], target: Target) -> float | None:
    """The device time of a plain-XLA function (the entry's reference: what a user would run instead of
    the kernel) on the job's chip, by the model's costing of XLA's ops (`outside.outside_work`: fusions
    at HBM bandwidth, dots at the MXU's peak); None when it cannot be costed or costs nothing."""
    try:
        closed = trace(fn, args, target.chip_context())
        found = outside_work(closed, chip_info(target.chip))
    except Exception:  # the model's limits are not the run's failure
        return None
    return float(found.seconds) or None


def xla_validation(fn: Callable[..., Any], args: Sequence[Any], target: Target) -> str:
    """How far `estimate_xla` held for XLA ops of this kind on this chip, where they were timed on it
    (`registry.xla_validation`); "" when the function cannot be traced."""
    try:
        kind = xla_kind(trace(fn, args, target.chip_context()))
    except Exception:  # the model's limits are not the run's failure
        return ""
    chip = chip_info(target.chip)
    return registry.xla_validation(kind, chip.name, chip.title)
