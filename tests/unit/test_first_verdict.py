"""The first verdict's plumbing on the host: a run's phases, the reference store, inputs given to the
kernel's job, the phase metrics, and the vacuous check judged once per kept reference."""

from __future__ import annotations

import threading
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from sandbox.backends import checking, references
from sandbox.backends.phases import PhaseClock, with_queued
from sandbox.catalog.entries import load_catalog
from sandbox.jobs.build import make_job
from sandbox.protocol import Case, InterpretOptions, Phases, RunResult, RunStatus, Tolerance
from sandbox.protocol.events import CaseExpected
from sandbox.verdict import arrays
from sandbox.verdict.judge import Expected
from server.queue.metrics import MetricsBook, render
from tests.api.fakes import FakeBackend

ENTRY = load_catalog().get("tiled_matmul")
CASE = Case(name="c", dtype="float32", seed=0)


def test_phases_are_the_time_between_marks_on_the_hosts_clock():
    clock = PhaseClock(now=time.monotonic())
    time.sleep(0.02)
    clock.reference_done()
    for kind in ("started", "versions", "imported", "compiled", "case", "case", "timing"):
        time.sleep(0.01)
        clock.saw(kind)
    phases = clock.phases()
    assert phases.reference >= 0.02
    assert all(getattr(phases, p) >= 0.009 for p in ("started", "compiled", "first_verdict"))
    assert phases.imported >= 0.019  # `versions` is no mark: started → imported spans it
    total = phases.reference + phases.started + phases.imported + phases.compiled + phases.first_verdict
    assert phases.first_verdict_after == pytest.approx(total, abs=1e-4)
    queued = with_queued(
        RunResult(RunStatus.PASSED, "", "v5p", "auto", InterpretOptions(), phases=phases), 2.0
    )
    assert queued.phases.queued == 2.0 and queued.phases.first_verdict_after == pytest.approx(total + 2.0)


def test_a_run_that_never_got_a_verdict_has_none():
    clock = PhaseClock()
    clock.reference_done()
    clock.saw("started")
    phases = clock.phases()
    assert phases.imported is phases.compiled is phases.first_verdict is phases.first_verdict_after is None
    assert phases.done is not None and phases.done >= 0


def _expected(index: int, inputs: bool = True) -> Expected:
    given = arrays.encode([("input[0]", np.arange(6, dtype=np.float32).reshape(2, 3))]) if inputs else ()
    event = CaseExpected(
        index, 2, CASE, "digest", ((2, 3),), arrays.encode([("out", np.ones(3))]), inputs=given
    )
    return Expected.of(event)


def expected_for(backend, job):
    """What `execute` does about a run's reference: the kept file, the reference's job, keeping it."""
    on_disk = references.recall(backend, job)
    found = checking.expected_for(backend, job, threading.Event())
    if not on_disk:
        references.remember(backend, job)
    return found


