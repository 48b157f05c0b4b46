import json
import time

import pytest

from server.queue.cache import cache_ref
from tests.api.conftest import make_client

SOURCE = "def matmul(x, y):\n    return x @ y\n\n\ndef reference(x, y):\n    return x @ y\n"


def wait_done(client, run_id: str, timeout: float = 5.0) -> dict:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        state = client.get(f"/api/runs/{run_id}").json()
        if state["state"] == "done":
            return state
        time.sleep(0.01)
    raise AssertionError(f"run {run_id} not done: {state}")


def sse_events(client, run_id: str) -> list[tuple[str, dict]]:
    events, kind = [], None
    with client.stream("GET", f"/api/runs/{run_id}/events") as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                events.append((kind, json.loads(line[6:])))
    return events


def test_run_passes_and_result_is_readable(client):
    created = client.post("/api/runs", json={"source": SOURCE, "entry": "tiled_matmul", "chip": "v6e"})
    assert created.status_code == 201
    body = created.json()
    assert body["url"] == f"/api/runs/{body['id']}" and created.headers["location"] == body["url"]
    state = wait_done(client, body["id"])
    assert state["result"]["status"] == "passed"
    assert state["result"]["chip"] == "v6e" and state["result"]["stdout"] == "hello\n"


def test_events_stream_in_pipeline_order(client):
    run_id = client.post("/api/runs", json={"source": SOURCE}).json()["id"]
    kinds = [k for k, _ in sse_events(client, run_id)]
    assert kinds[0] == "queued" and kinds[-1] == "done"
    assert kinds.index("running") < kinds.index("started") < kinds.index("compiled") < kinds.index("case")
    done = sse_events(client, run_id)[-1][1]
    assert done["status"] == "passed"  # a late subscriber replays everything, ending with the result


def test_events_resume_after_last_event_id(client):
    run_id = client.post("/api/runs", json={"source": SOURCE}).json()["id"]
    wait_done(client, run_id)
    all_events = sse_events(client, run_id)
    with client.stream("GET", f"/api/runs/{run_id}/events", headers={"Last-Event-ID": "2"}) as response:
        ids = [int(line[4:]) for line in response.iter_lines() if line.startswith("id: ")]
    assert ids == list(range(3, len(all_events)))


@pytest.mark.parametrize(
    "last_id",
    ["999", "1" * 10_000, "-1", "x"],
    ids=["past the end", "10,000 digits", "negative", "malformed"],
)
def test_an_event_id_we_never_issued_replays_the_run_to_its_end(client, last_id):
    # A reconnecting browser must always see `done`; before, an id past the end ended the stream
    # without it and a 10,000-digit id raised mid-stream.
    run_id = client.post("/api/runs", json={"source": SOURCE}).json()["id"]
    wait_done(client, run_id)
    every = sse_events(client, run_id)
    with client.stream("GET", f"/api/runs/{run_id}/events", headers={"Last-Event-ID": last_id}) as response:
        assert response.status_code == 200
        kinds = [line[7:] for line in response.iter_lines() if line.startswith("event: ")]
    assert kinds == [k for k, _ in every] and kinds[-1] == "done"


def test_cancel_running_run(client, backend):
    run_id = client.post("/api/runs", json={"source": "block"}).json()["id"]
    while client.get(f"/api/runs/{run_id}").json()["state"] != "running":
        time.sleep(0.01)
    assert client.delete(f"/api/runs/{run_id}").status_code == 200
    assert wait_done(client, run_id)["result"]["status"] == "cancelled"


def test_cancel_queued_run_never_runs(client, backend):
    blocker = client.post("/api/runs", json={"source": "block"}).json()["id"]
    queued = client.post("/api/runs", json={"source": "queued one"}).json()
    assert queued["position"] == 1
    client.delete(f"/api/runs/{queued['id']}")
    assert wait_done(client, queued["id"])["result"]["status"] == "cancelled"
    backend.release.set()
    wait_done(client, blocker)
    assert [j.source for j in backend.jobs] == ["block"]


def test_queue_full_answers_503_with_retry_after(backend, tmp_path):
    with make_client(backend, tmp_path, queue_size=2) as client:
        client.post("/api/runs", json={"source": "block"})
        while not backend.jobs:
            time.sleep(0.01)
        for i in range(2):
            assert client.post("/api/runs", json={"source": f"block {i}"}).status_code == 201
        full = client.post("/api/runs", json={"source": "one too many"})
        assert full.status_code == 503
        assert int(full.headers["retry-after"]) >= 1
        assert full.headers["content-type"] == "application/problem+json"
        backend.release.set()


