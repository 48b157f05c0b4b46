"""A share can keep the result of a finished run of exactly its state: trimmed, capped, the server's own."""

from server.store.snapshots import STREAM_CHARS
from tests.api.test_runs import SOURCE, wait_done

STATE = {"source": SOURCE, "entry": "tiled_matmul", "chip": "v6e"}


def finished_run(client, state: dict = STATE) -> str:
    run_id = client.post("/api/runs", json=state).json()["id"]
    wait_done(client, run_id)
    return run_id


def test_share_keeps_the_runs_result(client):
    run_id = finished_run(client)
    created = client.post("/api/shares", json={**STATE, "run": run_id})
    assert created.status_code == 201
    share = client.get(f"/api/shares/{created.json()['id']}").json()
    result = share["result"]
    assert result["status"] == "passed" and result["chip"] == "v6e" and result["stdout"] == "hello\n"
    assert result["trace"] is None and result["lowerings"] == []
    assert share["result_at"].endswith("Z")
    plain = client.post("/api/shares", json=STATE).json()
    assert plain["id"] != created.json()["id"], "a share with a result is another snapshot"
    assert client.get(f"/api/shares/{plain['id']}").json()["result"] is None


def test_a_run_of_other_code_is_not_kept(client):
    run_id = finished_run(client)
    refused = client.post("/api/shares", json={**STATE, "source": SOURCE + "# edited\n", "run": run_id})
    assert refused.status_code == 422 and refused.json()["field"] == "run"
    other_chip = client.post("/api/shares", json={**STATE, "chip": "v5e", "run": run_id})
    assert other_chip.status_code == 422


def test_an_unknown_run_is_not_kept(client):
    refused = client.post("/api/shares", json={**STATE, "run": "no-such-run"})
    assert refused.status_code == 422 and refused.json()["title"] == "No result to keep"


def test_long_output_is_cut_in_the_kept_result(client, backend):
    from sandbox.protocol import InterpretOptions, RunResult, RunStatus
    from server.store.snapshots import trimmed

    long = RunResult(
        status=RunStatus.RAN,
        summary="ran",
        chip="v5p",
        mode="interpret",
        options=InterpretOptions(),
        stdout="x" * 10_000,
    )
    kept = trimmed(long)
    assert len(kept["stdout"]) == STREAM_CHARS and kept["stdout_truncated"] is True
