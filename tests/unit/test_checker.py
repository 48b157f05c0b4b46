"""The checker outside the user's process: the array channel, the event rewrite, the reference's job."""

from __future__ import annotations

import threading
from dataclasses import replace

import numpy as np
import pytest

from sandbox.backends import checking, kept_references
from sandbox.jobs.build import make_job
from sandbox.protocol import Case, Event, Execution, RunStatus, new_event
from sandbox.protocol.arrays import MAX_CASE_ARRAY_BYTES, ArrayBytes
from sandbox.protocol.events import CaseExpected
from sandbox.results.classify import classify
from sandbox.verdict import arrays
from sandbox.verdict.judge import Expected
from tests.executions import finished

CASE = Case(name="c", dtype="float32", seed=0)
WANT = np.arange(12, dtype=np.float32).reshape(3, 4)


def test_arrays_round_trip_with_their_dtype_and_shape():
    import ml_dtypes

    named = [("a", WANT), ("b", WANT.astype(ml_dtypes.bfloat16)), ("c", np.array([True, False]))]
    named += [("scalar", np.float32(2.5)), ("strided", WANT.T)]  # a scalar stays 0-d; a view, C order
    for (name, want), (got_name, got) in zip(named, arrays.decode(arrays.encode(named)), strict=True):
        assert got_name == name and got.dtype == want.dtype and got.shape == np.shape(want)
        assert np.array_equal(got, want)


@pytest.mark.parametrize(
    ("record", "said"),
    [
        (ArrayBytes("o", "float32", (3, 4), "AAAA"), "where its shape and dtype hold 48"),
        (ArrayBytes("o", "object", (1,), "AAAAAAAAAAA="), "not a numeric array"),
        (ArrayBytes("o", "<U4", (1,), "AAAAAAAAAAAAAAAAAAAAAA=="), "not a numeric array"),
        (ArrayBytes("o", "no-such-type", (1,), ""), "unknown dtype"),
        (ArrayBytes("o", "float32", (-1,), ""), "impossible shape"),
        (ArrayBytes("o", "float32", (1,), "!!!!"), "not valid base64"),
        (ArrayBytes("o", "float32", (1,), "A" * 1000), "more bytes than"),
        (ArrayBytes("o", "float32", (MAX_CASE_ARRAY_BYTES,), ""), "at most 8 MiB per case"),
    ],
)
def test_an_output_that_does_not_fit_its_header_is_refused(record, said):
    with pytest.raises(arrays.ChannelError, match=said):
        arrays.decode([record])


def test_the_inputs_digest_sees_values_dtypes_and_shapes():
    base = arrays.digest([WANT])
    assert base == arrays.digest([WANT.copy()])
    assert base != arrays.digest([WANT + 1])
    assert base != arrays.digest([WANT.astype(np.float64)])
    assert base != arrays.digest([WANT.reshape(4, 3)])


@pytest.mark.parametrize(
    ("source", "defines"),
    [
        ("def kernel(x):\n    return x\n", False),
        ("def reference(x):\n    return x\n", True),
        ("reference = lambda x: x\n", True),
        ("from jax.numpy import dot as reference\n", True),
        ("try:\n    from foo import reference\nexcept ImportError:\n    pass\n", True),
        ("globals()['reference'] = abs\n", True),
        ("def broken(:\n", True),
    ],
)
def test_a_scratch_file_runs_its_reference_job_only_when_it_may_define_one(source, defines):
    assert checking.defines_reference(source) is defines


def test_a_catalog_reference_job_never_carries_the_users_source():
    from sandbox.catalog.entries import load_catalog

    entry = load_catalog().get("tiled_matmul")
    job = make_job("SECRET = 1\n" + entry.solution_source, entry=entry)
    ref = checking.reference_job(job)
    assert ref is not None and ref.role == "reference" and ref.source == "" and ref.entry == job.entry


def _reference(of: int = 1) -> checking.Reference:
    expected = {
        i: Expected.of(CaseExpected(i, of, CASE, "in", ((3, 4),), arrays.encode([("out", WANT)])))
        for i in range(of)
    }
    return checking.Reference(expected=expected, of=of, tolerances={})


def _ran(index: int, got: np.ndarray, digest: str = "in", kernels: int = 1) -> Event:
    return new_event(
        "case_outputs",
        index=index,
        case="c",
        seconds=0.1,
        inputs_digest=digest,
        outputs=arrays.encode([("out", got)]),
        kernels=kernels,
    )


def _execution(*events: Event, exit_code: int = 0) -> Execution:
    return finished(*events, exit_code=exit_code)


JOB = make_job("def kernel(x): ...\ndef reference(x): ...\n")


def _status(reference: checking.Reference | None, *events: Event) -> tuple[RunStatus, str]:
    result = classify(JOB, checking.Checker(JOB, reference).rewrite(_execution(*events)))
    return result.status, result.summary


def test_outputs_that_match_pass_and_the_forged_verdicts_are_dropped():
    forged = new_event("case", index=0, of=1, result=classify_case_passed())
    status, _ = _status(_reference(), forged, _ran(0, WANT + 1))
    assert status is RunStatus.MISMATCH
    assert _status(_reference(), _ran(0, WANT))[0] is RunStatus.PASSED


def classify_case_passed():
    from sandbox.protocol import CaseResult

    return CaseResult("c", "", {}, (), None, True, (), 0.0)


