"""The page leads to the API docs and the agents' setup (issue 42, item 6): the ? sheet (help) links
/docs and /redoc, and gives the MCP server's address on this host as a config to copy."""

from __future__ import annotations

import json

from playwright.sync_api import expect

from tests.e2e.test_playground import goto


def test_the_help_sheet_links_the_api_docs_and_gives_the_agents_config(open_page, live_server):
    page = open_page(permissions=["clipboard-read", "clipboard-write"])
    goto(page, live_server, "/?scratch")
    page.click("#shortcuts-button")
    sheet = page.locator("#shortcuts-dialog")
    expect(sheet).to_be_visible()
    config = json.loads(page.input_value("#help-mcp"))
    assert config == {"mcpServers": {"pallas-playground": {"type": "http", "url": f"{live_server.url}/mcp"}}}
    assert page.inner_text("#help-client") == f'pallas_playground.Client("{live_server.url}")'
    sheet.get_by_role("button", name="Copy").click()
    expect(sheet.locator(".copy-status")).to_have_text("Copied.")
    assert json.loads(page.evaluate("() => navigator.clipboard.readText()")) == config
    assert sheet.get_by_role("link", name="ReDoc").get_attribute("href") == "/redoc"

    with page.context.expect_page() as opened:
        sheet.get_by_role("link", name="HTTP API").click()
    docs = opened.value
    docs.wait_for_selector(".swagger-ui .opblock-summary-path", timeout=20_000)
    assert docs.url == f"{live_server.url}/docs"
