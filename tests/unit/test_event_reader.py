"""The strict reader of a child's events, fuzzed: whatever bytes or structures a job writes on its
event fd, the reader either yields events that fit their kind's schema or stops with a ReportError;
nothing else ever escapes (an exception there once stopped the server's run queue for good)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from sandbox.backends.watch import Report
from sandbox.protocol.events import PAYLOADS, new_event, payload
from sandbox.protocol.reading import ReportError, read_event

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4)
    ),
    max_leaves=20,
)
KINDS = st.sampled_from(sorted(PAYLOADS)) | st.text(max_size=10)
FIELD_NAMES = st.sampled_from(["pid", "index", "of", "result", "error", "check", "trace", "t", "outputs"])


def structured_event() -> st.SearchStrategy[bytes]:
    data = st.dictionaries(FIELD_NAMES | st.text(max_size=8), JSON, max_size=4) | JSON
    event = st.fixed_dictionaries({"kind": KINDS, "data": data}, optional={"t": JSON, "extra": JSON})
    return event.map(lambda e: json.dumps(e).encode())


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.binary(max_size=300), structured_event()))
def test_read_event_accepts_only_schema_fitting_events(line):
    try:
        event = read_event(line)
    except ReportError:
        return
    payload(event)  # an accepted event always decodes to its kind's payload


@settings(max_examples=100, deadline=None)
@given(st.lists(st.binary(max_size=200) | structured_event().map(lambda b: b + b"\n"), max_size=8), st.data())
def test_the_report_reader_never_raises_whatever_the_chunks(parts, data):
    stream = b"".join(parts)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(stream)), max_size=6)))
    seen = []
    report = Report(seen.append)
    for start, end in zip([0, *cuts], [*cuts, len(stream)], strict=True):
        report.feed(stream[start:end])
    assert seen == report.events
    for event in report.events:
        payload(event)


def test_a_valid_report_is_read_back_exactly():
    events = [new_event("started", pid=7), new_event("compiled", first_call_seconds=0.25)]
    stream = b"".join(json.dumps({"kind": e.kind, "data": e.data, "t": e.t}).encode() + b"\n" for e in events)
    report = Report(lambda event: None)
    report.feed(stream[:10])
    report.feed(stream[10:])
    assert report.error is None and report.events == events


def test_the_first_bad_line_stops_the_reading():
    report = Report(lambda event: None)
    report.feed(b'{"kind": "started", "data": {"pid": 1}, "t": 0}\n{"kind": "case", "data": {}}\n')
    report.feed(b'{"kind": "started", "data": {"pid": 2}, "t": 0}\n')
    assert [e.data for e in report.events] == [{"pid": 1}]
    assert report.error == "event 2: case event: CaseChecked: missing fields ['index', 'of', 'result']"


def test_caps_hold():
    report = Report(lambda event: None)
    report.feed(b"x" * (17 << 20))
    assert report.error is not None and "an event of more than" in report.error
    many = Report(lambda event: None)
    many.feed(b'{"kind": "imported", "data": {}, "t": 0}\n' * 10_001)
    assert many.error == "the job wrote more than 10,000 events"
