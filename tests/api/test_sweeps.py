"""`/api/sweeps` with a fake sandbox: one sweep over shard runs of the run queue, its events, its result.

The fake's sweep jobs report each config by a rule a test can read: bk=64 is rejected by the
compiler, bm*bn >= 4096*4096 is over VMEM, anything else ran at its check size with an estimate of
bm+bk+bn µs (so bm=128, bk=128, bn=128 is the best); its outputs go to the real checker, as a real
sweep job's do. `block` in the source holds the job until released.
"""

from __future__ import annotations

import json
import threading
import time

import pytest

from sandbox.protocol import Case, ConfigResult, Execution, Job, new_event, to_json_dict
from sandbox.verdict import arrays
from tests.api.conftest import make_client
from tests.api.fakes import OUTPUT, FakeBackend
from tests.executions import execution

SOURCE = "def matmul(x, y, *, bm=128, bk=128, bn=128):\n    return x @ y\n"
PARAMS = {"bm": [128, 512, 4096], "bk": [64, 128, 512], "bn": [128, 512, 4096]}


def judge(index: int, params: dict) -> ConfigResult:
    common = {"index": index, "params": params, "check_size": {"m": 256}}
    params = {"bm": 128, "bk": 128, "bn": 128, **params}
    if params["bk"] == 64:
        return ConfigResult(**common, status="rejected", reason="rejected by the TPU compiler for v5e: block")
    if params["bm"] * params["bn"] >= 4096 * 4096:
        return ConfigResult(
            **common, status="over_vmem", reason="needs 160 MiB of VMEM", vmem_bytes=160 << 20
        )
    seconds = (params["bm"] + params["bk"] + params["bn"]) * 1e-6
    return ConfigResult(
        **common, status="ok", reason="ok", estimated_seconds=seconds, bound="compute", roofline_fraction=0.5
    )


def ran(result: ConfigResult, done: int, of: int) -> dict:
    """A sweep job's `config_outputs` for one config: outputs (the reference's) when it got to its check."""
    checked = result.status == "ok"
    outputs = arrays.encode([("out", OUTPUT)]) if checked else ()
    return {"result": result, "done": done, "of": of, "ran": checked, "how": "generic interpreter"} | {
        "inputs_digest": "fake",
        "outputs": outputs,
    }


def expected(job: Job) -> dict:
    """A sweep's reference's job: one check size for every config."""
    return {
        "index": 0,
        "of": 1,
        "case": Case(name="m=256", dtype="float32", seed=0, dims={"m": 256}),
        "inputs_digest": "fake",
        "input_shapes": ((8,),),
        "outputs": arrays.encode([("out", OUTPUT)]),
        "configs": tuple(i for i, _ in job.sweep.configs()),
    }


class SweepBackend(FakeBackend):
    """Runs sweep jobs config by config (events as the real child writes them); other jobs as the fake."""

    def run(self, job: Job, on_event, cancel: threading.Event) -> Execution:
        if job.sweep is None:
            return super().run(job, on_event, cancel)
        if job.role == "reference":
            self.reference_jobs.append(job)
            events = [new_event("expected", **expected(job)), new_event("done", peak_rss_bytes=0)]
            return self.execution(events, cancel)
        self.jobs.append(job)
        events = [new_event("started", pid=1)]
        on_event(events[0])
        configs = job.sweep.configs()
        for done, (index, params) in enumerate(configs, start=1):
            while "block" in job.source and not (cancel.is_set() or self.release.is_set()):
                time.sleep(0.005)
            if cancel.is_set():
                break
            event = new_event("config_outputs", **ran(judge(index, params), done, len(configs)))
            events.append(event)
            on_event(event)
        if not cancel.is_set():
            events.append(new_event("done", peak_rss_bytes=0))
        return self.execution(events, cancel)

    @staticmethod
    def execution(events: list, cancel: threading.Event) -> Execution:
        cancelled = cancel.is_set()
        return execution(
            *events,
            exit_code=None if cancelled else 0,
            signal=9 if cancelled else None,
            cancelled=cancelled,
            wall_seconds=0.01,
        )