def test_the_kernels_job_is_given_every_cases_inputs_or_none():
    job = make_job("", entry=ENTRY)
    full = checking.Reference(expected={0: _expected(0), 1: _expected(1)}, of=2, tolerances={})
    given = references.with_inputs(job, full)
    assert [g.index for g in given.inputs] == [0, 1] and given.inputs[0].arrays[0].shape == (2, 3)
    partial = checking.Reference(
        expected={0: _expected(0), 1: _expected(1, inputs=False)}, of=2, tolerances={}
    )
    assert references.with_inputs(job, partial).inputs == ()
    # A scratch file's reference computed just before its kernel's job (in the run's own slot) gives
    # them too; a sweep's never does.
    assert len(references.with_inputs(make_job("def kernel(x): ...\n"), full).inputs) == 2
    big = np.zeros(references.GIVEN_INPUT_BYTES // 4 + 1, np.float32)  # over the bound once encoded
    large = CaseExpected(
        0, 1, CASE, "d", ((1,),), arrays.encode([("out", np.ones(1))]), inputs=arrays.encode([("x", big)])
    )
    assert references.with_inputs(job, checking.Reference({0: Expected.of(large)}, 1, {})).inputs == ()


def test_a_kept_reference_outlives_its_backend(tmp_path):
    job = make_job("", entry=ENTRY)
    first = references.keep_on_disk(FakeBackend(), tmp_path)
    made = expected_for(first, job)
    restarted = references.keep_on_disk(FakeBackend(), tmp_path)  # a new process: an empty memory cache
    again = expected_for(restarted, job)
    assert isinstance(made, checking.Reference) and isinstance(again, checking.Reference)
    assert again.of == made.of and again.expected.keys() == made.expected.keys()
    assert [e.event for e in again.expected.values()] == [e.event for e in made.expected.values()]
    assert len(first.reference_jobs) == 1 and restarted.reference_jobs == []
    assert again.tolerances == ENTRY.spec().tolerances


@pytest.mark.parametrize(
    "text", ['{"cases": [{"index": "x"}]', '{"cases": []}', '{"of": 1, "cases": [{"index": 0}]}']
)
def test_an_unreadable_reference_file_is_made_again(tmp_path, text):
    job = make_job("", entry=ENTRY)
    backend = references.keep_on_disk(FakeBackend(), tmp_path)
    store = references.store_of(backend)
    store.path(store.key(job)).write_text(text)
    assert isinstance(expected_for(backend, job), checking.Reference)
    assert len(backend.reference_jobs) == 1
    assert store.load(store.key(job), job) is not None  # replaced by the new one


def test_a_file_names_the_jax_a_default_job_runs_on():
    job = make_job("", entry=ENTRY)
    old, new = (
        references.ReferenceStore(Path("x"), "jax 0.11.2"),
        references.ReferenceStore(Path("x"), "jax 0.12"),
    )
    assert old.key(job) != new.key(job)  # an upgrade of the default JAX never reads the old files
    assert old.key(replace(job, runtime="0.11.2")) == new.key(replace(job, runtime="0.11.2"))


def test_a_fake_backend_keeps_nothing_on_disk_unless_asked(tmp_path):
    expected_for(FakeBackend(), make_job("", entry=ENTRY))
    assert list(tmp_path.iterdir()) == []


def test_the_store_is_bounded_by_bytes_oldest_first(tmp_path):
    store = references.ReferenceStore(tmp_path, max_bytes=1000)
    reference = checking.Reference(expected={0: _expected(0)}, of=1, tolerances={})
    for key in ("a", "b", "c"):
        store.save(key, reference)
        time.sleep(0.01)
    size = store.path("c").stat().st_size
    kept = {p.name for p in tmp_path.iterdir()}
    assert size * len(kept) <= 1000 and store.path("c").name in kept and store.path("a").name not in kept


def test_metrics_count_each_phase_and_the_first_verdict():
    book = MetricsBook()
    phases = Phases(queued=0.1, reference=0.0, started=0.05, imported=0.1, compiled=0.8, first_verdict=0.02,
                    done=3.0, first_verdict_after=1.07)  # fmt: skip
    book.ended("local", "passed", created=0.0, started=0.1, now=4.0, failure=False, phases=phases)
    book.ended("local", "error", created=0.0, started=0.1, now=1.0, failure=False, phases=Phases(done=0.5))
    text = render(book.totals).decode()
    assert 'playground_run_phase_seconds_count{phase="compiled",pool="local"} 1.0' in text
    assert 'playground_run_phase_seconds_count{phase="done",pool="local"} 2.0' in text
    assert 'playground_first_verdict_seconds_bucket{le="2.5",pool="local"} 1.0' in text


def test_the_vacuous_check_of_a_kept_reference_is_judged_once(monkeypatch):
    from sandbox.verdict import judge

    calls = []
    monkeypatch.setattr(judge, "vacuous_note", lambda *a: calls.append(a) or "")
    expected = _expected(0)
    for _ in range(3):
        expected.vacuous({})
    expected.vacuous({"float32": Tolerance(rtol=1.0, atol=1.0)})
    assert len(calls) == 2


def test_a_sweeps_reference_read_back_from_disk_still_names_each_configs_outputs(tmp_path):
    # A worker restarted over its reference directory once read sweeps' references without the
    # config index → check size map: every config of a sweep of that entry was then an error.
    from sandbox.jobs.build import make_sweep_job
    from sandbox.protocol.sweep import SweepSpec

    spec = SweepSpec(params={"bm": (128, 256)}, size={"m": 4096}, check_size={"m": 256}, bind={"bm": "m"})
    job = make_sweep_job("", spec, entry=ENTRY)
    size = Case(name="m=256", dtype="float32", seed=0, dims={"m": 256})
    event = CaseExpected(0, 1, size, "in", ((3, 4),), arrays.encode([("out", np.ones(3))]), configs=(0, 1))
    store = references.ReferenceStore(tmp_path)
    store.save(store.key(job), checking.Reference(expected={0: Expected.of(event)}, of=1, tolerances={}))
    loaded = store.load(store.key(job), job)
    assert loaded is not None and sorted(loaded.by_config) == [0, 1]
    assert loaded.by_config[1].event == event


def test_what_make_inputs_prints_travels_with_its_inputs_cut_at_a_bound():
    import contextlib

    from sandbox.harness.reference import PRINTED_CHARS, _Printed

    quiet, flood = _Printed(), _Printed()
    with contextlib.redirect_stdout(quiet):
        print("making inputs")
    with contextlib.redirect_stdout(flood):
        for _ in range(PRINTED_CHARS // 10):
            print("x" * 99)
    assert quiet.text() == "making inputs\n"
    assert len(flood.text()) < PRINTED_CHARS + 100 and flood.text().endswith(
        "[make_inputs printed more: cut]\n"
    )


def test_sweeps_files_cannot_push_the_entries_off_the_disk(tmp_path):
    from sandbox.jobs.build import make_sweep_job
    from sandbox.protocol.sweep import SweepSpec

    store = references.ReferenceStore(tmp_path, max_bytes=4000)
    reference = checking.Reference(expected={0: _expected(0)}, of=1, tolerances={})
    entry_key = store.key(make_job("", entry=ENTRY))
    store.save(entry_key, reference)
    for n in range(8):  # eight sweep specs, each its own file, newer than the entry's
        time.sleep(0.01)
        spec = SweepSpec(params={"bm": (128 + n,)}, size={"m": 4096})
        store.save(store.key(make_sweep_job("", spec, entry=ENTRY)), reference)
    sweeps = [p for p in tmp_path.iterdir() if references.SWEEP_FILE in p.name]
    assert store.path(entry_key).exists()
    assert 0 < len(sweeps) * store.path(entry_key).stat().st_size <= 1000  # a quarter of the store
