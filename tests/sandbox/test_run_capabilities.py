"""A job cannot read or cancel another user's live run: run ids never reach the sandbox.

Through the real server and the hardened backend: a victim's run is in flight while an attacker's
job walks the heap it inherited from the warm pool and prints every id-like string it can reach;
none of them opens (or cancels) any run, and the victim passes with its output its own.
"""

from __future__ import annotations

import ast
import os
import time

import pytest
from fastapi.testclient import TestClient

from sandbox.backends import capability_report, default_backend_name
from server.app import create_app
from server.settings import Settings
from tests.backends import hardened_suite_backend
from tests.sandbox.hostile_corpus import PASSING_KERNEL, PRELUDE
from tests.sandbox.hostile_programs import HEAP_WALK

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(default_backend_name() != "hardened", reason=capability_report()),
]
SECRET = "VICTIM_SECRET_" + os.urandom(6).hex()
VICTIM = f"import time\nprint({SECRET!r}, flush=True)\ntime.sleep(3)\n" + PASSING_KERNEL
ATTACKER = PRELUDE + HEAP_WALK + PASSING_KERNEL


def wait(client: TestClient, run_id: str, state: str, headers: dict[str, str], seconds: float = 90) -> dict:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        body = client.get(f"/api/runs/{run_id}", headers=headers).json()
        if body["state"] == state or body["state"] == "done":
            return body
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} never reached {state}")


def test_a_heap_walk_finds_no_run_that_opens(tmp_path):
    settings = Settings(data_dir=tmp_path, slots=2, timing_budget_seconds=0.05, cache_size=0)
    victim_headers, attacker_headers = {"X-Playground-Client": "victim"}, {"X-Playground-Client": "attacker"}
    with TestClient(create_app(settings, backend=hardened_suite_backend())) as client:
        victim = client.post("/api/runs", json={"source": VICTIM}, headers=victim_headers).json()["id"]
        wait(client, victim, "running", victim_headers)
        attacker = client.post("/api/runs", json={"source": ATTACKER}, headers=attacker_headers).json()["id"]
        stolen = wait(client, attacker, "done", attacker_headers)["result"]
        assert stolen["status"] == "passed", stolen["summary"]
        found = ast.literal_eval(next(x for x in stolen["stdout"].splitlines() if x.startswith("ids:"))[4:])
        assert victim not in found and SECRET not in stolen["stdout"] + stolen["stderr"]
        assert len(found) > 10  # the walk did reach the inherited heap
        # Its own run's id opens for its creator by design; every other id it found must not open.
        # And the victim's id one character off does not open either. (A 16-byte id's last character
        # is one of A, Q, g, w: replacing it with a fixed "A" gave the victim's own id one run in four.)
        near_miss = victim[:-1] + ("Q" if victim.endswith("A") else "A")
        for candidate in [*(c for c in found if c != attacker), near_miss]:
            assert client.get(f"/api/runs/{candidate}", headers=attacker_headers).status_code == 404
            assert client.delete(f"/api/runs/{candidate}", headers=attacker_headers).status_code == 404
        result = wait(client, victim, "done", victim_headers)["result"]
        assert result["status"] == "passed" and SECRET in result["stdout"]
