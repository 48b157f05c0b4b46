"""A share's notebook (`GET /api/shares/{id}/notebook`) and the measurements it brings back
(`/api/shares/{id}/measurements`), with the fake sandbox: the notebook is valid nbformat v4 carrying
the share's kernel, chip and JAX; a TPU measurement line shows on the share beside the estimate as
user-reported; malformed, oversized, interpret-mode, other-kernel and other-share lines are 422s
that say why; adding is a save under the store quotas."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator

import nbformat
import pytest
from fastapi.testclient import TestClient

from server.app import create_app
from server.settings import Settings
from server.store.shares import ShareRecord, share_store
from server.store.sqlite import open_database
from tests.api.fakes import FakeBackend

SOURCE = "def matmul(x, y):\n    return x @ y\n"
ESTIMATE = {"chip": "v5e", "seconds": 0.0018, "bound": "compute", "roofline_seconds": 0.0017}


def make(tmp_path, **values) -> TestClient:
    return TestClient(create_app(Settings(data_dir=tmp_path, **values), backend=FakeBackend()))


@pytest.fixture
def client(tmp_path) -> Iterator[TestClient]:
    with make(tmp_path) as c:
        yield c


def shared(client: TestClient, source: str = SOURCE) -> str:
    response = client.post("/api/shares", json={"source": source, "entry": "tiled_matmul", "chip": "v5e"})
    assert response.status_code == 201
    return response.json()["id"]


def line(share: str, source: str = SOURCE, **changes) -> str:
    values = {
        "pallas_playground_measurement": 1,
        "share": share,
        "chip": "v5e",
        "device_kind": "TPU v5 lite",
        "interpret": False,
        "jax": "0.12.0.1",
        "jaxlib": "0.12.0.1",
        "kernel_sha256": hashlib.sha256(source.encode()).hexdigest(),
        "case": "f32 256x256x256",
        "verdict": "passed",
        "device_seconds": 0.00192,
        "wall_seconds": 0.0031,
        "method": "profiler",
    }
    return json.dumps({**values, **changes}, separators=(",", ":"))


def test_the_notebook_is_nbformat_v4_with_the_shares_kernel(client):
    share = shared(client)
    response = client.get(f"/api/shares/{share}/notebook")
    assert response.status_code == 200
    assert response.headers["content-type"] == "application/x-ipynb+json"
    assert f'filename="pallas-{share}.ipynb"' in response.headers["content-disposition"]
    book = nbformat.reads(response.text, as_version=4)
    nbformat.validate(book)
    assert book.metadata["pallas_playground"] == {"share": share, "chip": "v5e", "jax": "0.12.0.1"}
    code = "\n".join(cell.source for cell in book.cells if cell.cell_type == "code")
    assert "KERNEL_SOURCE = r'''def matmul(x, y):" in code
    assert "JAX_VERSION = '0.12.0.1'" in code and "CHIP_KIND = 'TPU v5e'" in code
    assert "def make_inputs(case)" in code  # the entry's reference comes along
    assert f"http://testserver/s/{share}" in book.cells[0].source


def test_a_measurement_line_shows_on_the_share_as_user_reported(client, tmp_path):
    database = open_database(tmp_path)
    kept = ShareRecord(
        SOURCE,
        "tiled_matmul",
        "v5e",
        {},
        {"jax": "0.12.0.1"},
        {"status": "passed", "estimate": ESTIMATE},
        1.0,
    )
    share = share_store(database).put(kept)[0].id
    database.close()
    added = client.post(f"/api/shares/{share}/measurements", json={"line": line(share) + "\n"})
    assert added.status_code == 201, added.text
    assert added.json()["text"] == "measured on a TPU v5e (user-reported): 1.92 ms; estimated 1.80 ms"
    assert added.json()["label"] == "user-reported"
    again = client.post(f"/api/shares/{share}/measurements", json={"line": line(share)})
    assert again.status_code == 200 and again.json()["id"] == added.json()["id"]
    listed = client.get(f"/api/shares/{share}/measurements").json()
    assert listed["estimate_seconds"] == 0.0018 and listed["estimate_chip"] == "v5e"
    assert [m["text"] for m in listed["measurements"]] == [added.json()["text"]]


@pytest.mark.parametrize(
    ("pasted", "says"),
    [
        ("not json at all", "the line is not JSON"),
        ('{"some": "json"}', "not a measurement line"),
        ("x" * 3000, "the line is 3,000 characters; a measurement line is at most 2,048"),
        ("interpret", "measured in interpret mode"),
        ("other kernel", "another kernel than this share's"),
        ("other share", "measured share 'AAAAAAAAAAA', not this one"),
        ("mismatch", "a time of wrong outputs is not taken"),
        ("bad chip", "chip: Input should be"),
    ],
)
def test_a_line_that_is_not_a_measurement_of_this_share_is_a_clear_422(client, pasted, says):
    share = shared(client)
    lines = {
        "interpret": line(share, interpret=True, device_seconds=None, method="wall_clock"),
        "other kernel": line(share, source="def matmul(x, y):\n    return y @ x\n"),
        "other share": line("AAAAAAAAAAA"),
        "mismatch": line(share, verdict="mismatch"),
        "bad chip": line(share, chip="v9"),
    }
    response = client.post(f"/api/shares/{share}/measurements", json={"line": lines.get(pasted, pasted)})
    assert response.status_code == 422
    assert response.headers["content-type"] == "application/problem+json"
    assert says in response.json()["detail"]
    assert client.get(f"/api/shares/{share}/measurements").json()["measurements"] == []


def test_measurements_are_saves_under_the_store_quotas(tmp_path):
    with make(tmp_path, store_saves_burst=2, store_saves_per_minute=1) as client:
        share = shared(client)  # one save
        assert client.post(f"/api/shares/{share}/measurements", json={"line": line(share)}).status_code == 201
        refused = client.post(f"/api/shares/{share}/measurements", json={"line": line(share, case="other")})
    assert refused.status_code == 429 and int(refused.headers["retry-after"]) >= 1


def test_an_unknown_share_has_no_notebook(client):
    response = client.get("/api/shares/AAAAAAAAAAA/notebook")
    assert response.status_code == 404 and response.json()["title"] == "Unknown share"
