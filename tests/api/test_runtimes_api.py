"""The runtimes API on an in-process app with a fake sandbox and three made-up runtimes: listing them,
choosing one per run, a run on all of them as a matrix with its first change, the diff of two runs,
and shares that remember (and outlive) their runtime."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from sandbox.host.runtimes import Feature, RuntimeInfo, RuntimeSet
from sandbox.protocol import ErrorInfo, IrText, Job, LoweringCheck, Versions, new_event
from server.app import create_app
from server.settings import Settings
from tests.api.fakes import FakeBackend
from tests.api.test_runs import wait_done

SOURCE = "def kernel(x):\n    return x\n\n\ndef reference(x):\n    return x\n"
MISSING = "`pltpu.TensorCoreMesh` is not in jax 0.10.2; it is in 0.11.2 and later"


def runtime(name: str) -> RuntimeInfo:
    trace = Feature(name == "0.12.0.1", "DMAs" if name == "0.12.0.1" else f"not available on jax {name}")
    return RuntimeInfo(name, name, "3.12.1", None, Path("/x/python"), None, {"trace": trace})


RUNTIMES = RuntimeSet(tuple(runtime(n) for n in ("0.10.2", "0.11.2", "0.12.0.1")))


class VersionedBackend(FakeBackend):
    """Fails on jax 0.10.2 as an old JAX would; reports its runtime's versions and a Mosaic text."""

    def run(self, job: Job, on_event, cancel):
        execution = super().run(job, on_event, cancel)
        if job.role == "reference":
            return execution
        versions = Versions("3.12.1", job.runtime, job.runtime, None, "TPU v5p (interpret mode)")
        mosaic = IrText(f"module {{\n  // jax {job.runtime}\n  func.func @k()\n}}\n", False, 40)
        lowering = LoweringCheck(chip=job.chip, lowers=True, seconds=0.1, mosaic=mosaic)
        extra = [
            new_event("versions", versions=versions, interpret=True),
            new_event("lowering", check=lowering),
        ]
        events = [execution.events[0], *extra, *execution.events[1:]]
        if job.runtime == "0.10.2":
            error = ErrorInfo(
                "AttributeError", MISSING, f"AttributeError: {MISSING}\n", line=3, phase="kernel"
            )
            events = [e for e in events if e.kind != "case_outputs"]
            events.insert(-1, new_event("error", error=error))
        return dataclasses.replace(execution, events=tuple(events))


@pytest.fixture
def client(tmp_path):
    backend = VersionedBackend()
    settings = Settings(data_dir=tmp_path, slots=1, queue_size=8, per_client_queue=8, rate_per_minute=0)
    with TestClient(create_app(settings, backend=backend, runtimes=RUNTIMES)) as c:
        c.backend = backend
        yield c


def wait_matrix(client: TestClient, matrix_id: str) -> dict:
    for _ in range(500):
        matrix = client.get(f"/api/matrices/{matrix_id}").json()
        if matrix["state"] == "done":
            return matrix
        time.sleep(0.01)
    raise AssertionError(f"matrix {matrix_id} not done: {matrix}")


def test_runtimes_are_listed_newest_first_with_what_each_supports(client):
    listed = client.get("/api/runtimes").json()
    assert [r["name"] for r in listed] == ["0.12.0.1", "0.11.2", "0.10.2"]
    assert [r["default"] for r in listed] == [True, False, False]
    assert listed[2]["features"]["trace"] == {"available": False, "detail": "not available on jax 0.10.2"}


def test_a_run_goes_to_the_runtime_it_names_and_to_the_newest_by_default(client):
    for body, expected in (({}, "0.12.0.1"), ({"runtime": "0.11.2"}, "0.11.2")):
        created = client.post("/api/runs", json={"source": SOURCE, **body})
        assert created.status_code == 201, created.text
        result = wait_done(client, created.json()["id"])["result"]
        assert client.backend.jobs[-1].runtime == result["versions"]["jax"] == expected


