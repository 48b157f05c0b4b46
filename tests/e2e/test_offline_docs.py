"""The API's pages render with no network beyond the server (issue 42, item 2): TPU VMs and classrooms
are often offline, and a CDN-served Swagger UI is then a blank page."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest


@pytest.fixture
def offline_page(page, live_server):
    """The page with every request to another origin refused (and recorded), as on an offline VM."""
    here = urlsplit(live_server.url).netloc
    page.refused = []

    def route(r):
        if urlsplit(r.request.url).netloc == here:
            r.continue_()
        else:
            page.refused.append(r.request.url)
            r.abort("internetdisconnected")

    page.context.route("**/*", route)
    page.allow_console("net::ERR_INTERNET_DISCONNECTED")  # reported as a console error, if one slips
    return page


def test_swagger_ui_renders_offline(offline_page, live_server):
    page = offline_page
    page.goto(live_server.url + "/docs")
    page.wait_for_selector(".swagger-ui .opblock-summary-path", timeout=20_000)
    assert page.locator(".swagger-ui .title").first.inner_text().startswith("Pallas Playground")
    paths = page.locator(".opblock-summary-path").all_inner_texts()
    assert any(p.replace("\u200b", "") == "/api/runs" for p in paths)
    assert page.refused == []


def test_redoc_renders_offline(offline_page, live_server):
    page = offline_page
    page.goto(live_server.url + "/redoc")
    page.wait_for_selector(".api-content h1", timeout=20_000)
    assert page.locator(".api-content h1").first.inner_text().startswith("Pallas Playground")
    assert page.get_by_text("/api/runs", exact=False).count() > 0
    # Only the "API docs by Redocly" badge in the menu's footer, an image: offline it is just absent.
    assert page.refused in ([], ["https://cdn.redoc.ly/redoc/logo-mini.svg"])
