"""Every route that runs code refuses a bad request the same way: routes × refusals as one table.

Runs, matrices and sweeps all ask `server.submit.check_request` before they build a job; before that
was one function, sweeps had drifted (no list of known entries, `tpu` refused with Redis workers, no
wrong-chip check, another 413 text). A refusal queues nothing.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from sandbox.catalog.entries import load_catalog
from server.app import create_app
from server.settings import Settings
from server.submit import check_request
from tests.api.fakes import FakeBackend

ROUTES = ("/api/runs", "/api/matrices", "/api/sweeps")
SOURCE = "def kernel(x):\n    return x\n"
SWEEP = {"params": {"bm": [128]}, "size": {"m": 256}}

# name → (settings, request fields, status, problem title, words the detail must contain)
REFUSALS = {
    "unknown entry": (
        {},
        {"entry": "no_such_entry"},
        422,
        "Unknown entry",
        ["no_such_entry", "known:", "tiled_matmul"],
    ),
    "tpu without a TPU": ({"tpu": "no"}, {"mode": "tpu"}, 422, "No TPU", ["no TPU", "'interpret'"]),
    "the wrong chip": (
        {"tpu": "v5e"},
        {"mode": "tpu", "chip": "v6e"},
        422,
        "Wrong chip",
        ["a v5e, not a v6e"],
    ),
    "a source too large": (
        {"source_bytes": 64},
        {"source": "#" * 65},
        413,
        "Source too large",
        ["65 bytes", "64 bytes"],
    ),
}


def body(route: str, fields: dict) -> dict:
    base = {"source": SOURCE, "chip": "v5e", **(SWEEP if route == "/api/sweeps" else {})}
    return {**base, **fields}


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("refusal", REFUSALS)
def test_every_route_refuses_the_same_way(tmp_path, route, refusal):
    settings, fields, status, title, words = REFUSALS[refusal]
    backend = FakeBackend()
    app = create_app(Settings(data_dir=tmp_path, slots=1, rate_per_minute=0, **settings), backend=backend)
    with TestClient(app) as client:
        response = client.post(route, json=body(route, fields))
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    problem = response.json()
    assert problem["title"] == title
    for word in words:
        assert word in problem["detail"], (word, problem["detail"])
    assert backend.jobs == []  # nothing was queued


def test_tpu_mode_with_redis_workers_is_left_to_the_workers(tmp_path):
    # With Redis, a `tpu` worker elsewhere may serve the run: the web server has no TPU to look at.
    settings = Settings(data_dir=tmp_path, tpu="no", redis_url="redis://127.0.0.1:1/0")
    catalog = load_catalog(settings.catalog_dir)
    assert check_request(settings, catalog, entry=None, source=SOURCE, chip="v5e", mode="tpu") is None


@pytest.mark.parametrize(
    ("settings", "chip", "title", "words"),
    [
        ({"tpu": "no"}, "v5e", "No TPU", ["mode 'both'", "no TPU"]),
        ({"tpu": "v5e"}, "v6e", "Wrong chip", ["a v5e, not a v6e"]),
    ],
)
def test_a_run_in_both_modes_needs_this_servers_chip(tmp_path, settings, chip, title, words):
    """Mode `both` runs natively too (`sandbox.backends.both`): refused as `tpu` is, on runs (and MCP)."""
    backend = FakeBackend()
    app = create_app(Settings(data_dir=tmp_path, slots=1, rate_per_minute=0, **settings), backend=backend)
    with TestClient(app) as client:
        response = client.post("/api/runs", json={"source": SOURCE, "chip": chip, "mode": "both"})
    assert response.status_code == 422 and response.json()["title"] == title, response.text
    assert all(word in response.json()["detail"] for word in words), response.json()["detail"]
    assert backend.jobs == []


@pytest.mark.parametrize("seed", [-1, 2**32, 10**400])
def test_a_random_seed_numpy_cannot_take_is_refused_before_any_job(tmp_path, seed):
    backend = FakeBackend()
    app = create_app(Settings(data_dir=tmp_path, slots=1, rate_per_minute=0), backend=backend)
    with TestClient(app) as client:
        response = client.post("/api/runs", json=body("/api/runs", {"options": {"random_seed": seed}}))
    assert response.status_code == 422 and response.headers["content-type"].startswith(
        "application/problem+json"
    )
    assert "random_seed" in response.text and backend.jobs == []
