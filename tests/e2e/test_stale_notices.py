"""Notices go when they stop being true (issue 42, item 6): "Opened shared link …" and "Loaded the
wrong kernel …" spoke of what was open, and stayed on screen after the user opened another entry."""

from __future__ import annotations

from playwright.sync_api import expect

from sandbox.catalog.entries import load_catalog
from tests.e2e.test_classroom import share
from tests.e2e.test_playground import goto


def test_notices_about_what_was_open_go_when_another_entry_opens(page, live_server):
    goto(page, live_server, f"/s/{share(live_server, chip='v6e')}")
    expect(page.locator("#share-notice")).to_contain_text("tiled_matmul on v6e")
    page.select_option("#wrong", "stuck_k_index_map")
    expect(page.locator("#load-notice")).to_contain_text("stuck k index map")

    page.click("#catalog-button")
    page.click("#catalog-dialog .entry-card[data-slug='ring_all_gather']")
    expect(page.locator("#entry-title")).to_have_text(load_catalog().get("ring_all_gather").title)
    expect(page.locator("#share-notice")).to_have_count(0)
    expect(page.locator("#load-notice")).to_have_count(0)

    page.select_option("#wrong", index=1)  # a notice about the entry now open stays
    expect(page.locator("#load-notice")).to_be_visible()
