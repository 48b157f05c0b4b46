"""Issue 41, attacking the run pipeline through its inputs (a sixth round, on the API's side).

- "Run on all versions" read a cancelled run as its version's outcome: cancelling the 0.11.2 run of
  a matrix made the verdict "fails up to 0.10.2, was cancelled from 0.11.2: …; was cancelled up to
  0.11.2, passes from 0.12.0.1", two changes that no JAX version made. A cancelled row is now read
  across, and the verdict says where no outcome was had.
"""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from sandbox.protocol import RunStatus
from sandbox.results.matrix import MatrixRow, changes, verdict
from server.app import create_app
from server.settings import Settings
from tests.api.test_runtimes_api import RUNTIMES, SOURCE, VersionedBackend, wait_matrix


@pytest.fixture
def versions(tmp_path):
    """One slot and three made-up runtimes (`tests.api.test_runtimes_api`), 0.10.2 failing."""
    backend = VersionedBackend()
    settings = Settings(data_dir=tmp_path, slots=1, queue_size=8, per_client_queue=8, rate_per_minute=0)
    with TestClient(create_app(settings, backend=backend, runtimes=RUNTIMES)) as client:
        yield client, backend


def test_a_cancelled_row_of_a_matrix_is_no_change_of_its_version(versions):
    client, backend = versions
    created = client.post("/api/matrices", json={"source": SOURCE + "# block\n", "chip": "v5p"})
    assert created.status_code == 201, created.text
    rows = {r["runtime"]: r["run_id"] for r in created.json()["rows"]}
    assert client.delete(f"/api/runs/{rows['0.11.2']}").status_code == 200
    backend.release.set()
    matrix = wait_matrix(client, created.json()["id"])
    assert [r["status"] for r in matrix["rows"]] == ["error", "cancelled", "passed"]
    assert [(c["older"], c["newer"]) for c in matrix["changes"]] == [("0.10.2", "0.12.0.1")]
    assert matrix["verdict"].startswith("fails up to 0.10.2, passes from 0.12.0.1: error in kernel")
    assert matrix["verdict"].endswith(" (cancelled on 0.11.2: no outcome there)")


def test_a_matrix_read_across_its_cancelled_rows():
    def row(runtime: str, status: RunStatus) -> MatrixRow:
        return MatrixRow(runtime, f"run-{runtime}", status, summary=f"{status.value} on {runtime}")

    passed_around = [
        row("0.10.2", RunStatus.PASSED),
        row("0.11.2", RunStatus.CANCELLED),
        row("0.12.0.1", RunStatus.PASSED),
    ]
    assert changes(passed_around) == []
    assert verdict(passed_around) == (
        "passes on every JAX version that finished (0.10.2 to 0.12.0.1): passed on 0.10.2"
        " (cancelled on 0.11.2: no outcome there)"
    )
    all_cancelled = [row("0.10.2", RunStatus.CANCELLED), row("0.11.2", RunStatus.CANCELLED)]
    assert changes(all_cancelled) == []
    assert verdict(all_cancelled) == "was cancelled on every JAX version here (0.10.2, 0.11.2)"
    plain = [row("0.10.2", RunStatus.MISMATCH), row("0.12.0.1", RunStatus.PASSED)]
    assert verdict(plain) == "mismatches up to 0.10.2, passes from 0.12.0.1: mismatch on 0.10.2"
