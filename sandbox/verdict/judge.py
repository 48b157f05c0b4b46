"""One case's verdict, from the reference's expected outputs and what the kernel's process sent.

Every output is compared with its own tolerance; the case fails if any output does, if the kernel
sent a different number of outputs, if the race detector fired, or if the kernel was given other
inputs than the reference's (a `make_inputs` that is not a function of its seed, or a kernel that
changed them). Only what the comparison needs comes from the kernel's process as data; its notes,
races and kernel count are its own report, shown as such. An output too large to send whole is
compared on its sampled rows element by element and, every element, by its groups' sums (`sums`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sandbox.protocol import CaseResult, OutputCheck, Race, Tolerance
from sandbox.protocol.events import CaseExpected, CaseRan
from sandbox.verdict import arrays, digests, sums
from sandbox.verdict.compare import compare
from sandbox.verdict.tolerances import output_tolerance
from sandbox.verdict.vacuous import vacuous_note

INPUTS_DIFFER = (
    "the kernel was given other inputs than the reference: make_inputs must depend on its seed only "
    "(the checker makes the inputs again in a process of its own)"
)


@dataclass(frozen=True)
class Expected:
    """One case as the reference's process computed it, decoded and vetted; `sums`, the table of
    sums of its outputs too large to send whole (None if none was)."""

    event: CaseExpected
    outputs: list[tuple[str, np.ndarray]]
    sums: np.ndarray | None = field(default=None, compare=False, repr=False)
    # The vacuous-check note per set of tolerances: it reads only the expected outputs, and a kept
    # catalog reference is judged again on every run (two extra comparisons each, before the verdict).
    _vacuous: dict[tuple[tuple[str, Tolerance], ...], str] = field(
        default_factory=dict, compare=False, repr=False
    )

    @classmethod
    def of(cls, event: CaseExpected) -> Expected:
        outputs, table = digests.split(arrays.decode(event.outputs))
        digests.validate(outputs, table)
        return cls(event=event, outputs=outputs, sums=table)

    def vacuous(self, declared: dict[str, Tolerance]) -> str:
        key = tuple(sorted(declared.items()))
        if key not in self._vacuous:
            self._vacuous[key] = vacuous_note(
                self.outputs, lambda name, dtype: output_tolerance(name, dtype, declared)
            )
        return self._vacuous[key]


def judge(expected: Expected, ran: CaseRan, declared: dict[str, Tolerance]) -> CaseResult:
    """The case's verdict; `arrays.ChannelError` if the kernel's process sent unreadable outputs."""
    got, got_sums = digests.split(arrays.decode(ran.outputs))
    want = expected.outputs
    checks = tuple(
        compare(name, got[i][1], w, output_tolerance(name, str(w.dtype), declared))
        for i, (name, w) in enumerate(want)
        if i < len(got)
    )
    checks = _with_sums(checks, [n for n, _ in got], expected, got_sums)
    same_inputs = ran.inputs_digest == expected.event.inputs_digest
    layout = layout_note([n for n, _ in got], [n for n, _ in want])
    passed = (
        len(got) == len(want)
        and all(c.passed for c in checks)
        and not ran.raced
        and same_inputs
        and not layout
    )
    notes = [
        _count_note(len(got), len(want)),
        layout,
        "" if same_inputs else INPUTS_DIFFER,
        _race_note(ran.raced, ran.race_count, ran.races),
        *ran.notes,
        ran.mismatch_hint if not passed and _bf16_sized(checks, [w for _, w in want]) else "",
        _band_note(ran.chip_bands, checks[-1].tolerance if checks else None),
        expected.vacuous(declared),
    ]
    case = expected.event.case
    return CaseResult(
        name=case.name,
        dtype=case.dtype,
        dims=dict(case.dims),
        input_shapes=expected.event.input_shapes,
        tolerance=checks[-1].tolerance if checks else None,
        passed=passed,
        outputs=checks,
        seconds=ran.seconds,
        note="; ".join(filter(None, notes)),
        races=ran.races,
        kernels=ran.kernels,
    )


def _with_sums(
    checks: tuple[OutputCheck, ...], got: list[str], expected: Expected, got_sums: np.ndarray | None
) -> tuple[OutputCheck, ...]:
    """Each check of a sampled output, failed too where its groups' sums differ beyond the tolerance;
    an output the kernel's process cut otherwise than the reference's fails on its layout instead."""
    done = list(checks)
    for i, check in enumerate(checks):
        name, want = expected.outputs[i]
        cut = digests.sampling(name)[1]
        if not cut or digests.sampling(got[i])[1] != cut or expected.sums is None:
            continue
        if got_sums is None:
            raise arrays.ChannelError("the kernel's sampled outputs came without their sums")
        rows = expected.sums[:, 0] == i
        done[i] = sums.checked(check, got_sums[got_sums[:, 0] == i], expected.sums[rows], want.dtype)
    return tuple(done)


# A mismatch of the size one bf16 MXU pass gives: within this share of the output's largest value (the
# pass rounds each operand to 8 bits of mantissa: 0.15-0.31 on matmul outputs of ~20-45 on the v5e; through
# a softmax, as in attention, a few per cent of the output).
BF16_PASS_SHARE = 2.0**-4


def _bf16_sized(checks: Sequence[Any], want: Sequence[np.ndarray]) -> bool:
    """Whether every failed output differs by no more than a bf16 pass could: finite, same shape, small."""
    for check, expected in zip(checks, want, strict=False):
        if check.passed:
            continue
        finite = np.abs(expected[np.isfinite(expected)]) if np.size(expected) else np.zeros(1)
        scale = float(finite.max()) if finite.size else 0.0
        if check.nonfinite_mismatches or check.max_abs_error is None or check.shape != check.expected_shape:
            return False
        if check.max_abs_error > BF16_PASS_SHARE * scale:
            return False
    return True


def _band_note(bands: Sequence[tuple[str, float]], tolerance: Tolerance | None) -> str:
    """The chip's own transcendentals where the check is tighter than their measured error."""
    if tolerance is None:
        return ""
    wider = [(name, band) for name, band in bands if band > tolerance.rtol]
    if not wider:
        return ""
    said = ", ".join(f"{name} within {band:.2g}" for name, band in wider)
    return (
        # Bands are measured on the v5e alone (`ChipInfo.transcendental_bands`).
        f"the simulator computes these exactly; a TPU v5e (measured) gives {said} relative of exact, looser "
        f"than this check's rtol {tolerance.rtol:g}: the chip may mismatch where the simulator passes"
    )