def test_one_client_cannot_fill_the_queue(backend, tmp_path):
    with make_client(backend, tmp_path, per_client_queue=2, queue_size=10) as client:
        greedy = {"X-Playground-Client": "greedy"}
        assert client.post("/api/runs", json={"source": "block"}, headers=greedy).status_code == 201
        assert client.post("/api/runs", json={"source": "block"}, headers=greedy).status_code == 201
        refused = client.post("/api/runs", json={"source": "block"}, headers=greedy)
        assert refused.status_code == 429 and "retry-after" in refused.headers
        other = client.post("/api/runs", json={"source": "x"}, headers={"X-Playground-Client": "polite"})
        assert other.status_code == 201
        backend.release.set()


def test_queue_is_round_robin_across_clients(backend, tmp_path):
    with make_client(backend, tmp_path, per_client_queue=10, queue_size=10) as client:
        a = {"X-Playground-Client": "a"}
        client.post("/api/runs", json={"source": "block first"}, headers=a)
        while not backend.jobs:
            time.sleep(0.01)
        a_runs = [
            client.post("/api/runs", json={"source": f"block a{i}"}, headers=a).json() for i in range(3)
        ]
        b_run = client.post(
            "/api/runs", json={"source": "block b"}, headers={"X-Playground-Client": "b"}
        ).json()
        assert [r["position"] for r in a_runs] == [1, 2, 3]
        assert client.get(f"/api/runs/{b_run['id']}").json()["position"] == 2  # ahead of a's 2nd and 3rd
        backend.release.set()


def test_backend_fault_is_a_failed_result_not_a_crash(client):
    run_id = client.post("/api/runs", json={"source": "crash"}).json()["id"]
    result = wait_done(client, run_id)["result"]
    assert result["status"] == "error" and "internal error" in result["summary"]
    assert client.get("/api/health").json()["status"] == "ok"


def test_entry_chips_are_enforced(client, tmp_path):
    response = client.post("/api/runs", json={"source": SOURCE, "entry": "tiled_matmul", "chip": "v5e"})
    assert response.status_code == 201  # tiled_matmul supports every chip


@pytest.mark.parametrize(
    "options", [{"detect_races": True}, {"uninitialized_memory": "zero", "random_seed": 7}]
)
def test_options_reach_the_job(client, backend, options):
    run_id = client.post("/api/runs", json={"source": SOURCE, "options": options}).json()["id"]
    wait_done(client, run_id)
    job_options = backend.jobs[-1].options
    for key, value in options.items():
        assert getattr(job_options, key) == value


def test_identical_run_is_served_from_cache_and_flagged(client, backend):
    first = client.post("/api/runs", json={"source": SOURCE, "chip": "v5e"}).json()["id"]
    wait_done(client, first)
    again = client.post("/api/runs", json={"source": SOURCE, "chip": "v5e"}).json()
    assert again["state"] == "done"
    result = client.get(f"/api/runs/{again['id']}").json()["result"]
    assert result["cached_from"] == cache_ref(first) and result["cached_at"] > 0
    fresh = client.post("/api/runs", json={"source": SOURCE, "chip": "v5e", "fresh": True}).json()["id"]
    assert wait_done(client, fresh)["result"]["cached_from"] is None
    assert len(backend.jobs) == 2  # the cached answer ran nothing


def test_different_chip_is_not_a_cache_hit(client, backend):
    for chip in ("v5e", "v6e"):
        wait_done(client, client.post("/api/runs", json={"source": SOURCE, "chip": chip}).json()["id"])
    assert len(backend.jobs) == 2


def test_rate_limit_answers_429_with_retry_after(backend, tmp_path):
    with make_client(backend, tmp_path, rate_per_minute=6, rate_burst=2) as client:
        codes = [client.post("/api/runs", json={"source": f"s{i}"}).status_code for i in range(3)]
        assert codes == [201, 201, 429]
        limited = client.post("/api/runs", json={"source": "s9"})
        assert limited.headers["content-type"] == "application/problem+json"
        assert 1 <= int(limited.headers["retry-after"]) <= 10
        assert "too quickly" in limited.json()["detail"]


def test_lower_chips_reach_the_job(client, backend):
    run_id = client.post("/api/runs", json={"source": SOURCE, "lower_chips": ["v5e", "tpu7x"]}).json()["id"]
    wait_done(client, run_id)
    assert backend.jobs[-1].lower_chips == ("v5e", "tpu7x")
    assert client.post("/api/runs", json={"source": SOURCE, "lower_chips": ["v9"]}).status_code == 422


def test_lowering_progress_events_carry_no_ir_text():
    from sandbox.backends.execute import slim

    report = {"chip": "v5e", "lowers": True, "jaxpr": {"text": "x" * 10}, "mosaic": None, "stablehlo": None}
    data = slim({"check": report, "checks": [report], "warnings": []})
    assert "jaxpr" not in data["check"] and data["check"]["lowers"] is True
    assert all("jaxpr" not in r for r in data["checks"])
