"""Twenty runs at once through the real server and real jobs (the session's sandbox backend,
`tests.backends`): all complete, correctly."""

import concurrent.futures
import time

import pytest
from fastapi.testclient import TestClient

from server.app import create_app
from server.settings import Settings
from tests.backends import SLOTS, suite_backend
from tests.sandbox.test_spine_local import ADD_KERNEL

pytestmark = pytest.mark.slow
RUNS = 20


def test_twenty_concurrent_runs_all_complete(tmp_path):
    settings = Settings(
        data_dir=tmp_path,
        slots=SLOTS,
        queue_size=32,
        per_client_queue=RUNS,
        timing_budget_seconds=0.05,
        rate_per_minute=0,
        cache_size=0,
    )
    sources = [
        ADD_KERNEL + f"\ndef reference(x, y):  # run {i}\n    return x + y + {i % 2}\n" for i in range(RUNS)
    ]
    with TestClient(create_app(settings, backend=suite_backend())) as client:

        def submit(source: str) -> str:
            response = client.post("/api/runs", json={"source": source})
            assert response.status_code == 201, response.text
            return response.json()["id"]

        with concurrent.futures.ThreadPoolExecutor(RUNS) as pool:
            ids = list(pool.map(submit, sources))
        deadline = time.monotonic() + 240
        results = {}
        while len(results) < RUNS and time.monotonic() < deadline:
            for run_id in ids:
                state = client.get(f"/api/runs/{run_id}").json()
                if state["state"] == "done":
                    results[run_id] = state["result"]
            assert client.get("/api/health").json()["status"] == "ok"
            time.sleep(0.5)
    statuses = [results[i]["status"] for i in ids]
    # Odd-numbered references add 1, so exactly those must be rejected: correct, not just complete.
    assert statuses == ["passed" if i % 2 == 0 else "mismatch" for i in range(RUNS)]
