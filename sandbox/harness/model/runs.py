"""The model's estimate for a run: the kernel call the harness just checked, on the job's chip.

Traced again as a TPU would get it (interpret mode off); the call's small concrete inputs (index
tables) are read as values, so a block-sparse kernel's skipped blocks are seen. The model is an
extra: if it cannot handle a kernel, the run goes on without an estimate.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from sandbox.harness.jaxapi import offline
from sandbox.harness.model.estimate import estimate_jaxpr, known_values, trace
from sandbox.harness.model.families import registry
from sandbox.harness.model.outside import XLA_COMPILED, XLA_PASSES, outside_work, xla_kind
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
    run instead of the kernel): its device time (`xla_costing`), and how far that costing held for ops
    of its kind where they were timed on this chip (`registry.xla_validation`). (None, "") when it
    cannot be traced or costed."""
    seconds, kind = xla_costing(fn, args, target)
    if not kind:
        return None, ""
    chip = chip_info(target.chip)
    return seconds, registry.xla_validation(kind, chip.name, chip.title)


def xla_costing(
    fn: Callable[..., Any], args: Sequence[Any], target: Target, *, compiled: bool = True
) -> tuple[float | None, str]:
    """XLA's own op's device time on the job's chip and the kind of costing it got ("" when it cannot
    be traced or costed). Dots and element-wise loops (`outside.XLA_PLAIN`) are costed by the model from
    one trace (`outside.outside_work`: fusions at HBM bandwidth, dots at the MXU's peak). Ops XLA runs
    in several passes (`outside.XLA_PASSES`: softmax, attention, gathers, ragged dots), which the
    model's one pass made 0.01-0.72x the v5e's time, are costed by libtpu's cost analysis of the program
    it compiles for the chip (`offline.cost_seconds`; kind `XLA_COMPILED`) where the chip's compiler runs
    here and `compiled` is set; else by the model, as on a host without libtpu."""
    try:
        closed = trace(fn, args, target.chip_context())
        kind = xla_kind(closed)
        if compiled and kind == XLA_PASSES and (by_libtpu := offline.cost_seconds(target.chip, fn, args)):
            return by_libtpu, XLA_COMPILED
        return float(outside_work(closed, chip_info(target.chip)).seconds) or None, kind
    except Exception:  # the model's limits are not the run's failure
        return None, ""


def estimate_xla(fn: Callable[..., Any], args: Sequence[Any], target: Target) -> float | None:
    """`xla_baseline`'s device time alone."""
    return xla_baseline(fn, args, target)[0]


def xla_validation(fn: Callable[..., Any], args: Sequence[Any], target: Target) -> str:
    """`xla_baseline`'s word on how far its costing held on this chip, alone."""
    return xla_baseline(fn, args, target)[1]