@pytest.fixture
def sweeps_client(tmp_path):
    backend = SweepBackend()
    # Three slots: a sweep takes two shards and leaves one for everyone else (`shard_count`).
    with make_client(backend, tmp_path, slots=3, queue_size=16, per_client_queue=8) as client:
        client.backend = backend
        yield client
    backend.release.set()


def wait_done(client, sweep_id: str, timeout: float = 10.0) -> dict:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        state = client.get(f"/api/sweeps/{sweep_id}").json()
        if state["state"] == "done":
            return state
        time.sleep(0.01)
    raise AssertionError(f"sweep {sweep_id} not done: {state}")


def sse(client, url: str) -> list[tuple[str, dict]]:
    events, kind = [], None
    with client.stream("GET", url) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                events.append((kind, json.loads(line[6:])))
    return events


def test_sweep_judges_every_config_over_shards_and_picks_the_best(sweeps_client):
    body = {"source": SOURCE, "chip": "v5e", "params": PARAMS, "size": {"m": 4096, "k": 4096, "n": 4096}}
    created = sweeps_client.post("/api/sweeps", json=body)
    assert created.status_code == 201, created.text
    info = created.json()
    assert (info["total"], info["shards"]) == (27, 2)
    assert created.headers["location"] == info["url"]
    result = wait_done(sweeps_client, info["id"])["result"]
    sweep = result["sweep"]
    assert [c["index"] for c in sweep["configs"]] == list(range(27))
    statuses = {c["status"] for c in sweep["configs"]}
    assert statuses == {"ok", "rejected", "over_vmem"}
    best = next(c for c in sweep["configs"] if c["index"] == sweep["best"])
    assert best["params"] == {"bm": 128, "bk": 128, "bn": 128}
    assert result["status"] == "passed"
    assert "swept 27 of 27 configs on v5e" in result["summary"] and "9 rejected" in result["summary"]
    assert "best bm=128, bk=128, bn=128" in result["summary"]
    jobs = sweeps_client.backend.jobs
    assert sorted(i for job in jobs for i in job.sweep.only) == list(range(27))  # each config once


def test_sweep_events_stream_each_config_then_the_result(sweeps_client):
    body = {"source": SOURCE, "params": {"bm": [128, 512]}, "size": {"m": 4096}}
    info = sweeps_client.post("/api/sweeps", json=body).json()
    events = sse(sweeps_client, info["events_url"])
    kinds = [k for k, _ in events]
    assert kinds[-1] == "done" and kinds.count("config") == 2
    judged = [d["judged"] for k, d in events if k == "config"]
    assert judged == [1, 2] and all(d["total"] == 2 for k, d in events if k == "config")
    assert events[-1][1]["sweep"]["total"] == 2
    again = sse(sweeps_client, info["events_url"])  # a late subscriber replays everything
    assert [k for k, _ in again] == kinds


def test_catalog_entry_tune_table_fills_the_request(sweeps_client):
    body = {"source": SOURCE, "entry": "tiled_matmul_pallas_call", "chip": "v5e"}
    info = sweeps_client.post("/api/sweeps", json=body).json()
    result = wait_done(sweeps_client, info["id"])["result"]
    spec = result["sweep"]["spec"]
    assert spec["params"] == {"bm": [128, 256, 512], "bk": [128, 512, 1024], "bn": [128, 512, 1024]}
    assert spec["size"] == {"m": 4096, "k": 4096, "n": 4096} and spec["bind"] == {
        "bm": "m",
        "bk": "k",
        "bn": "n",
    }
    detail = sweeps_client.get("/api/catalog/tiled_matmul_pallas_call").json()
    assert detail["tune"]["values"]["bm"] == [128, 256, 512]