def test_an_unknown_runtime_is_a_problem_naming_the_installed_ones(client):
    refused = client.post("/api/runs", json={"source": SOURCE, "runtime": "0.4.1"})
    assert refused.status_code == 422
    assert (
        refused.json()["detail"]
        == "jax 0.4.1 is not installed on this server; installed: 0.12.0.1, 0.11.2, 0.10.2"
    )


def test_run_on_all_versions_marks_where_the_outcome_changes(client):
    created = client.post("/api/matrices", json={"source": SOURCE, "chip": "v5p"})
    assert created.status_code == 201, created.text
    matrix = wait_matrix(client, created.json()["id"])
    assert [r["runtime"] for r in matrix["rows"]] == ["0.10.2", "0.11.2", "0.12.0.1"]
    assert [r["status"] for r in matrix["rows"]] == ["error", "passed", "passed"]
    assert matrix["rows"][1]["compiler"] == {"v5p": True}
    assert matrix["changes"] == [
        {
            "older": "0.10.2",
            "newer": "0.11.2",
            "text": f"fails up to 0.10.2, passes from 0.11.2: {matrix['rows'][0]['summary']}",
        }
    ]
    assert matrix["verdict"].startswith(
        "fails up to 0.10.2, passes from 0.11.2: error in kernel: AttributeError: `pltpu"
    )
    assert sorted(j.runtime for j in client.backend.jobs) == ["0.10.2", "0.11.2", "0.12.0.1"]
    assert all(set(j.lower_chips) >= {"v5e", "v5p", "v6e", "tpu7x"} for j in client.backend.jobs)


def test_the_diff_of_two_runs_shows_status_errors_and_the_ir(client):
    created = client.post("/api/matrices", json={"source": SOURCE, "runtimes": ["0.12.0.1", "0.10.2"]})
    matrix = wait_matrix(client, created.json()["id"])
    assert [r["runtime"] for r in matrix["rows"]] == ["0.10.2", "0.12.0.1"]
    diff = client.get(
        f"/api/matrices/{matrix['id']}/diff", params={"older": "0.10.2", "newer": "0.12.0.1"}
    ).json()
    fields = {f["name"]: f for f in diff["fields"]}
    assert fields["status"] == {"name": "status", "older": "error", "newer": "passed", "changed": True}
    assert fields["error"]["older"] == f"AttributeError: {MISSING}" and fields["error"]["newer"] == "—"
    assert "-  // jax 0.10.2\n+  // jax 0.12.0.1" in diff["mosaic_diff"]
    assert diff["mosaic_note"] == "differs in 2 lines"
    missing = client.get(
        f"/api/matrices/{matrix['id']}/diff", params={"older": "0.11.2", "newer": "0.12.0.1"}
    )
    assert missing.status_code == 422


def test_a_share_remembers_its_runtime_and_opens_on_the_nearest_once_it_is_gone(client, tmp_path):
    made = client.post("/api/shares", json={"source": SOURCE, "runtime": "0.11.2"}).json()
    shared = client.get(f"/api/shares/{made['id']}").json()
    assert shared["versions"]["jax"] == shared["runtime"] == shared["run_on"] == "0.11.2"
    assert shared["runtime_note"] == ""
    newer = RuntimeSet(tuple(runtime(n) for n in ("0.10.2", "0.12.0.1")))
    settings = Settings(data_dir=tmp_path, slots=1)
    with TestClient(create_app(settings, backend=FakeBackend(), runtimes=newer)) as later:
        reopened = later.get(f"/api/shares/{made['id']}").json()
    assert reopened["runtime"] == "0.11.2" and reopened["run_on"] == "0.12.0.1"
    assert reopened["runtime_note"] == (
        "This link was made on jax 0.11.2, which this server does not have; it opens on the nearest "
        "installed version, jax 0.12.0.1."
    )


def test_the_catalog_record_says_where_each_solution_passes(client):
    record = client.get("/api/runtimes/catalog").json()
    assert record["tiled_matmul_pallas_call"]["0.12.0.1"] == {"status": "passed", "summary": ""}
