"""The MCP server over the Redis queue: a live web server whose runs go to a worker (fake sandbox) on
real Redis. An MCP run passes with progress from the worker's events; a cancelled call cancels the
run through Redis (the worker stops the job); MCP runs count against the address's limits, which
with Redis live in Redis."""

from __future__ import annotations

import time

import httpx

from server.app import create_app
from tests.live import serving
from tests.mcp_session import call, call_until, run_apart, session
from tests.scale.conftest import web_settings, worker

SOURCE = "def matmul(x, y):\n    return x @ y\n"


def test_mcp_runs_pass_and_cancel_through_redis_and_a_worker(redis_service, prefix, tmp_path):
    app = create_app(web_settings(redis_service, prefix, tmp_path))
    with worker(redis_service, prefix) as backend, serving(app) as url:

        async def main():
            async with session(url) as client:
                passed = await call(client, "run_kernel", {"source": SOURCE, "entry": "tiled_matmul"})
                seen = await call_until(
                    client, "run_kernel", {"source": "block " + SOURCE}, stop_after="compiled"
                )
                return passed, seen

        passed, seen = run_apart(main)
        run_id = seen[0].split()[1]
        deadline = time.monotonic() + 15
        while (state := httpx.get(f"{url}/api/runs/{run_id}").json())["state"] != "done":
            assert time.monotonic() < deadline, state
            time.sleep(0.05)
        assert not backend.release.is_set() and len(backend.jobs) == 2  # the worker stopped the second job
    assert passed.structured["status"] == "passed" and any("case" in (m or "") for _, _, m in passed.progress)
    assert state["result"]["status"] == "cancelled"


def test_mcp_runs_count_against_the_address_in_redis(redis_service, prefix, tmp_path):
    app = create_app(
        web_settings(redis_service, prefix, tmp_path, address_rate_per_minute=1, address_rate_burst=1)
    )
    with worker(redis_service, prefix), serving(app) as url:
        assert httpx.post(f"{url}/api/runs", json={"source": SOURCE}).status_code == 201

        async def main():
            async with session(url) as client:
                return await call(client, "run_kernel", {"source": SOURCE, "fresh": True})

        refused = run_apart(main)
    assert refused.is_error and refused.structured["status"] == 429 and refused.structured["retry_after"] >= 1
