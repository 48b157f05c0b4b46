"""What an agent reads of a run (`server.mcp.digest`) and of its events (`server.mcp.follow.describe`):
the verdict with the next step, the translated error, a few first mismatches, the lowering per chip
(with one IR text, cut), and one progress line per event worth one."""

from __future__ import annotations

import pytest

from sandbox.protocol import (
    CaseResult,
    ErrorInfo,
    InterpretOptions,
    IrText,
    LoweringCheck,
    Mismatch,
    OutputCheck,
    RunResult,
    RunStatus,
)
from server.mcp import digest
from server.mcp.follow import describe

MISMATCHES = tuple(Mismatch(index=(i, 0), got=1.0, expected=0.0) for i in range(8))
OUT = OutputCheck(
    name="out", shape=(8, 8), dtype="float32", expected_shape=(8, 8), expected_dtype="float32", passed=False,
    max_abs_error=1.0, max_rel_error=1.0, mismatch_count=8, total=64, first_mismatches=MISMATCHES,
    nan_parity=True, inf_parity=True, error_map=((1.0,) * 4,) * 4,
)  # fmt: skip
CASE = CaseResult("f32", "float32", {"m": 8}, ((8, 8),), None, False, (OUT,), 0.1)
ERROR = ErrorInfo(
    "TypeError", "the index map for `o_ref` takes 2 arguments", "Traceback…", line=39, phase="trace"
)
MOSAIC = IrText("module {\n" + "x" * 30_000, truncated=False, total_chars=30_009)


def result(status: RunStatus, **fields) -> RunResult:
    return RunResult(status, "summary", "v5e", "interpret", InterpretOptions(), **fields)


def test_a_mismatch_keeps_the_first_mismatches_and_says_what_to_try():
    found = digest.run_digest("r1", result(RunStatus.MISMATCH, cases=(CASE,)))
    assert found["status"] == "mismatch" and not found["passed"] and "first mismatches" in found["next_step"]
    output = found["cases"][0]["outputs"][0]
    assert len(output["first_mismatches"]) == digest.MISMATCHES and output["error_map"] is None


def test_an_error_is_the_translators_message_and_line():
    found = digest.run_digest("r1", result(RunStatus.ERROR, error=ERROR, stdout="y" * 5000))
    assert found["error"]["message"].startswith("the index map for `o_ref`") and found["error"]["line"] == 39
    assert len(found["stdout"]) == digest.STREAM_CHARS and found["next_step"].startswith("fix the error")


def test_the_lowering_lists_the_runs_chip_first_with_its_ir_cut():
    own = LoweringCheck(chip="v5e", lowers=True, seconds=0.1, mosaic=MOSAIC)
    other = LoweringCheck(chip="v6e", lowers=False, seconds=0.1, error=ERROR)
    found = digest.lowering_digest(
        "r1", result(RunStatus.PASSED, lowering=own, lowerings=(other, own)), "mosaic"
    )
    assert [c["chip"] for c in found["chips"]] == ["v5e", "v6e"]
    assert len(found["chips"][0]["mosaic"]) == digest.IR_CHARS and found["chips"][0]["mosaic_truncated"]
    assert found["chips"][1]["lowers"] is False and found["chips"][1]["error"]["line"] == 39


@pytest.mark.parametrize(
    ("kind", "data", "line"),
    [
        ("queued", {"position": 3, "eta_seconds": 12.4}, "queued at position 3, about 12 s to start"),
        ("progress", {"phase": "run", "case": "f32", "grid_steps": 40}, "run f32: 40 grid steps"),
        (
            "case",
            {"index": 0, "of": 2, "result": {"name": "f32", "passed": False}},
            "case f32 (1 of 2): failed",
        ),
        ("compiled", {}, "the kernel compiled and ran once"),
        ("versions", {}, ""),
    ],
)
def test_each_event_worth_a_line_gets_one(kind, data, line):
    assert describe(kind, data) == line
