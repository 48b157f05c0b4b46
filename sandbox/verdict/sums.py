"""Does every group of an output too large to send whole match the reference's, by its sums?

`digests` has each process send, per group of an output's elements, its counts of NaN and
infinities, a fingerprint of where they are (of an integer output: of its values), and float64 sums.
A group fails when a count or a fingerprint differs, or when a sum differs by more than the
tolerance can explain. With d(i) = atol + rtol·m(i) (m the magnitude `compare` scales with), an
element that passes `compare` has |g(i) - e(i)| <= d(i), so over a group's finite elements:

    |Σg - Σe|     <= Σd   = atol·n + rtol·Σm
    |Σg² - Σe²|   <= Σ|g - e|·|g + e| <= Σd·(2|e| + d)
                         = 2·atol·Σ|e| + 2·rtol·Σm|e| + atol²·n + 2·atol·rtol·Σm + rtol²·Σm²
    |Σw·g - Σw·e| <= Σw·d = atol·Σw + rtol·Σw·m

each bound drawn from the reference's sums alone. The float64 sums themselves are off by at most
γ·Σ|term| on each side (γ about n units of rounding), so each bound is widened by that (`_slack`),
from the reference's side too (Σ|g| is at most Σ|e| + Σd when the output is right). Hence a kernel
whose every element is within the tolerance always passes (sound); one that is wrong in a group by
more than the group's summed tolerance fails, and says where. A bound that float64 cannot hold (a
float64 output near its largest values, whose squares overflow) is not checked. An integer or bool
output held to an exact tolerance must have the reference's fingerprint: any one changed element
changes it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

import numpy as np

from sandbox.protocol import OutputCheck, Tolerance
from sandbox.verdict.digests import COUNTS, HEAD, column, integral, sampling

COUNTED = {"nan": "NaN", "posinf": "+inf", "neginf": "-inf"}
ROUNDING = 2.0**-52  # twice float64's unit of rounding
UNDERFLOW = 2.0**-1060  # per element: what products that underflow can lose, many times over
BEYOND = 1e300  # a bound this large, or the reference's sum, could overflow on the kernel's side
BOUND_SUMS = ("abs", "magnitude", "magnitude_sq", "magnitude_abs", "squares", "weight", "weight_magnitude")

# Per test: which groups fail it, and why a given group does.
Test = tuple[np.ndarray, Callable[[int], str]]


def checked(check: OutputCheck, got: np.ndarray, want: np.ndarray, dtype: np.dtype) -> OutputCheck:
    """`check` (of the output's sampled rows) failed too if a group's sums say so; else it gains a
    note of how the output was checked. `got` and `want` are the output's rows of each table."""
    base, cut, stride = sampling(check.name)
    if check.shape != check.expected_shape or check.dtype != check.expected_dtype:
        return check  # failed already: the sums of another output add nothing
    if got.shape != want.shape or not np.array_equal(got[:, : len(HEAD)], want[:, : len(HEAD)]):
        other = (
            f"the sums of {base} are over other groups than the reference's: the output is of another shape"
        )
        return replace(check, passed=False, note=_joined(check.note, other))
    tol = check.tolerance or Tolerance(rtol=0.0, atol=0.0)
    failed = np.zeros(len(want), dtype=bool)
    first: tuple[int, str] | None = None
    for bad, told in _tests(got, want, tol, dtype):
        failed |= bad
        hits = np.flatnonzero(bad)
        if hits.size and (first is None or hits[0] < first[0]):
            first = (int(hits[0]), told(int(hits[0])))
    if first is None:
        return replace(check, note=_joined(check.note, _how(want, cut, stride)))
    index, reason = first
    where = f"{_where(want[index])} of {base}: {reason}"
    count = int(failed.sum())
    if count > 1:
        span = want[failed]
        where += f"; {count:,} of its {len(want):,} groups differ, in {_span(span[0], span[-1])}"
    return replace(check, passed=False, note=_joined(check.note, where))


def _how(want: np.ndarray, cut: str, stride: int) -> str:
    """How a passing output was checked: what the summary says of it."""
    unit = "element" if cut.startswith(".ravel()") else "row"
    elements = int(want[0, 1]) * int(want[0, 2])
    return (
        f"too large to send whole: every {_ordinal(stride)} {unit} compared element by element, all "
        f"{elements:,} elements by the sums of {len(want):,} groups"
    )


def _tests(got: np.ndarray, want: np.ndarray, tol: Tolerance, dtype: np.dtype) -> Iterator[Test]:
    """The tests of each group, in the order a failure is told."""
    exact = integral(dtype) and tol.atol == 0 and tol.rtol == 0
    parts = ("real parts", "imaginary parts") if dtype.kind == "c" else ("",)
    for p, part in enumerate(parts):
        for stat in COUNTS:
            yield _counted(got, want, column(p, stat), COUNTED[stat] + (f" in the {part}" if part else ""))
        if exact or not integral(dtype):  # an integer output's fingerprint is of its values: exact only
            yield _placed(got, want, p, exact, f" in the {part}" if part else "")
        if exact:
            continue
        subject = f"the sum of their {part}" if part else "their sum"
        squares = f"the sum of their {part}' squares" if part else "the sum of their squares"
        yield _bounded(got, want, tol, p, "sum", subject)
        yield _bounded(got, want, tol, p, "squares", squares)
        yield _bounded(got, want, tol, p, "weighted", f"{subject} weighted by position")


def _counted(got: np.ndarray, want: np.ndarray, c: int, what: str) -> Test:
    def why(j: int) -> str:
        return f"{got[j, c]:,.0f} {what} where the reference has {want[j, c]:,.0f}"

    return got[:, c] != want[:, c], why


def _placed(got: np.ndarray, want: np.ndarray, p: int, exact: bool, of: str) -> Test:
    """Where the NaN and infinities are; of an integer output held exactly, its values."""
    columns = [column(p, "placed_hi"), column(p, "placed_lo")]
    s = column(p, "sum")

    def why(j: int) -> str:
        if not exact:
            return f"their NaN or infinities{of} are in other places than the reference's"
        by = abs(got[j, s] - want[j, s])  # 0 for a swap: the fingerprint tells it all the same
        told = f"; their sum differs by {by:,.0f}" if by else ""
        return f"their values differ from the reference's (an integer output is compared exactly{told})"

    return (got[:, columns] != want[:, columns]).any(axis=1), why


def _bounded(got: np.ndarray, want: np.ndarray, tol: Tolerance, p: int, stat: str, what: str) -> Test:
    """One sum's test: the groups where the kernel's is further from the reference's than allowed."""
    a, r = tol.atol, tol.rtol
    w = {s: want[:, column(p, s)] for s in BOUND_SUMS}
    n = want[:, 4] - want[:, 3]
    finite = n - sum(want[:, column(p, s)] for s in COUNTS)
    with np.errstate(over="ignore", invalid="ignore"):
        if stat == "sum":
            bound = a * finite + r * w["magnitude"]
            scale = w["abs"] + bound
        elif stat == "squares":
            bound = (
                2 * a * w["abs"]
                + 2 * r * w["magnitude_abs"]
                + a * a * finite
                + 2 * a * r * w["magnitude"]
                + r * r * w["magnitude_sq"]
            )
            scale = w["squares"] + bound
        else:
            bound = a * w["weight"] + r * w["weight_magnitude"]
            scale = w["weight_magnitude"] + bound
        limit = _slack(bound, scale, n)
        theirs, ours = got[:, column(p, stat)], want[:, column(p, stat)]
        diff = np.abs(theirs - ours)
        conclusive = np.isfinite(limit) & np.isfinite(ours) & (np.abs(ours) + limit < BEYOND)
        bad = conclusive & ~(diff <= limit)

    def why(j: int) -> str:
        allows = f"beyond what the tolerance allows ({limit[j]:.3g})"
        return f"{what} differs from the reference's by {diff[j]:.3g}, {allows}"

    return bad, why


def _slack(bound: np.ndarray, scale: np.ndarray, n: np.ndarray) -> np.ndarray:
    """`bound` widened by what float64 sums of `n` terms of magnitudes up to `scale` may be off by,
    on both sides (and by the rounding of the elementwise check and of the bound itself)."""
    gamma = (n + 32) * ROUNDING
    return bound * (1 + 4 * gamma) + 4 * gamma * scale + n * UNDERFLOW


def _where(group: np.ndarray) -> str:
    row, start, stop = (int(v) for v in group[2:5])
    if row == 1:
        return f"elements {start}..{stop - 1}"
    if start % row == 0 and stop % row == 0:
        return f"rows {start // row}..{stop // row - 1}"
    r = start // row
    return f"elements {start - r * row}..{stop - 1 - r * row} of row {r}"


def _span(first: np.ndarray, last: np.ndarray) -> str:
    row, start, stop = int(first[2]), int(first[3]), int(last[4])
    if row == 1:
        return f"elements {start}..{stop - 1}"
    return f"rows {start // row}..{(stop - 1) // row}"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _joined(*notes: str) -> str:
    return "; ".join(n for n in notes if n)