MUTATED = "(mutated in place)"


def layout_note(got: Sequence[str], want: Sequence[str]) -> str:
    """Why outputs that compare equal element by element are still not the reference's: another
    structure (a tuple of one array, a dict, for one array) or another sampling (an output of another
    shape, which `sampled` cuts with another stride to the same shape). An in-place entry's mutated
    input stands where the reference's output is; only its sampling must agree."""
    for g, w in zip(got, want, strict=False):
        (g_base, g_cut, _), (w_base, w_cut, _) = digests.sampling(g), digests.sampling(w)
        if g_cut != w_cut:
            return (
                f"the kernel's output {g[:80]!r} is of another shape than the reference's {w!r} (both too "
                "large to send whole, each was sampled to the checker's size)"
            )
        if g_base != w_base and not g_base.endswith(MUTATED):
            return (
                f"the kernel returned {g[:80]!r} where the reference returns {w!r}: return the same "
                "structure (one array, a tuple, a dict) as the reference"
            )
    return ""


def _count_note(got: int, expected: int) -> str:
    return f"the kernel returned {got} output(s), the reference {expected}" if got != expected else ""


def _race_note(raced: bool, reported: int, found: Sequence[Race]) -> str:
    if not raced:
        return ""
    count = f"{reported} data race(s)" if reported else "a data race"
    shown = f" (the first {len(found)} listed)" if reported > len(found) else ""
    return f"{count} detected by the interpret-mode race detector{shown}"
