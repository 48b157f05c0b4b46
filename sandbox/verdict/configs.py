"""One sweep config's verdict, made outside the sweep's processes (numpy only, like all of `verdict`).

A sweep's kernel process sends each config's own account (trace, VMEM, estimate, lowering, a
measured time) and the outputs it returned at its check size (`ConfigRan`); the reference's
process sent the expected outputs per check size. Here a config becomes `ok` (or `unestimated`)
only if its outputs match the expected ones, on the reference's inputs, under the declared
tolerances; `wrong` if they do not; `error` if it claims a check it sent no readable outputs for.
The process's own `correct`, `max_abs_error` and reason for a checked config are discarded. A
config the process rules out itself (an error, VMEM, the compiler) keeps that status: a process
can only hurt its own configs that way, never make one `ok`. Its parameters and check size are
the checker's, from the spec and the reference, never the process's word.
"""

from __future__ import annotations

import math
from dataclasses import fields, replace
from typing import Any

from sandbox.protocol import ConfigResult, Estimate, OutputCheck, Tolerance
from sandbox.protocol.arrays import MAX_CASE_ARRAY_BYTES, MAX_JOB_ARRAY_BYTES
from sandbox.protocol.events import ConfigRan
from sandbox.protocol.sweep import ParamValue
from sandbox.verdict import arrays
from sandbox.verdict.compare import compare
from sandbox.verdict.judge import INPUTS_DIFFER, Expected, layout_note
from sandbox.verdict.tolerances import output_tolerance

# The statuses a process reports for a config that reached its check: the checker decides them.
CHECKED = frozenset({"ok", "wrong", "unestimated"})
# The process's own words that end up in a reason, clipped: they are only its account.
WORDS = 300
NO_KERNEL = "no Pallas kernel ran (pallas_call or pl.kernel): this exercise asks for one"
NO_EXPECTED = (
    f"the reference's outputs at this size pass what the checker takes (at most "
    f"{MAX_CASE_ARRAY_BYTES >> 20} MiB per config, {MAX_JOB_ARRAY_BYTES >> 20} MiB per sweep job): "
    "sweep fewer configs or choose a smaller check size"
)


def judge_config(
    ran: ConfigRan,
    params: dict[str, ParamValue],
    expected: Expected | None,
    declared: dict[str, Tolerance],
    *,
    has_reference: bool,
    expects_kernel: bool = False,
    on_chip: bool = False,
) -> ConfigResult:
    """The config's row as followers and the sweep's verdict see it. `on_chip`: the job ran on a TPU, the
    only place a config's time can have been measured."""
    result = replace(bounded(ran.result, on_chip=on_chip), params=params, correct=None, max_abs_error=None)
    if expected is not None:
        result = replace(result, check_size=dict(expected.event.case.dims))
    if result.status not in CHECKED:
        return result
    where = ", ".join(f"{k}={v}" for k, v in result.check_size.items())
    how, note = ran.how[:40], ran.note[:WORDS]
    if not ran.ran:
        return replace(
            result, status="error", reason=f"at {where}: the kernel's process sent no outputs to check"
        )
    if not has_reference:
        return ranked(
            replace(result, reason=ok_reason(result, note, f"ran at {where} ({how}; no reference to check)"))
        )
    if expected is None:
        return replace(result, status="error", reason=f"at {where}: {NO_EXPECTED}")
    try:
        checks = _compare(ran, expected, declared)
    except arrays.ChannelError as exc:
        return replace(result, status="error", reason=f"at {where}: the outputs could not be checked: {exc}")
    judged = _verdict(result, checks, ran, expected, where, how, note)
    if expects_kernel and ran.kernels == 0 and judged.correct:
        return replace(judged, status="error", reason=f"correct at {where}, but {NO_KERNEL}")
    return judged


# How much of the process's account a row keeps: its chips' lowering verdicts, its phases' times.
MAX_LOWERINGS = 8
MAX_PHASES = 16
MAX_DIMS = 16  # a check size's dimensions
MAX_NOTES = 8  # an estimate's notes, assumptions, kernels and step classes


