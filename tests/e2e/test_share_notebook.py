"""A share's page offers its notebook and shows the measurements brought back from it, labelled
user-reported; a pasted line that is not a measurement is refused with the server's reason."""

from __future__ import annotations

import httpx

from tests.api.test_notebooks import line
from tests.e2e.test_playground import goto

SOURCE = "# measured\ndef matmul(x, y):\n    return x @ y\n"


def test_a_share_offers_its_notebook_and_lists_measurements(page, live_server):
    share = httpx.post(
        f"{live_server.url}/api/shares", json={"source": SOURCE, "entry": "tiled_matmul", "chip": "v5e"}
    ).json()["id"]
    measured = line(share, SOURCE, wall_seconds=None)
    added = httpx.post(f"{live_server.url}/api/shares/{share}/measurements", json={"line": measured})
    assert added.status_code == 201

    goto(page, live_server, f"/s/{share}")
    page.wait_for_selector("#share-measured li")
    link = page.locator("#share-measured a:has-text('Open as notebook')")
    assert link.get_attribute("href") == f"/api/shares/{share}/notebook"
    assert page.inner_text("#share-measured li") == "measured on a TPU v5e (user-reported): 1.92 ms"

    page.allow_console("status of 422")
    page.click("#share-measured summary")
    page.fill("#share-measured textarea", "not a line")
    page.click("#share-measured button:has-text('Add')")
    page.wait_for_selector("#notices :text('The measurement was not added')")
    assert "the line is not JSON" in page.inner_text("#notices")

    goto(page, live_server, "/?entry=tiled_matmul")
    assert page.locator("#share-measured").is_hidden()
