"""Following runs as a client does: poll to done, read an SSE stream (with ids) to its end."""

from __future__ import annotations

import json
import time
from typing import Any

SOURCE = "def matmul(x, y):\n    return x @ y\n\n\ndef reference(x, y):\n    return x @ y\n"


def wait_done(client: Any, run_id: str, timeout: float = 10.0) -> dict:
    end = time.monotonic() + timeout
    state: dict = {}
    while time.monotonic() < end:
        state = client.get(f"/api/runs/{run_id}").json()
        if state.get("state") == "done":
            return state
        time.sleep(0.02)
    raise AssertionError(f"run {run_id} not done: {state}")


def wait_for(check: Any, timeout: float = 10.0, what: str = "condition") -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if value := check():
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def sse(client: Any, run_id: str, last_id: str | None = None) -> list[tuple[str | None, str, dict]]:
    """Every (id, kind, data) of the run's event stream until it ends."""
    headers = {"Last-Event-ID": last_id} if last_id else {}
    events, event_id, kind = [], None, ""
    with client.stream("GET", f"/api/runs/{run_id}/events", headers=headers) as response:
        assert response.status_code == 200, response.read()
        for line in response.iter_lines():
            if line.startswith("id: "):
                event_id = line[4:]
            elif line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                events.append((event_id, kind, json.loads(line[6:])))
                event_id = None
    return events
