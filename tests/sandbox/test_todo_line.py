"""An exercise's hole is reported at the hole: the template's `todo()` helper raises for its caller, so the
error's line (and the summary's "(line N)") is the line of the `todo(...)` call, never the helper's `raise`."""

from __future__ import annotations

import re

from sandbox.catalog.entries import load_catalog
from sandbox.jobs.build import make_job
from tests.sandbox.conftest import line_of, run_job

TILED = load_catalog().get("tiled_matmul")


def test_a_todo_is_reported_at_its_call_not_in_the_helper():
    source = TILED.template_source
    result = run_job(make_job(source, entry=TILED, timing_budget_seconds=0.0, trace=False))
    assert result.error is not None and result.error.type == "NotImplementedError"
    hole = int(re.search(r"TODO at line (\d+)", result.error.message).group(1))
    helper = line_of(source, "raise NotImplementedError")
    assert result.error.line == hole != helper, result.summary
    assert result.summary.endswith(f"(line {hole})"), result.summary
    assert f"line {helper}," not in result.error.traceback, result.error.traceback
