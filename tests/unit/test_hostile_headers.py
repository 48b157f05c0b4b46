"""Issue 41, item 1: an output header no array can have is the user's error, never the checker's crash.

A kernel's process writes the headers of its outputs itself. Every field is bounded before it is
used (shape, dtype, count, name, bytes), and whatever still breaks a check ends as that run's
`error` with a clear message: an exception out of the checker left the job running in a slot the
host thought free, and every other run then failed "slot 0 is not free".
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from sandbox.backends import checking
from sandbox.backends.watch import Report
from sandbox.jobs.build import make_job
from sandbox.protocol import Case, Event, RunStatus, new_event, to_json_dict
from sandbox.protocol.arrays import MAX_CASE_ARRAY_BYTES
from sandbox.protocol.events import CaseExpected
from sandbox.results.classify import classify
from sandbox.verdict import arrays
from sandbox.verdict.judge import Expected
from tests.executions import finished

WANT = np.arange(12, dtype=np.float32).reshape(3, 4)
JOB = make_job("def kernel(x): ...\ndef reference(x): ...\n")


def _header(name="out", dtype="float32", shape=(3, 4), data=None) -> dict:
    """One output's header as it travels (JSON), bytes as long as the header claims unless given."""
    if data is None:
        data = arrays.encode([("x", np.zeros(1, np.uint8))])[0].data[:0]
    return {"name": name, "dtype": dtype, "shape": shape, "data": data}


HOSTILE = {
    "zero-size, one absurd dimension": [_header(shape=[0, 10**30])],
    "zero-size, a dimension past int64": [_header(shape=[0, 2**70, 3])],
    "a dimension past the case cap": [_header(shape=[0, MAX_CASE_ARRAY_BYTES + 1])],
    "negative dimension": [_header(shape=[-3])],
    "boolean dimension": [_header(shape=[True, 0])],
    "rank 40": [_header(shape=[1] * 40)],
    "a sub-array dtype": [_header(dtype="(100000000,)f4", shape=[0])],
    "a record dtype": [_header(dtype="f4,f4", shape=[0])],
    "a datetime dtype": [_header(dtype="M8[ns]", shape=[0])],
    "a dtype by byte order": [_header(dtype=">f4", shape=[0])],
    "a huge dtype name": [_header(dtype="f" * 100_000, shape=[0])],
    "a dtype that is a number": [_header(dtype=7, shape=[0])],
    "a huge name": [_header(name="n" * 10_000, shape=[0])],
    "65 outputs": [_header(shape=[0])] * 65,
    "bytes that are a number": [_header(shape=[0], data=12)],
    # numpy reads any byte but 0 as True: a bool of byte 2 would pass for the reference's True.
    "a bool of byte 2": [
        _header(dtype="bool", shape=[3], data=arrays.encode([("x", np.array([1, 2, 0], np.uint8))])[0].data)
    ],
}


def _reference() -> checking.Reference:
    event = CaseExpected(
        0, 1, Case(name="c", dtype="float32", seed=0), "in", ((3, 4),), arrays.encode([("out", WANT)])
    )
    return checking.Reference(expected={0: Expected.of(event)}, of=1, tolerances={})


def _outputs(headers: list[dict]) -> Event:
    """As the host's reader would pass it on, or worse (not every header here fits the schema)."""
    data = {"index": 0, "case": "c", "seconds": 0.1, "inputs_digest": "in", "outputs": headers, "kernels": 1}
    return Event(kind="case_outputs", data=data, t=0.0)


@pytest.mark.parametrize("reference", [_reference(), None], ids=["checked", "summarised"])
@pytest.mark.parametrize("headers", HOSTILE.values(), ids=HOSTILE.keys())
def test_an_impossible_output_header_is_the_users_error(headers, reference):
    checker = checking.Checker(JOB, reference)
    (live,) = checker.see(_outputs(headers))  # while the job runs: a verdict, never an exception
    assert live.kind == "error"
    result = classify(JOB, checking.Checker(JOB, reference).rewrite(finished(_outputs(headers))))
    assert result.status is RunStatus.ERROR
    assert result.summary.startswith("error in check:") and "could not be checked" in result.summary
    assert "internal error" not in result.summary and len(result.summary) < 600


def test_a_zero_size_output_with_a_sane_header_is_still_read():
    (event,) = checking.Checker(JOB, None).see(_outputs([_header(shape=[0, 4])]))
    assert event.kind == "outputs" and event.data["outputs"][0]["shape"] == [0, 4]


def test_an_event_the_host_cannot_handle_stops_the_reading():
    def broken(event: Event) -> None:
        raise ValueError("a bug of ours")

    report = Report(broken)
    line = json.dumps(to_json_dict(new_event("progress", phase="x", case="c", seconds=0.0))).encode() + b"\n"
    report.feed(line * 2)
    assert report.error is not None and "could not be handled (ValueError)" in report.error
    assert len(report.events) == 1  # read no further: the watch stops the job on `report.error`


def test_every_other_field_of_a_case_report_is_bounded_too():
    data = {
        **_outputs([_header(shape=[3, 4], data=arrays.encode([("out", WANT)])[0].data)]).data,
        "case": "c" * 100_000,
        "seconds": float("nan"),
        "notes": ["n" * 100_000] * 1000,
        "race_count": -5,
        "kernels": 10**30,
    }
    (event,) = checking.Checker(JOB, _reference()).see(Event(kind="case_outputs", data=data, t=0.0))
    result = classify(JOB, finished(event))
    case = result.cases[0]
    assert case.seconds == 0.0 and case.kernels == 1 << 20 and len(case.note) < 8 * 600
    assert json.dumps(to_json_dict(result), allow_nan=False)  # JSON a browser can read
