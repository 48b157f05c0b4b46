"""A sweep config's compile verdicts (`sweep`, step 4): the kernel lowered, and compiled by the chip's
own compiler where libtpu is here (`lowering.check`), for the job's chip and each `--lower-for` chip.

The chip's compiler has the last word on VMEM where it ran: the count's `over_vmem` is a prediction of
its refusal, so a config the compiler compiles is back in the running, and one it refuses for its VMEM
is `over_vmem` with the compiler's own figures. Any other refusal is `rejected`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from sandbox.harness.errors.chip import scoped_vmem_refusal
from sandbox.harness.lowering import check as lowering
from sandbox.harness.target import Target
from sandbox.protocol import ConfigResult, LoweringVerdict
from sandbox.protocol.chips import Chip


def judged(
    result: ConfigResult, target: Target, chips: Sequence[Chip], fn: Callable[..., Any], args: Any
) -> ConfigResult:
    """`result` with its `lowering` verdicts (the first chip is the job's) and the status they make."""
    verdicts = []
    over_vmem: list[bool] = []  # per chip: the chip's compiler refused it for its VMEM
    for chip in chips:
        checked = lowering.check(fn, args, target, chip, ir=False)
        error = checked.error
        refusal = (
            scoped_vmem_refusal(error.traceback) if error is not None and checked.compiled is False else ""
        )
        message = refusal or (error.message[:1000] if error else "")  # a refusal: the compiler's figures
        over_vmem.append(bool(refusal))
        verdicts.append(
            LoweringVerdict(
                chip=chip,
                lowers=checked.lowers,
                message=message,
                warnings=checked.warnings,
                compiled=checked.compiled,
            )
        )
    result = dataclasses.replace(result, lowering=tuple(verdicts))
    mine = verdicts[0]
    if result.status == "over_vmem" and mine.compiled is True:
        result = dataclasses.replace(result, status="ok", reason="")
    elif over_vmem[0]:
        return dataclasses.replace(result, status="over_vmem", reason=mine.message)
    rejected = [v for v in verdicts if v.lowers is False]
    if rejected and result.status == "ok":
        names = ", ".join(v.chip for v in rejected)
        reason = f"rejected by the TPU compiler for {names}: {sentence(rejected[0].message)}"
        result = dataclasses.replace(result, status="rejected", reason=reason)
    return result


def sentence(text: str, limit: int = 200) -> str:
    """The first sentence of a compiler message (they run on with shapes and index maps)."""
    first = text.split(". ", 1)[0].rstrip(".")
    return first if len(first) <= limit else first[: limit - 1] + "…"
