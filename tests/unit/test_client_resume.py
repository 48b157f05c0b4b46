"""`Client.follow` resumes a broken event stream after the last event id it saw, as a browser's
EventSource does: a stub server (standard library, in a thread) cuts the first stream after two
events and answers the second only when it carries `Last-Event-ID`."""

from __future__ import annotations

import http.server
import json
import threading
from collections.abc import Iterator
from typing import ClassVar

import pytest

from pallas_playground import Client
from sandbox.protocol import InterpretOptions, RunResult, RunStatus, to_json_dict

RESULT = to_json_dict(RunResult(RunStatus.PASSED, "ok", "v5e", "interpret", InterpretOptions()))
EVENTS = [("0", "queued", {"position": 1}), ("1", "running", {}), ("2", "started", {}), ("3", "done", RESULT)]


class Stub(http.server.BaseHTTPRequestHandler):
    asked: ClassVar[list[str | None]] = []  # the Last-Event-ID of each request

    def do_GET(self) -> None:
        after = self.headers.get("Last-Event-ID")
        Stub.asked.append(after)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        chosen = EVENTS[:2] if after is None else [e for e in EVENTS if int(e[0]) > int(after)]
        for event_id, kind, data in chosen:
            self.wfile.write(f"id: {event_id}\nevent: {kind}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()  # then the connection closes: for the first stream, before `done`

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def stub() -> Iterator[str]:
    Stub.asked = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Stub)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_follow_resumes_after_the_last_event_it_saw(stub, monkeypatch):
    monkeypatch.setattr("pallas_playground.client.time.sleep", lambda seconds: None)
    kinds: list[str] = []
    result = Client(stub).follow("r1", lambda event: kinds.append(event.kind))
    assert result.status is RunStatus.PASSED
    assert kinds == ["queued", "running", "started", "done"]
    assert Stub.asked[:2] == [None, "1"]
