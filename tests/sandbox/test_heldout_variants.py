"""Issue 41, a second round of held-out variants on the job's side of the channel.

Every event a kernel's process writes beside its outputs reaches the run's result: a forged `memory`
event of 1,000 warnings of 10,000 characters made a 10 MB result, counts of 10**300 and "nan" times
reached the result's JSON (as strings where numbers belong). And every low-precision dtype JAX can
return is compared as what it is (a float8 "fnuz", float4 or int2 output was an unknown dtype).
"""

from __future__ import annotations

import json

import ml_dtypes
import numpy as np
import pytest

from sandbox.backends import checking
from sandbox.protocol import LoweringCheck, RunStatus, new_event, to_json_dict
from sandbox.protocol.reading import read_event
from sandbox.results.classify import classify
from sandbox.verdict import arrays
from sandbox.verdict.compare import compare, tolerance_for
from tests.executions import finished
from tests.sandbox.test_heldout_attacks import FORGER, JOB, WANT, _ran, _reference, beside_a_victim

# The forged events, as code: the end-to-end kernel runs the same text to make them.
FORGING = """
BIG = 10**300
FORGED = {
    "memory": {
        "memory": {
            "peak_rss_bytes": BIG, "hbm_input_bytes": -BIG, "hbm_output_bytes": BIG, "vmem_bytes": BIG,
            "smem_bytes": -1, "semaphores": BIG, "vmem_capacity_bytes": 0, "smem_capacity_bytes": -1,
            "hbm_capacity_bytes": BIG, "warnings": ["w" * 10_000] * 1_000, "note": "x" * 100_000,
        }
    },
    "timing": {
        "timing": {
            "first_call_seconds": "nan", "compile_seconds": "inf", "simulated": False, "case": "c" * 100_000,
            "kernel": {"n": BIG, "mean": "nan", "median": -1, "min": "-inf", "max": 1e308, "std": "nan", "rse": "inf"},
            "reference": None, "ratio_to_reference": "nan", "roofline_seconds": -5, "flops": BIG,
            "bytes_accessed": -BIG, "note": "n" * 100_000, "device_seconds": "nan",
            "host_dispatch_seconds": "-inf", "reference_device_seconds": "inf",
        }
    },
    "versions": {
        "versions": {
            "python": "<script>" * 10_000, "jax": "x" * 100_000, "jaxlib": "1", "libtpu": None,
            "device_kind": "TPU v5e", "interpret_fixes": ["f" * 1000] * 10_000, "unavailable": [],
        },
        "interpret": True,
    },
    "progress": {
        "phase": "p" * 100_000, "case": "c", "seconds": "nan", "grid_steps": BIG, "block_copies": -1,
        "dmas": BIG, "ref_ops": 0, "semaphore_ops": 0,
    },
}
"""


def _forged() -> dict:
    made: dict = {}
    exec(FORGING, made)  # our own text, above
    return made["FORGED"]


FORGED = _forged()
BIG = 10**300


def _strict(value: object) -> str:
    return json.dumps(value, allow_nan=False)


def _integers(value: object) -> list[int]:
    if isinstance(value, dict):
        return [n for v in value.values() for n in _integers(v)]
    if isinstance(value, list):
        return [n for v in value for n in _integers(v)]
    return [value] if isinstance(value, int) and not isinstance(value, bool) else []


@pytest.mark.parametrize("kind", FORGED)
def test_a_forged_report_beside_the_outputs_is_bounded_in_the_result(kind):
    line = json.dumps({"kind": kind, "t": 1e308, "data": FORGED[kind]}).replace("1e+308", "NaN", 1)
    forged = read_event(line.encode())  # as the backend's reader takes it off the job's channel
    # The harness's own lowering check beside it: a forged `versions` first says the run was simulated.
    lowered = new_event("lowering", check=LoweringCheck(chip="v5p", lowers=True, seconds=0.1))
    execution = finished(forged, _ran([("out", WANT)]), lowered)
    checker = checking.Checker(JOB, _reference([("out", WANT)]))
    rewritten = checker.rewrite(execution)
    result = classify(JOB, rewritten)
    assert result.status is RunStatus.PASSED, result.summary
    text = _strict(to_json_dict(result))  # no NaN and no infinity anywhere
    assert len(text) < 100_000, len(text)
    for field in ("memory", "timing", "versions"):  # a time as "nan" would be a string where a number is
        assert '"nan"' not in _strict(getattr(result, field) and to_json_dict(getattr(result, field)))
    assert all(abs(n) < 2**63 for n in _integers(json.loads(text)))
    seen = [e for e in rewritten.events if e.kind == kind]
    assert len(_strict(to_json_dict(seen))) < 100_000
    assert all(e.t == 0.0 for e in seen)


def test_an_event_that_does_not_fit_its_schema_passes_unchanged_and_is_our_error():
    """The reader refuses such events from a job; one a backend made itself is its own fault, which
    `classify` reports as ours (never a raise while the job runs)."""
    from sandbox.protocol import Event

    checker = checking.Checker(JOB, _reference([("out", WANT)]))
    odd = Event("timing", {"timing": {"kernel": "fast"}}, t=float("nan"))
    assert checker.see(odd) == [odd] and checker.broken is None
    from sandbox.backends.execute import finish

    result = finish(JOB, checker.rewrite(finished(odd, _ran([("out", WANT)]))), cancelled=False).result
    assert result.status is RunStatus.ERROR and "report could not be read" in result.summary


