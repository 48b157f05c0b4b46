"""Race reports through real child processes: the racy kernels name their racing lines, the fixed one none."""

import pytest

from sandbox.catalog.entries import DEFAULT_ROOT, CatalogEntry, load_entry
from sandbox.jobs.build import make_job
from sandbox.protocol import RunResult, RunStatus
from tests.sandbox.conftest import line_of, run_job

pytestmark = pytest.mark.slow
ENTRY = load_entry(DEFAULT_ROOT / "race_condition_demo")


def run(entry: CatalogEntry, source: str) -> RunResult:
    job = make_job(source, entry=entry, chip="v5p", timing_budget_seconds=0.1)
    return run_job(job)


def wrong(name: str) -> str:
    return next(w.source for w in ENTRY.wrong if w.name == name)


def test_fixed_kernel_passes_with_the_detector_on_and_no_races():
    result = run(ENTRY, ENTRY.solution_source)
    assert result.options.detect_races
    assert result.status == RunStatus.PASSED, result.summary
    assert [c.races for c in result.cases] == [(), ()]


def test_read_of_a_slot_being_filled_names_the_dma_line_and_the_read_line():
    source = wrong("prefetch_into_the_slot_being_read")
    result = run(ENTRY, source)
    assert result.status == RunStatus.MISMATCH, result.summary
    first = result.cases[0]
    assert first.passed is False and all(o.passed for o in first.outputs), (
        "the outputs match; the race fails it"
    )
    assert "data race" in first.note
    dma, read = first.races[0].accesses
    assert (dma.kind, dma.file, dma.line) == (
        "write",
        "kernel.py",
        line_of(source, "fetch(c + 1, 0).start()"),
    )
    assert dma.by.startswith("a DMA")
    assert (read.kind, read.file, read.line) == ("read", "kernel.py", line_of(source, "in_buf[0] * 2"))
    assert read.by.startswith("device 0, core ")
    assert result.summary.startswith("mismatch: data race detected (2/2 cases failed); case 'f32 64x128")
    assert first.races[0].summary in result.summary
    assert "RACE DETECTED" in first.races[0].text and "RACE DETECTED" not in result.stderr


def test_two_cores_writing_the_same_rows_names_the_write_back_line():
    source = wrong("both_cores_write_every_row")
    result = run(ENTRY, source)
    assert result.status == RunStatus.MISMATCH, result.summary
    accesses = result.cases[0].races[0].accesses
    assert [(a.kind, a.line) for a in accesses] == [("write", line_of(source, "write_back.start()"))] * 2
    # Named as the user's output, as the other messages name refs (not "HBM buffer 101").
    assert accesses[0].buffer == "`o_hbm`, output 1, f32[64, 128]"
    assert "overlap in `o_hbm`, output 1, f32[64, 128] [0:16, 0:128]" in result.cases[0].races[0].summary
