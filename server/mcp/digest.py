"""A run's result as an agent reads it: the verdict and why, the translated error, each case, timings,
memory, the TPU time model's estimate and the compiler's verdict per chip, in a JSON object small
enough for a model's context (no trace, no IR unless asked for, output tails only); beside it the
same plain-text report the CLI prints (`sandbox.results.text_report`).
"""

from __future__ import annotations

from typing import Any

from sandbox.protocol import CaseResult, IrText, LoweringCheck, RunResult, RunStatus, to_json_dict
from sandbox.results.text_report import render

STREAM_CHARS = 2000  # the tail of stdout and stderr an agent gets
IR_CHARS = 20_000  # the IR text `lower_kernel` returns per chip, at most
MISMATCHES = 3  # first mismatched elements per output
# What a failed run's status asks the author to do next (the summary and error say why).
NEXT_STEP: dict[RunStatus, str] = {
    RunStatus.MISMATCH: "compare the first mismatches with the reference: index maps, block shapes, "
    "accumulation (f32) and the last partial block are the usual causes",
    RunStatus.ERROR: "fix the error at the line it names; the message is JAX's, in the kernel's own names",
    RunStatus.TIMEOUT: "the run hit the wall-clock limit: try a smaller problem or fewer grid steps",
    RunStatus.RESOURCE_LIMIT: "the run hit a memory or output limit: smaller blocks or less printing",
    RunStatus.REJECTED: "the outputs match in the simulator, but the TPU compiler refuses the kernel for "
    "this chip: see `lowering` (block shapes must tile (8, 128), VMEM must fit)",
    RunStatus.UNSUPPORTED: "the simulator cannot run a construct of this kernel; not the kernel's mistake "
    "(the lowering check says whether a real TPU would accept it)",
    RunStatus.NO_KERNEL: "the outputs match but no Pallas kernel ran: compute them in a pallas_call or pl.kernel",
    RunStatus.CANCELLED: "the run was cancelled before it finished",
}


def run_digest(run_id: str, result: RunResult) -> dict[str, Any]:
    """The JSON object a tool returns for a finished run."""
    return {
        "run_id": run_id,
        "status": result.status.value,
        "passed": result.status is RunStatus.PASSED,
        "summary": result.summary,
        "next_step": NEXT_STEP.get(result.status, ""),
        "checked_by": result.checked_by,
        "error": to_json_dict(result.error) if result.error else None,
        "cases": [_case(case) for case in result.cases],
        "timing": to_json_dict(result.timing) if result.timing else None,
        "memory": to_json_dict(result.memory) if result.memory else None,
        "estimate": _estimate(result),
        "lowering": [_lowering(check, ir=None) for check in _checks(result)],
        "chip": result.chip,
        "mode": result.mode,
        "versions": to_json_dict(result.versions) if result.versions else None,
        "cached": result.cached_from is not None,
        "stdout": result.stdout[-STREAM_CHARS:],
        "stderr": result.stderr[-STREAM_CHARS:],
        "wall_seconds": result.wall_seconds,
    }


def lowering_digest(run_id: str, result: RunResult, ir: str) -> dict[str, Any]:
    """The compiler's verdict per chip with one IR text each (`ir`: jaxpr, mosaic or stablehlo)."""
    return {
        "run_id": run_id,
        "status": result.status.value,
        "summary": result.summary,
        "error": to_json_dict(result.error) if result.error else None,
        "chips": [_lowering(check, ir) for check in _checks(result)],
        "chip_warnings": list(result.chip_warnings),
    }


def report(result: RunResult, ir: str | None = None) -> str:
    """The CLI's plain-text report of the run (with one IR text of the run's own chip, if asked)."""
    return render(result, ir=ir)


def _checks(result: RunResult) -> list[LoweringCheck]:
    others = [
        check for check in result.lowerings if result.lowering is None or check.chip != result.lowering.chip
    ]
    return ([result.lowering] if result.lowering else []) + others


def _case(case: CaseResult) -> dict[str, Any]:
    data = to_json_dict(case)
    data["outputs"] = [
        {**output, "error_map": None, "first_mismatches": output["first_mismatches"][:MISMATCHES]}
        for output in data["outputs"]
    ]
    return data


def _estimate(result: RunResult) -> dict[str, Any] | None:
    if result.estimate is None:
        return None
    data = to_json_dict(result.estimate)
    keep = ("chip", "seconds", "low_seconds", "high_seconds", "bound", "roofline_seconds")
    return {
        key: data.get(key) for key in (*keep, "roofline_fraction", "family", "validation", "outside_seconds")
    }


def _lowering(check: LoweringCheck, ir: str | None) -> dict[str, Any]:
    text: IrText | None = getattr(check, ir) if ir else None
    out: dict[str, Any] = {
        "chip": check.chip,
        "lowers": check.lowers,
        "compiled": check.compiled,  # libtpu's own compile for the chip, off the chip (None: not run)
        "compiler": check.compiler,
        "error": to_json_dict(check.error) if check.error else None,
        "kernels": check.kernels,
        "warnings": list(check.warnings),
        "note": check.note,
    }
    if ir:
        out[ir] = None if text is None else text.text[:IR_CHARS]
        out[f"{ir}_truncated"] = text is not None and (text.truncated or len(text.text) > IR_CHARS)
    return out