def test_a_scratch_references_own_fields_are_bounded_too():
    """A scratch file's reference is user code: its case name, dims, input shapes and printed text
    reached every run judged by it (its arrays were already vetted)."""
    from sandbox.protocol import Case, new_event
    from sandbox.protocol.events import CaseExpected

    case = Case(name="n" * 1_000_000, dtype="float32", seed=0, dims={f"d{i}": BIG for i in range(10_000)})
    made = CaseExpected(
        0, 1, case, "in", ((BIG,) * 100,) * 1000, arrays.encode([("out", WANT)]), printed="p" * (8 << 20)
    )
    execution = finished(new_event("expected", **to_json_dict(made)))
    reference = checking._reference(JOB, execution)
    event = reference.expected[0].event
    assert len(_strict(to_json_dict(event.case))) < 10_000 and len(event.printed) <= 64 << 10
    assert len(event.input_shapes) <= 64 and all(len(s) <= 8 and max(s) < 2**63 for s in event.input_shapes)
    result = classify(JOB, checking.Checker(JOB, reference).rewrite(finished(_ran([("out", WANT)]))))
    assert result.status is RunStatus.PASSED and len(_strict(to_json_dict(result))) < 100_000


SURROGATES = {
    "timing": '{"kind": "timing", "data": {"timing": {"first_call_seconds": 1, "compile_seconds": null, '
    '"kernel": null, "reference": null, "ratio_to_reference": null, "simulated": true, "roofline_seconds": null, '
    '"flops": null, "bytes_accessed": null, "case": "\\ud800", "note": "x\\udfff"}}}',
    "error": '{"kind": "error", "data": {"error": {"type": "E\\ud800", "message": "m\\ud800", "traceback": '
    '"t\\udbff", "line": null, "phase": "p", "limitation": false}, "fault": "", "memory": false}}',
}


@pytest.mark.parametrize("kind", SURROGATES)
def test_a_lone_surrogate_in_a_report_never_reaches_the_result(kind):
    """JSON's "\\ud800" decodes to a lone surrogate, which no UTF-8 can carry: `GET /api/runs/{id}`
    of such a result answered 500, and so did a share of it."""
    from sandbox.backends.execute import finish

    forged = read_event(SURROGATES[kind].encode())
    noted = _ran([("out", WANT)], notes=["n\ud800"], mismatch_hint="h\udc00")
    execution = checking.Checker(JOB, _reference([("out", WANT)])).rewrite(finished(forged, noted))
    result = finish(JOB, execution, cancelled=False).result
    json.dumps(to_json_dict(result), ensure_ascii=False).encode()  # raises on a lone surrogate
    assert "\ufffd" in json.dumps(to_json_dict(result), ensure_ascii=False)


LOW_PRECISION = [
    name
    for name in (
        "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e4m3", "float8_e3m4", "float8_e8m0fnu",
        "float6_e2m3fn", "float6_e3m2fn", "float4_e2m1fn", "int2", "uint2",
    )
    if hasattr(ml_dtypes, name)
]  # fmt: skip


@pytest.mark.parametrize("name", LOW_PRECISION)
def test_every_low_precision_dtype_is_checked_as_what_it_is(name):
    dtype = np.dtype(getattr(ml_dtypes, name))
    want = np.array([1, 2, 1, 1], dtype=dtype)
    wrong = np.array([1, 1, 1, 1], dtype=dtype)
    ((_, decoded),) = arrays.decode(arrays.encode([("out", want)]))
    assert decoded.dtype == dtype and decoded.tobytes() == want.tobytes()
    assert compare("out", want.copy(), want, tolerance_for(name)).passed
    assert not compare("out", wrong, want, tolerance_for(name)).passed
    assert not compare(
        "out", want.view(np.uint8), want, tolerance_for(name)
    ).passed  # same bytes, not the dtype


# -- end to end, on the session's backend, with a victim beside -----------------------------------------

REPORT_FLOOD = (
    FORGER
    + f"""
{FORGING}
_sent = []


def kernel(x):
    # Once (~20 MB): the job traces the function several times (run, lowering and compile, estimate),
    # and the channel's own cap (48 MiB of events) would end the job before the checks are reached.
    if not _sent:
        _sent.append(True)
        for kind, data in FORGED.items():
            with _writer._lock:
                os.write(_writer._fd, (json.dumps({{"kind": kind, "data": data}}) + "\\n").encode())
    return x * 2
"""
).replace("import gc, os, time", "import gc, json, os, time")


@pytest.mark.slow
def test_end_to_end_a_forged_report_is_bounded_and_a_victim_passes():
    attacked = beside_a_victim(REPORT_FLOOD)
    assert attacked.status is RunStatus.PASSED, attacked.summary
    text = _strict(to_json_dict(attacked))
    assert len(text) < 200_000, len(text)
    assert attacked.memory is None or len(_strict(to_json_dict(attacked.memory))) < 80_000
