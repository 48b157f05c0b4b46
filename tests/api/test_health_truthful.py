"""Health stays truthful and discreet (#28 point 7): a runtime whose sandbox cannot start makes
`/api/health` degraded and is marked unavailable in `/api/runtimes`, in the user's terms: the install
paths and folder names of the reason stay in the log."""

from __future__ import annotations

import logging
from pathlib import Path

from fastapi.testclient import TestClient

from sandbox.backends.runtimes import RuntimeBackend
from sandbox.host.runtimes import RuntimeInfo, RuntimeSet
from server.app import create_app
from server.settings import Settings
from tests.api.fakes import FakeBackend
from tests.api.test_runs import wait_done

SECRET_PLACE = "/opt/pallas-playground-runtimes/.jax-0.11.2"
RUNTIMES = RuntimeSet(
    tuple(RuntimeInfo(n, n, "3.12.1", None, Path("/x/python"), None, {}) for n in ("0.11.2", "0.12.0.1"))
)


def make(runtime: RuntimeInfo) -> FakeBackend:
    if runtime.name == "0.11.2":
        raise RuntimeError(
            f"job runtime at {SECRET_PLACE} lacks jax==0.11.2 (rerun scripts/install-job-runtime)"
        )
    return FakeBackend()


def test_a_runtime_that_cannot_start_degrades_health_without_naming_paths(tmp_path, caplog):
    backend = RuntimeBackend("fake", RUNTIMES, make)
    settings = Settings(data_dir=tmp_path, slots=1, rate_per_minute=0)
    with TestClient(create_app(settings, backend=backend, runtimes=RUNTIMES)) as client:
        assert client.get("/api/health").json()["status"] == "ok"
        with caplog.at_level(logging.ERROR):
            run = client.post("/api/runs", json={"source": "x = 1\n", "runtime": "0.11.2"}).json()
            result = wait_done(client, run["id"])["result"]
        assert result["status"] == "error" and "could not start" in result["summary"]
        assert SECRET_PLACE in caplog.text  # the operator still learns why
        health = client.get("/api/health")
        assert health.status_code == 200 and health.json()["status"] == "degraded"
        assert any("jax 0.11.2 cannot run jobs" in p for p in health.json()["problems"])
        listed = {r["name"]: r for r in client.get("/api/runtimes").json()}
        assert (
            listed["0.11.2"]["available"] is False
            and "could not start" in listed["0.11.2"]["unavailable_reason"]
        )
        assert listed["0.12.0.1"]["available"] is True and listed["0.12.0.1"]["unavailable_reason"] is None
        for text in (health.text, client.get("/api/runtimes").text, str(result)):
            assert "/opt" not in text and ".jax-" not in text and "install-job-runtime" not in text


def test_run_on_all_versions_skips_a_runtime_that_cannot_start_with_the_reason(tmp_path):
    backend = RuntimeBackend("fake", RUNTIMES, make)
    settings = Settings(data_dir=tmp_path, slots=1, rate_per_minute=0)
    with TestClient(create_app(settings, backend=backend, runtimes=RUNTIMES)) as client:
        failed = client.post("/api/runs", json={"source": "x = 1\n", "runtime": "0.11.2"}).json()
        wait_done(client, failed["id"])
        matrix = client.post("/api/matrices", json={"source": "x = 2\n"}).json()
        assert [row["runtime"] for row in matrix["rows"]] == ["0.12.0.1"]
        assert [s["runtime"] for s in matrix["skipped"]] == ["0.11.2"]
        assert "could not start" in matrix["skipped"][0]["reason"]
        only = client.post("/api/matrices", json={"source": "x = 3\n", "runtimes": ["0.11.2"]})
        assert only.status_code == 503 and only.headers["content-type"] == "application/problem+json"


def broken_environment(runtime: RuntimeInfo) -> str | None:
    """What the hardened backend's start-up look at a runtime's job environment finds."""
    if runtime.name == "0.11.2":
        return f"job runtime at {SECRET_PLACE} lacks jax==0.11.2 (rerun scripts/install-job-runtime)"
    return None


def test_a_runtime_whose_environment_is_broken_is_unavailable_before_any_run(tmp_path, caplog):
    with caplog.at_level(logging.ERROR):
        backend = RuntimeBackend("fake", RUNTIMES, make, broken_environment)
    assert SECRET_PLACE in caplog.text  # the operator learns why at start-up
    settings = Settings(data_dir=tmp_path, slots=1, rate_per_minute=0)
    with TestClient(create_app(settings, backend=backend, runtimes=RUNTIMES)) as client:
        health = client.get("/api/health")
        assert health.json()["status"] == "degraded", health.json()
        assert any("jax 0.11.2 cannot run jobs" in p for p in health.json()["problems"])
        listed = {r["name"]: r["available"] for r in client.get("/api/runtimes").json()}
        assert listed == {"0.11.2": False, "0.12.0.1": True}
        matrix = client.post("/api/matrices", json={"source": "x = 4\n"}).json()
        assert [s["runtime"] for s in matrix["skipped"]] == ["0.11.2"]
        assert SECRET_PLACE not in health.text + client.get("/api/runtimes").text + str(matrix)