def test_cancel_stops_every_shard_and_keeps_what_was_judged(sweeps_client):
    body = {"source": SOURCE + "# block\n", "params": PARAMS, "size": {"m": 4096}}
    info = sweeps_client.post("/api/sweeps", json=body).json()
    cancelled = sweeps_client.delete(f"/api/sweeps/{info['id']}")
    assert cancelled.status_code == 200
    result = wait_done(sweeps_client, info["id"])["result"]
    assert result["status"] == "cancelled"
    assert "configs on v5e" in result["summary"]


@pytest.mark.parametrize(
    "body, detail",
    [
        ({"source": SOURCE, "size": {"m": 1}}, "name at least one parameter"),
        ({"source": SOURCE, "params": {"bm": [128]}}, "target problem size"),
        (
            {"source": SOURCE, "params": {f"p{i}": [1, 2, 3, 4] for i in range(4)}, "size": {"m": 1}},
            "at most 64",
        ),
        (
            {"source": SOURCE, "params": {"bm": [1]}, "size": {"m": 1}, "bind": {"bm": "q"}},
            "unknown size dimensions",
        ),
        ({"source": SOURCE, "entry": "no_such_entry"}, "not in the catalog"),
    ],
)
def test_invalid_sweeps_are_problems(sweeps_client, body, detail):
    response = sweeps_client.post("/api/sweeps", json=body)
    assert response.status_code == 422
    assert response.headers["content-type"].startswith("application/problem+json")
    assert detail in response.json()["detail"]


def test_unknown_sweep_is_404(sweeps_client):
    response = sweeps_client.get("/api/sweeps/nope")
    assert response.status_code == 404 and response.json()["title"] == "Unknown sweep"


def test_config_events_pass_the_event_schema():
    event = new_event("config", result=judge(3, {"bm": 128, "bk": 128, "bn": 128}), done=1, of=1)
    assert to_json_dict(event)["data"]["result"]["estimated_seconds"] == pytest.approx(384e-6)


def test_a_sweep_whose_results_cannot_be_merged_still_ends_and_says_why(sweeps_client, monkeypatch):
    """A fault of ours while merging the shards' results ends the sweep as an error with its cause (it
    stayed "running" for good, and kept old sweeps from being cleared)."""
    from sandbox.jobs import sweeps as sweep_logic

    def broken(*args, **kwargs):
        raise ValueError("a bug of ours")

    monkeypatch.setattr(sweep_logic, "merge", broken)
    body = {"source": SOURCE, "chip": "v5e", "params": PARAMS, "size": {"m": 4096, "k": 4096, "n": 4096}}
    created = sweeps_client.post("/api/sweeps", json=body)
    assert created.status_code == 201, created.text
    result = wait_done(sweeps_client, created.json()["id"])["result"]
    assert result["status"] == "error" and result["sweep"] is None
    assert "merging the shards' results failed (ValueError: a bug of ours)" in result["summary"]


def test_a_sweep_leaves_a_slot_for_other_users_runs(tmp_path):
    """Shards hold their slots for minutes (60 s + 10 s a config): a sweep that took every slot held
    back every other run for that long. Of two slots it takes one, and another user's run goes on."""
    backend = SweepBackend()
    with make_client(backend, tmp_path, slots=2, queue_size=16, per_client_queue=8) as client:
        try:
            body = {"source": SOURCE + "# block\n", "params": PARAMS, "size": {"m": 4096}}
            sweep = client.post("/api/sweeps", json=body, headers={"X-Playground-Client": "tuner"})
            assert sweep.status_code == 201, sweep.text
            assert sweep.json()["shards"] == 1
            run = client.post(
                "/api/runs", json={"source": "x = 1\n"}, headers={"X-Playground-Client": "other"}
            )
            assert run.status_code == 201, run.text
            end = time.monotonic() + 10
            while (state := client.get(run.json()["url"]).json())["state"] != "done":
                assert time.monotonic() < end, state
                time.sleep(0.01)
            assert state["result"]["status"] != "error", state["result"]
            assert client.get(f"/api/sweeps/{sweep.json()['id']}").json()["state"] != "done"
        finally:
            backend.release.set()
