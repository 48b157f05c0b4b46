"""Issue 41, item 5: what a share keeps from its run is the job's word; its notebook and its
measurements show only what the server checked.

The notebook's markdown head carried the estimate's chip label, which the job's own process set;
now it is built from the share's own fields and escaped. The measurements list answered 500 for a
kept estimate that did not fit its schema; now it never does. One address cannot fill a share
with made-up lines.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import nbformat
import pytest
from fastapi.testclient import TestClient

from sandbox.catalog.entries import load_catalog
from server.notebook.build import SharedKernel, notebook
from server.store import measurements
from server.store.shares import ShareRecord, share_store
from server.store.sqlite import open_database
from tests.api.test_notebooks import ESTIMATE, SOURCE, line, make

HOSTILE_LABEL = "v5e](javascript:alert(1)) <img src=x onerror=alert(1)> **forged**"


@pytest.fixture
def client(tmp_path) -> Iterator[TestClient]:
    with make(tmp_path, store_saves_per_minute=0) as c:
        yield c


def kept(tmp_path, result: dict | None, chip: str = "v5e", jax: str = "0.12.0.1") -> str:
    database = open_database(tmp_path)
    record = ShareRecord(SOURCE, "tiled_matmul", chip, {}, {"jax": jax}, result, 1.0)
    share = share_store(database).put(record)[0].id
    database.close()
    return share


def head(client: TestClient, share: str, **headers: str) -> str:
    response = client.get(f"/api/shares/{share}/notebook", headers=headers)
    assert response.status_code == 200, response.text
    return nbformat.reads(response.text, as_version=4).cells[0].source


def test_the_notebook_head_shows_a_checked_estimate_on_the_shares_chip(client, tmp_path):
    text = head(client, kept(tmp_path, {"status": "passed", "estimate": ESTIMATE}))
    assert "estimated **1.8 ms** on a TPU v5e for the first case (compute-bound)" in text
    assert "Its kept result there: **passed**" in text


@pytest.mark.parametrize(
    "result",
    [
        {"status": "passed", "estimate": {**ESTIMATE, "chip": HOSTILE_LABEL}},
        {"status": "passed", "estimate": {**ESTIMATE, "bound": HOSTILE_LABEL}},
        {"status": HOSTILE_LABEL, "estimate": {**ESTIMATE, "seconds": HOSTILE_LABEL}},
    ],
    ids=["chip", "bound", "status-and-seconds"],
)
def test_the_notebook_head_carries_nothing_the_job_set(client, tmp_path, result):
    text = head(client, kept(tmp_path, result, jax=HOSTILE_LABEL))
    for forged in ("javascript:", "<img", "**forged**", "onerror"):
        assert forged not in text.replace("\\", ""), text  # not even unescaped away: left out
    assert "for a TPU **v5e** on JAX **0\\.12\\.0\\.1**" in text  # the runtime's own version instead


def test_a_page_address_from_a_forged_host_header_is_no_link_in_the_notebook():
    # The page's address comes from the request's Host header: a forged one is shown as text.
    entry = load_catalog().get("tiled_matmul")
    forged = "http://evil.example>[x](javascript:alert(1))</s/abc"
    made = SharedKernel("abc", forged, SOURCE, entry, "v5e", {}, "0.12.0.1", 1)
    text = "\n".join(c.source for c in notebook(made).cells if c.cell_type == "markdown")
    assert "](javascript:" not in text and "<http" not in text and "\\]\\(javascript\\:" in text
    assert (
        "<http://x.example:8000/s/abc>"
        in notebook(replace(made, page_url="http://x.example:8000/s/abc")).cells[0].source
    )


@pytest.mark.parametrize(
    "estimate",
    [
        {**ESTIMATE, "chip": HOSTILE_LABEL},
        {**ESTIMATE, "seconds": "soon"},
        {**ESTIMATE, "seconds": -1.0},
        [1, 2, 3],
        "1.8 ms",
    ],
    ids=["chip", "seconds-text", "seconds-negative", "list", "text"],
)
def test_the_measurements_list_never_answers_500(client, tmp_path, estimate):
    share = kept(tmp_path, {"status": "passed", "estimate": estimate})
    added = client.post(f"/api/shares/{share}/measurements", json={"line": line(share)})
    assert added.status_code == 201, added.text
    assert added.json()["text"] == "measured on a TPU v5e (user-reported): 1.92 ms"
    listed = client.get(f"/api/shares/{share}/measurements")
    assert listed.status_code == 200, listed.text
    assert (listed.json()["estimate_chip"], listed.json()["estimate_seconds"]) == (None, None)
    assert len(listed.json()["measurements"]) == 1


def test_one_address_cannot_fill_a_share(client, tmp_path, monkeypatch):
    monkeypatch.setattr(measurements, "PER_ADDER", 3)
    share = kept(tmp_path, None)
    answers = [
        client.post(f"/api/shares/{share}/measurements", json={"line": line(share, device_seconds=k * 1e-3)})
        for k in range(1, 5)
    ]
    assert [a.status_code for a in answers] == [201, 201, 201, 429]
    assert answers[-1].json()["title"] == "Too many measurements"
    again = client.post(f"/api/shares/{share}/measurements", json={"line": line(share, device_seconds=1e-3)})
    assert again.status_code == 200  # one it added before is no new measurement