def test_a_case_reported_twice_or_out_of_order_is_an_error():
    status, summary = _status(_reference(2), _ran(0, WANT), _ran(0, WANT), _ran(1, WANT))
    assert status is RunStatus.ERROR and "out of order" in summary


def test_a_clean_end_before_the_last_case_is_an_error():
    status, summary = _status(_reference(2), _ran(0, WANT))
    assert status is RunStatus.ERROR and "after 1 of 2 cases" in summary


def test_other_inputs_than_the_references_fail_the_case():
    result = classify(JOB, checking.Checker(JOB, _reference()).rewrite(_execution(_ran(0, WANT, "other"))))
    assert result.status is RunStatus.MISMATCH
    assert "other inputs than the reference" in result.cases[0].note


def test_without_a_reference_the_checker_summarises_the_outputs():
    result = classify(JOB, checking.Checker(JOB, None).rewrite(_execution(_ran(0, WANT))))
    assert result.status is RunStatus.RAN and result.outputs[0].max == 11.0 and not result.checked_by


def test_a_catalog_exercise_that_matches_without_a_kernel_is_no_kernel():
    from sandbox.catalog.entries import load_catalog

    job = make_job("", entry=load_catalog().get("tiled_matmul"))
    ref = _reference()
    result = classify(job, checking.Checker(job, ref).rewrite(_execution(_ran(0, WANT, kernels=0))))
    assert result.status is RunStatus.NO_KERNEL and "no Pallas kernel ran" in result.summary
    counted = classify(job, checking.Checker(job, ref).rewrite(_execution(_ran(0, WANT, kernels=-1))))
    assert counted.status is RunStatus.PASSED  # not counted (-1) is not "none ran"


def test_the_reference_cache_is_bounded_by_bytes():
    cache = kept_references.ReferenceCache(max_bytes=100)
    small = checking.Reference(expected={}, of=1, tolerances={}, nbytes=60)
    cache.put("a", small)
    cache.put("b", small)
    assert cache.get("a") is None and cache.get("b") is small
    cache.put("huge", checking.Reference(expected={}, of=1, tolerances={}, nbytes=101))
    assert cache.get("huge") is None


def test_scratch_references_cannot_push_the_catalogs_out():
    cache = kept_references.ReferenceCache(max_bytes=100, scratch_bytes=100)
    entry = checking.Reference(expected={}, of=1, tolerances={}, nbytes=60)
    cache.put("entry", entry)
    for n in range(5):
        cache.put(
            f"{kept_references.SCRATCH}{n}", checking.Reference(expected={}, of=1, tolerances={}, nbytes=60)
        )
    assert cache.get("entry") is entry
    assert [cache.get(f"{kept_references.SCRATCH}{n}") is not None for n in range(5)] == [False] * 4 + [True]


def test_a_scratch_file_with_the_same_reference_on_another_target_is_another_reference():
    source = "def kernel(x):\n    return x + 1\n\ndef reference(x):\n    return x + 1\n"
    edited = make_job(source.replace("return x + 1\n\ndef", "return 1 + x\n\ndef"))
    key = kept_references.cache_key(make_job(source))
    assert key is not None and key.startswith(kept_references.SCRATCH)
    assert kept_references.cache_key(edited) == key
    assert kept_references.cache_key(make_job(source, chip="v5e")) != key
    assert kept_references.cache_key(replace(make_job(source), devices=2)) != key


def test_each_backend_keeps_its_own_references():
    # A test's fake backend once answered tiled_matmul's reference for a real backend in the same
    # process (a process-wide cache): every later real run of that entry was an error.
    from sandbox.catalog.entries import load_catalog
    from tests.api.fakes import FakeBackend

    job = make_job("", entry=load_catalog().get("tiled_matmul"))
    first, second = FakeBackend(), FakeBackend()
    for backend in (first, first, second):
        assert isinstance(checking.expected_for(backend, job, threading.Event()), checking.Reference)
    assert len(first.reference_jobs) == 1 and len(second.reference_jobs) == 1


def test_sweep_references_cannot_push_the_catalogs_out():
    # Anyone can make a new catalog sweep spec at will (up to 32 MiB of reference each): in the
    # catalog's budget two or three pushed every entry's reference out.
    from sandbox.catalog.entries import load_catalog
    from sandbox.jobs.build import make_sweep_job
    from sandbox.protocol.sweep import SweepSpec

    entry = load_catalog().get("tiled_matmul")
    sweep = make_sweep_job("", SweepSpec(params={"bm": (128,)}, size={"m": 4096}), entry=entry)
    key = kept_references.cache_key(sweep)
    assert key is not None and key.startswith(kept_references.SWEEP)
    assert not (kept_references.cache_key(make_job("", entry=entry)) or "").startswith(kept_references.SWEEP)
    cache = kept_references.ReferenceCache(max_bytes=100, sweep_bytes=100)
    entry_reference = checking.Reference(expected={}, of=1, tolerances={}, nbytes=60)
    cache.put("entry", entry_reference)
    for n in range(5):
        cache.put(f"{key}{n}", checking.Reference(expected={}, of=1, tolerances={}, nbytes=60))
    assert cache.get("entry") is entry_reference
    assert [cache.get(f"{key}{n}") is not None for n in range(5)] == [False] * 4 + [True]
