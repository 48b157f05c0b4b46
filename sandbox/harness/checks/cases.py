"""One case's verdict: every output compared with its own tolerance, races, and a note on what else failed.

Tolerances are declared per dtype (a catalog entry's `[tolerances.float32]`, or a scratch file's
`TOLERANCE`) or per output name (`out[1]`), and each output is checked with its own: an f32 output of
a kernel with bf16 internals can be held to a looser bound than its int32 indices. An output passes
or fails on its own comparison; the case fails if any output does, or if the race detector fired.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from sandbox.harness.checks import races
from sandbox.harness.checks.compare import compare, tolerance_for
from sandbox.harness.checks.vacuous import vacuous_note
from sandbox.protocol import Case, CaseResult, Race, Tolerance

TOLERANCE_HELP = (
    'TOLERANCE must be {"rtol": r, "atol": a} for every output, or a dict from a dtype ("float32") '
    'or an output name ("out[1]") to such a dict or to an (rtol, atol) pair'
)


def scratch_tolerances(value: Any) -> dict[str, Tolerance]:
    """A scratch file's `TOLERANCE` as the per-dtype / per-output table the checks use.

    `{"rtol": 1e-2, "atol": 1e-2}` applies to every output (key "*"); otherwise keys are dtypes or
    output names and values `{"rtol": …, "atol": …}` or `(rtol, atol)`.
    """
    if not isinstance(value, Mapping):
        raise TypeError(TOLERANCE_HELP)
    if set(value) == {"rtol", "atol"}:
        return {"*": _tolerance(value)}
    return {str(key): _tolerance(one) for key, one in value.items()}


def _tolerance(value: Any) -> Tolerance:
    try:
        if isinstance(value, Mapping):
            rtol, atol = value["rtol"], value["atol"]
        else:
            rtol, atol = value
        tol = Tolerance(rtol=float(rtol), atol=float(atol))
    except (KeyError, TypeError, ValueError):
        raise TypeError(TOLERANCE_HELP) from None
    if tol.rtol < 0 or tol.atol < 0:
        raise ValueError("TOLERANCE: rtol and atol must not be negative")
    return tol


def output_tolerance(name: str, dtype: str, declared: dict[str, Tolerance]) -> Tolerance:
    if "*" in declared and name not in declared and dtype not in declared:
        return declared["*"]
    return tolerance_for(dtype, declared, name)


def case_result(
    case: Case,
    inputs: tuple[Any, ...],
    got: list[tuple[str, np.ndarray]],
    expected: list[tuple[str, np.ndarray]],
    declared: dict[str, Tolerance],
    seconds: float,
    race_texts: list[str],
    raced: bool,
    notes: Sequence[str] = (),
) -> CaseResult:
    """`raced`: the detector reported races this case (its texts, or its own flag); `notes`: more to say."""
    checks = []
    for i, (name, want) in enumerate(expected):
        if i < len(got):
            checks.append(compare(name, got[i][1], want, output_tolerance(name, str(want.dtype), declared)))
    outputs = tuple(checks)
    found = races.parse_all(race_texts)
    passed = len(got) == len(expected) and all(c.passed for c in outputs) and not raced
    vacuous = vacuous_note(expected, lambda name, dtype: output_tolerance(name, dtype, declared))
    return CaseResult(
        name=case.name,
        dtype=case.dtype,
        dims=dict(case.dims),
        input_shapes=tuple(tuple(np.shape(x)) for x in inputs),
        tolerance=outputs[-1].tolerance if outputs else None,
        passed=passed,
        outputs=outputs,
        seconds=seconds,
        note="; ".join(
            filter(None, [_note(len(got), len(expected), raced, len(race_texts), found), *notes, vacuous])
        ),
        races=found,
    )


def _note(got: int, expected: int, raced: bool, reported: int, found: tuple[Race, ...]) -> str:
    notes = []
    if got != expected:
        notes.append(f"the kernel returned {got} output(s), the reference {expected}")
    if raced:
        count = f"{reported} data race(s)" if reported else "a data race"
        shown = f" (the first {len(found)} listed)" if reported > len(found) else ""
        notes.append(f"{count} detected by the interpret-mode race detector{shown}")
    return "; ".join(notes)
