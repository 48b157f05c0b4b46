"""The MCP server (`/mcp`) through the official SDK's client against a live server with the fake
sandbox: the tools and their schemas, a run to `passed` with progress, refusals as tool errors with
the API's problem fields, cancellation reaching the queue, the MCP rate limit and the address's run
limits, and the setting that turns it off."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest
from fastapi.testclient import TestClient

from server.app import create_app
from server.settings import Settings
from server.wire.schemas import RunRequest
from server.wire.sweeps import SweepRequest
from tests.api.fakes import FakeBackend
from tests.live import serving
from tests.mcp_session import call, call_until, run_apart, session

SOURCE = "def matmul(x, y):\n    return x @ y\n"


@pytest.fixture
def live(tmp_path) -> Iterator[tuple[str, FakeBackend]]:
    backend = FakeBackend()
    settings = Settings(data_dir=tmp_path, slots=1, queue_size=8, per_client_queue=8)
    with serving(create_app(settings, backend=backend)) as url:
        yield url, backend
    backend.release.set()


def test_tools_are_listed_with_the_api_wire_types_as_input_schemas(live):
    url, _ = live

    async def main() -> dict:
        async with session(url) as client:
            return {tool.name: tool for tool in (await client.list_tools()).tools}

    tools = run_apart(main)
    assert set(tools) == {
        "run_kernel",
        "lower_kernel",
        "tune_kernel",
        "list_catalog",
        "read_catalog_entry",
        "explain_run",
        "cancel_run",
    }
    assert tools["run_kernel"].input_schema == RunRequest.model_json_schema()
    assert tools["tune_kernel"].input_schema == SweepRequest.model_json_schema()
    assert tools["list_catalog"].annotations.read_only_hint is True


def test_run_kernel_passes_with_progress_and_the_cli_report(live):
    url, backend = live

    async def main():
        async with session(url) as client:
            return await call(
                client, "run_kernel", {"source": SOURCE, "entry": "tiled_matmul", "chip": "v6e"}
            )

    got = run_apart(main)
    assert not got.is_error
    assert got.structured["status"] == "passed" and got.structured["passed"] is True
    assert got.structured["chip"] == "v6e" and got.structured["cases"][0]["passed"] is True
    assert "[PASSED]" in got.text and got.structured["run_id"] in got.text
    messages = [m for _, _, m in got.progress]
    assert any("case c0 (1 of 1): passed" in m for m in messages), messages
    assert [p for p, _, _ in got.progress] == sorted(p for p, _, _ in got.progress)
    assert backend.jobs[0].entry.slug == "tiled_matmul"


def test_refusals_are_tool_errors_with_the_api_problem(live):
    url, _ = live

    async def main():
        async with session(url) as client:
            return (
                await call(client, "run_kernel", {"source": SOURCE, "chip": "v9"}),
                await call(client, "run_kernel", {"source": SOURCE, "entry": "no_such_entry"}),
                await call(client, "run_kernel", {"source": "x" * 300_000}),
                await call(client, "explain_run", {"run_id": "nope"}),
                await call(client, "no_such_tool", {}),
            )

    bad_chip, bad_entry, too_big, unknown_run, unknown_tool = run_apart(main)
    assert bad_chip.is_error and bad_chip.structured["status"] == 422
    assert bad_chip.structured["errors"][0]["field"] == "chip"
    assert bad_entry.structured["status"] == 422 and "no_such_entry" in bad_entry.structured["detail"]
    assert bad_entry.structured["field"] == "entry"
    assert too_big.structured["status"] == 413 and too_big.text.startswith("413 Source too large")
    assert unknown_run.structured["status"] == 404
    assert unknown_tool.is_error and "run_kernel" in unknown_tool.structured["detail"]


def test_cancelling_the_call_cancels_the_run_in_the_queue(live):
    url, backend = live

    async def main() -> list[str]:
        async with session(url) as client:
            return await call_until(
                client, "run_kernel", {"source": "block " + SOURCE}, stop_after="compiled"
            )

    messages = run_apart(main)
    run_id = messages[0].split()[1]
    deadline = time.monotonic() + 10
    while True:
        state = httpx.get(f"{url}/api/runs/{run_id}").json()
        if state["state"] == "done" or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert state["result"]["status"] == "cancelled"  # the fake job was stopped, not released
    assert not backend.release.is_set()


def test_catalog_tools_give_the_exercise_not_its_solution(live):
    url, _ = live

    async def main():
        async with session(url) as client:
            listed = await call(client, "list_catalog", {"level": "beginner"})
            entry = await call(client, "read_catalog_entry", {"slug": "tiled_matmul"})
            return listed, entry

    listed, entry = run_apart(main)
    assert listed.structured["entries"] and {e["level"] for e in listed.structured["entries"]} == {"beginner"}
    assert "TODO" in entry.structured["template"] and "def reference" in entry.structured["reference"]
    assert "solution" not in entry.structured and "wrong" not in entry.structured
    assert "## template.py" in entry.text


def test_mcp_calls_have_their_own_rate_limit(tmp_path):
    settings = Settings(data_dir=tmp_path, mcp_calls_per_minute=1, mcp_calls_burst=2)
    with serving(create_app(settings, backend=FakeBackend())) as url:

        async def main():
            async with session(url) as client:
                return [await call(client, "list_catalog", {}) for _ in range(3)]

        calls = run_apart(main)
    assert [c.is_error for c in calls] == [False, False, True]
    assert calls[2].structured["status"] == 429 and calls[2].structured["retry_after"] >= 1


def test_mcp_runs_count_against_the_address_like_api_runs(tmp_path):
    settings = Settings(data_dir=tmp_path, address_rate_per_minute=1, address_rate_burst=1)
    with serving(create_app(settings, backend=FakeBackend())) as url:
        assert httpx.post(f"{url}/api/runs", json={"source": SOURCE}).status_code == 201

        async def main():
            async with session(url) as client:
                return await call(client, "run_kernel", {"source": SOURCE, "fresh": True})

        refused = run_apart(main)
    assert refused.is_error and refused.structured["status"] == 429
    assert refused.structured["title"] == "Rate limited"


def test_the_setting_turns_the_mcp_server_off(tmp_path):
    with TestClient(create_app(Settings(data_dir=tmp_path, mcp=False), backend=FakeBackend())) as client:
        response = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/problem+json"


def test_tune_kernel_ranks_a_sweep_with_a_notification_per_config(tmp_path):
    from tests.api.test_sweeps import PARAMS, SweepBackend
    from tests.api.test_sweeps import SOURCE as TUNABLE

    settings = Settings(data_dir=tmp_path, slots=2, per_client_queue=8)
    with serving(create_app(settings, backend=SweepBackend())) as url:

        async def main():
            async with session(url) as client:
                arguments = {
                    "source": TUNABLE,
                    "chip": "v5e",
                    "params": PARAMS,
                    "size": {"m": 4096, "k": 4096, "n": 4096},
                }
                arguments["bind"] = {"bm": "m", "bk": "k", "bn": "n"}
                return await call(
                    client, "tune_kernel", {**arguments, "check_size": {"m": 256, "k": 256, "n": 256}}
                )

        tuned = run_apart(main)
    assert not tuned.is_error, tuned.text
    sweep = tuned.structured["sweep"]
    assert sweep["configs"][sweep["best"]]["params"] == {"bm": 128, "bk": 128, "bn": 128}
    assert [p for p, _, _ in tuned.progress[-1:]] == [27] and {t for _, t, _ in tuned.progress} == {27}
    assert "rejected" in tuned.text and tuned.structured["sweep_id"] in tuned.text


def test_new_sessions_have_their_own_bucket_per_address(tmp_path):
    settings = Settings(data_dir=tmp_path, mcp_calls_per_minute=1, mcp_calls_burst=1)
    with serving(create_app(settings, backend=FakeBackend())) as url:
        headers = {"Accept": "application/json, text/event-stream"}
        first = httpx.post(f"{url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=headers)
        second = httpx.post(f"{url}/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"}, headers=headers)
    assert first.status_code != 429
    assert second.status_code == 429 and second.json()["title"] == "Too many MCP sessions"
    assert int(second.headers["retry-after"]) >= 1
