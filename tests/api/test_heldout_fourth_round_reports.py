"""Issue 41, a fourth round of held-out variants: what a job's process reports, over a real HTTP server
(the fake sandbox).

A process's event time of NaN reached the run's event stream as `NaN` in the checker's own `case`
event, which no browser's `JSON.parse` reads; and a kernel whose process withheld the TPU compiler's
verdict was a clean `passed`, served again from the cache to whoever sent the same file.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Iterator

import httpx
import pytest

from sandbox.protocol import Event, LoweringCheck, Versions, new_event
from server.app import create_app
from server.settings import Settings
from server.streams import message
from tests.api.fakes import FakeBackend, kernel_outputs
from tests.executions import execution
from tests.live import serving

SIMULATED = new_event(
    "versions", versions=Versions("3.12", "0.12", "0.12", None, "TPU v5e (sim)"), interpret=True
)
LOWERED = new_event("lowering", check=LoweringCheck(chip="v5e", lowers=True, seconds=0.1))
REFERENCE = "def reference(x):\n    return x\n"  # a file with a reference: its run is checked


class ReportsFake(FakeBackend):
    """Kernel jobs whose source names a report: `nan-times` sends every event at time NaN (its made-up
    progress at infinity); `withheld` says it simulates and never sends the compiler's verdict;
    `lowered` sends it."""

    def run(self, job, on_event, cancel):
        words = ("nan-times", "withheld", "lowered")
        if job.role == "reference" or not any(w in job.source for w in words):
            return super().run(job, on_event, cancel)
        self.jobs.append(job)
        t = math.nan if "nan-times" in job.source else 0.5
        events = [
            Event("started", {"pid": 1}, t),
            SIMULATED,
            Event("progress", {"phase": "kernel", "case": "c0", "seconds": 0.1}, math.inf),
            Event("case_outputs", kernel_outputs(), t),
            *([] if "withheld" in job.source else [LOWERED]),
            Event("done", {"peak_rss_bytes": 0}, t),
        ]
        for event in events:
            on_event(event)
        return execution(*events, wall_seconds=0.01)


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[str, ReportsFake]]:
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("reports"), slots=2, queue_size=64, rate_per_minute=0,
        address_rate_per_minute=0, trusted_proxies="127.0.0.1",
    )  # fmt: skip
    backend = ReportsFake()
    with serving(create_app(settings, backend=backend)) as url:
        yield url, backend
    backend.release.set()


def _strict(text: str) -> object:
    def refuse(constant: str) -> object:
        raise ValueError(f"not JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def _done(http: httpx.Client, run_id: str) -> dict:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        state = http.get(f"/api/runs/{run_id}").json()
        if state["state"] == "done":
            return state["result"]
        time.sleep(0.02)
    raise AssertionError(f"run {run_id} did not finish")


def _stream(http: httpx.Client, run_id: str) -> list[tuple[str, dict]]:
    events, kind = [], ""
    with http.stream("GET", f"/api/runs/{run_id}/events") as answer:
        for line in answer.iter_lines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                events.append((kind, _strict(line[6:])))
    return events


def test_a_process_time_of_nan_never_reaches_an_event_stream(served):
    url, backend = served
    with httpx.Client(base_url=url, timeout=10, headers={"X-Forwarded-For": "10.41.4.1"}) as http:
        victim = http.post("/api/runs", json={"source": "block victim\n" + REFERENCE}).json()["id"]
        attack = http.post("/api/runs", json={"source": "# nan-times\n" + REFERENCE}).json()["id"]
        assert _done(http, attack)["status"] == "passed"
        seen = _stream(http, attack)  # every data line strict JSON, or `_strict` raises
        backend.release.set()
        assert _done(http, victim)["status"] == "passed"
    times = {kind: data["t"] for kind, data in seen if "t" in data}
    assert times["case"] == 0.0 and times["started"] == 0.0, times  # a done run's log keeps no progress
    assert all(0 <= t < 1e9 for t in times.values())


def test_a_withheld_compiler_verdict_is_never_served_from_the_cache(served):
    url, _ = served
    with httpx.Client(base_url=url, timeout=10, headers={"X-Forwarded-For": "10.41.4.2"}) as http:
        results: dict[str, list[dict]] = {"withheld": [], "lowered": []}
        for word, seen in results.items():
            for _ in range(
                2
            ):  # the second once the first is done: an identical job, which the cache may answer
                run = http.post("/api/runs", json={"source": f"# {word}\n{REFERENCE}", "chip": "v5e"}).json()
                seen.append(_done(http, run["id"]))
    withheld, lowered = results["withheld"], results["lowered"]
    assert [r["status"] for r in withheld] == ["error", "error"]
    assert "the TPU compiler's verdict was not reported" in withheld[0]["summary"]
    assert [r["cached_from"] for r in withheld] == [None, None]  # each ran: its job is not kept for reuse
    assert [r["status"] for r in lowered] == ["passed", "passed"] and lowered[1]["cached_from"] is not None


@pytest.mark.parametrize(
    ("data", "sent"),
    [
        ({"t": math.nan}, {"t": None}),
        ({"a": [1.0, math.inf, {"b": -math.inf}]}, {"a": [1.0, None, {"b": None}]}),
        ({"ok": 1.5, "text": "NaN"}, {"ok": 1.5, "text": "NaN"}),
    ],
    ids=["NaN", "infinities nested", "finite"],
)
def test_an_event_stream_writes_strict_json_whatever_it_is_given(data, sent):
    head, kind, line, end = message("case", data, 7).split("\n", 3)
    assert (head, kind, end) == ("id: 7", "event: case", "\n")
    assert _strict(line.removeprefix("data: ")) == sent


def test_the_class_pages_stream_writes_strict_json_too():
    """The class page's stream has its own writer (`server.classroom.stream.as_json`)."""
    from server.classroom.stream import as_json

    sent = json.loads(as_json({"t": math.nan, "times": [1.0, -math.inf], "nested": {"x": math.inf}}))
    assert sent == {"t": None, "times": [1.0, None], "nested": {"x": None}}