def bounded(result: ConfigResult, *, on_chip: bool) -> ConfigResult:
    """The process's account of a config with every field it set held to what a real one can be: its
    words clipped, times and sizes finite and not negative (else unknown), lists and tables short, and
    no measured time from a job that ran off the chip (where the sweep would rank by a made-up one)."""
    measured = _seconds(result.measured_seconds) if on_chip else None
    phases = list(result.host_seconds.items())[:MAX_PHASES]
    return replace(
        result,
        check_size={
            str(k)[:40]: v for k, v in list(result.check_size.items())[:MAX_DIMS] if _count(v) is not None
        },
        estimate=_bounded_estimate(result.estimate),
        reason=result.reason[:WORDS],
        bound=result.bound[:40] if result.bound is not None else None,
        estimated_seconds=_seconds(result.estimated_seconds),
        roofline_fraction=_seconds(result.roofline_fraction),
        steps=_count(result.steps),
        vmem_bytes=_count(result.vmem_bytes),
        vmem_capacity_bytes=_count(result.vmem_capacity_bytes),
        lowering=result.lowering[:MAX_LOWERINGS],
        measured_seconds=measured,
        measured_host_seconds=_seconds(result.measured_host_seconds) if measured is not None else None,
        xla_measured_seconds=_seconds(result.xla_measured_seconds) if on_chip else None,
        xla_not_measured=result.xla_not_measured[:WORDS] if on_chip else "",
        host_seconds={str(k)[:40]: v for k, v in phases if _seconds(v) is not None},
    )


def _bounded_estimate(e: Estimate | None) -> Estimate | None:
    """A config's estimate as the page may show it: none where its time is not a time; its words,
    lists and other times held like the row's (a sweep's estimates carry no timeline)."""
    if e is None or _seconds(e.seconds) is None:
        return None
    words = lambda text: text[:WORDS]  # noqa: E731
    optional = ("low_seconds", "high_seconds", "xla_seconds", "host_dispatch_seconds")
    # Every time and count: finite and not negative, else nothing (None where it may be unknown, else 0).
    numbers: dict[str, Any] = {
        f.name: _seconds(v)
        if f.name in optional
        else (_seconds(v) or 0.0)
        if isinstance(v, float)
        else (_count(v) or 0)
        for f in fields(e)
        if isinstance(v := getattr(e, f.name), (int, float)) and not isinstance(v, bool)
    }
    return replace(
        e,
        **numbers,
        chip=e.chip[:40],
        family=words(e.family),
        validation=words(e.validation),
        xla_validation=words(e.xla_validation),
        notes=tuple(map(words, e.notes[:MAX_NOTES])),
        assumptions=tuple(map(words, e.assumptions[:MAX_NOTES])),
        kernels=e.kernels[:MAX_NOTES],
        classes=e.classes[:MAX_NOTES],
        timeline=(),
    )


def _seconds(value: float | None) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def _count(value: int | None) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**62 else None


def _compare(ran: ConfigRan, expected: Expected, declared: dict[str, Tolerance]) -> list[OutputCheck]:
    got = arrays.decode(ran.outputs)
    want = expected.outputs
    checks = [
        compare(name, got[i][1], w, output_tolerance(name, str(w.dtype), declared))
        for i, (name, w) in enumerate(want)
        if i < len(got)
    ]
    if len(got) != len(want):
        raise arrays.ChannelError(f"the kernel returned {len(got)} output(s), the reference {len(want)}")
    if layout := layout_note([n for n, _ in got], [n for n, _ in want]):
        raise arrays.ChannelError(layout)  # equal elements in another structure or shape: not the reference's
    return checks


def _verdict(
    result: ConfigResult,
    checks: list[OutputCheck],
    ran: ConfigRan,
    expected: Expected,
    where: str,
    how: str,
    note: str,
) -> ConfigResult:
    worst = max((c.max_abs_error or 0.0 for c in checks), default=0.0)
    bad = next((c for c in checks if not c.passed), None)
    if ran.inputs_digest != expected.event.inputs_digest:
        reason = f"wrong at {where}: {INPUTS_DIFFER}"
        return replace(result, status="wrong", correct=False, reason=reason)
    if bad is not None:
        detail = f"{bad.mismatch_count:,} of {bad.total:,} elements differ"
        reason = f"wrong at {where}: {detail} (max abs error {worst:.3g})"
        return replace(result, status="wrong", correct=False, max_abs_error=worst, reason=reason)
    checked = f"correct at {where} ({how})"
    return ranked(
        replace(
            result, status="ok", correct=True, max_abs_error=worst, reason=ok_reason(result, note, checked)
        )
    )


def ranked(result: ConfigResult) -> ConfigResult:
    """A correct config with no time to rank it by (no estimate, nothing measured) is `unestimated`."""
    timed = result.estimated_seconds is not None or result.measured_seconds is not None
    return replace(result, status="ok" if timed else "unestimated")


def ok_reason(result: ConfigResult, note: str, checked: str) -> str:
    """The row's reason for a config in the running: its estimate, then how it was checked."""
    if result.estimated_seconds is None:
        return f"{checked}; {note}" if note else checked
    fraction = f", {result.roofline_fraction:.0%} of roofline" if result.roofline_fraction is not None else ""
    return f"{result.estimated_seconds * 1e3:.3g} ms, {result.bound}-bound{fraction}; {checked}"
