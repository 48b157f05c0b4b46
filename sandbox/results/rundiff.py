"""What changed between two runs of one kernel (a share's JAX and today's): status, errors, timings,
memory, the compiler's verdicts, and a text diff of the Mosaic IR.

Pure: two `RunResult`s in, a `RunDiff` of display strings out (the page shows them side by side).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass

from sandbox.protocol import RunResult

MAX_IR_DIFF_LINES = 400
CONTEXT_LINES = 2


@dataclass(frozen=True)
class FieldDiff:
    name: str
    older: str
    newer: str

    @property
    def changed(self) -> bool:
        return self.older != self.newer


@dataclass(frozen=True)
class RunDiff:
    older: str  # the runtimes compared, e.g. "0.10.2" and "0.12.0.1"
    newer: str
    fields: tuple[FieldDiff, ...]
    mosaic_diff: str  # a unified diff of the Mosaic IR ("" when identical or unavailable)
    mosaic_note: str  # "identical", "differs in 12 lines", or why there is nothing to compare
    mosaic_truncated: bool = False


def seconds(value: float | None) -> str:
    if value is None:
        return "—"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value * 1e9:.3g} ns"


def size(value: int | None) -> str:
    if value is None:
        return "—"
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value} B"


def _facts(result: RunResult) -> dict[str, str]:
    timing, memory = result.timing, result.memory
    errors = [o.max_abs_error for c in result.cases for o in c.outputs if o.max_abs_error is not None]
    facts = {
        "status": str(result.status),
        "summary": result.summary,
        "error": f"{result.error.type}: {result.error.message}" if result.error else "—",
        "max abs error": f"{max(errors):.3g}" if errors else "—",
        "kernel time (median)": seconds(timing.kernel.median if timing and timing.kernel else None),
        "first call": seconds(timing.first_call_seconds if timing else None),
        "peak host memory": size(memory.peak_rss_bytes if memory else None),
        "VMEM": size(memory.vmem_bytes if memory else None),
        "SMEM": size(memory.smem_bytes if memory else None),
    }
    for check in (result.lowering, *result.lowerings):
        if check is not None:
            verdict = {True: "lowers", False: "rejected", None: "not checked"}[check.lowers]
            facts[f"TPU compiler, {check.chip}"] = verdict
    versions = result.versions
    facts["unavailable features"] = ", ".join(u.feature for u in versions.unavailable) if versions else ""
    facts["unavailable features"] = facts["unavailable features"] or "—"
    return facts


def _mosaic(result: RunResult) -> str | None:
    check = result.lowering
    return check.mosaic.text if check is not None and check.mosaic is not None else None


def diff(older: RunResult, newer: RunResult, older_name: str, newer_name: str) -> RunDiff:
    before, after = _facts(older), _facts(newer)
    names = [*before, *(k for k in after if k not in before)]
    fields = tuple(FieldDiff(n, before.get(n, "—"), after.get(n, "—")) for n in names)
    ir_before, ir_after = _mosaic(older), _mosaic(newer)
    if ir_before is None or ir_after is None:
        missing = [name for name, ir in ((older_name, ir_before), (newer_name, ir_after)) if ir is None]
        note = f"no Mosaic IR from jax {' or '.join(missing)} (the TPU lowering did not get that far)"
        return RunDiff(older_name, newer_name, fields, "", note)
    lines = list(
        difflib.unified_diff(
            ir_before.splitlines(),
            ir_after.splitlines(),
            f"jax {older_name}",
            f"jax {newer_name}",
            n=CONTEXT_LINES,
            lineterm="",
        )
    )
    changed = sum(1 for line in lines if line[:1] in "+-" and not line.startswith(("+++", "---")))
    note = "identical" if not lines else f"differs in {changed} line{'s' if changed != 1 else ''}"
    truncated = len(lines) > MAX_IR_DIFF_LINES
    return RunDiff(older_name, newer_name, fields, "\n".join(lines[:MAX_IR_DIFF_LINES]), note, truncated)
