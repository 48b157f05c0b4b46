"""The teacher keeps the class (issue 42, item 3): after "Start a class" the teacher link is kept in
this browser, shown and copyable on the teacher's page (never on the projector), the lesson page leads
back to the teacher view, and on another device the teacher re-opens it with the link or its token."""

from __future__ import annotations

import httpx
from playwright.sync_api import expect

STEPS = [{"source": "def kernel(x):\n    return x\n", "chip": "v5e", "note": "One step."}]


def start_class(page, live_server) -> tuple[str, str]:
    """A lesson made over HTTP, opened in `page`, and a class started from it: (lesson id, class id)."""
    lesson = httpx.post(f"{live_server.url}/api/lessons", json={"title": "Copies", "steps": STEPS}).json()
    page.goto(f"{live_server.url}/l/{lesson['id']}")
    page.click("html[data-ready='1'] #class-start")
    page.wait_for_url("**/t/*")
    page.wait_for_selector("html[data-ready='1'] #teacher-code:not(:empty)")
    return lesson["id"], page.url.rsplit("/", 1)[1]


def test_the_teacher_link_is_kept_shown_and_copyable(open_page, live_server):
    page = open_page(permissions=["clipboard-read", "clipboard-write"])
    lesson, class_id = start_class(page, live_server)
    assert "token" not in page.url, "the token stays out of the address bar (a projector shows it)"
    page.click("#teacher-link-box summary")
    link = page.input_value("#teacher-link")
    assert link.startswith(f"{live_server.url}/t/{class_id}#token=") and len(link.split("=", 1)[1]) >= 16
    page.click("#teacher-link-copy")
    expect(page.locator("#teacher-link-box .copy-status")).to_have_text("Copied.")
    assert page.evaluate("() => navigator.clipboard.readText()") == link

    page.goto(f"{live_server.url}/t/{class_id}?present=1")  # the projector: the link is never shown
    page.wait_for_selector("html[data-ready='1'] #teacher-code:not(:empty)")
    assert page.is_hidden("#teacher-link-box")

    page.goto(f"{live_server.url}/l/{lesson}")  # back on the lesson page: a way back to the class
    code = httpx.get(
        f"{live_server.url}/api/classes/{class_id}/progress",
        headers={"Authorization": f"Bearer {link.split('#token=')[1]}"},
    ).json()["code"]
    back = page.locator("html[data-ready='1'] #class-teacher")
    expect(back).to_have_text(f"Class {code}: teacher view")
    back.click()
    page.wait_for_url(f"**/t/{class_id}")
    expect(page.locator("#teacher-code")).to_have_text(code)


def test_the_teacher_reopens_the_class_on_another_device(open_page, live_server):
    first = open_page()
    _, class_id = start_class(first, live_server)
    first.click("#teacher-link-box summary")
    link = first.input_value("#teacher-link")
    code = first.inner_text("#teacher-code")

    other = open_page()  # another device: nothing kept, and the address has no token
    other.allow_console("status of 403")
    other.goto(f"{live_server.url}/t/{class_id}")
    other.wait_for_selector("html[data-ready='1'] #teacher-reopen")
    other.fill("#teacher-reopen-link", "not-the-token")
    other.click("#teacher-reopen button[type=submit]")
    expect(other.locator("#teacher-problem")).to_be_visible()
    expect(other.locator("#teacher-reopen")).to_be_visible()

    other.fill("#teacher-reopen-link", link)  # the whole link, as copied
    other.click("#teacher-reopen button[type=submit]")
    expect(other.locator("#teacher-code")).to_have_text(code)
    assert other.is_hidden("#teacher-reopen"), other.inner_text("#teacher-reopen")
    assert other.is_hidden("#teacher-problem"), other.inner_text("#teacher-problem")
    other.reload()  # kept on this device now
    expect(other.locator("#teacher-code")).to_have_text(code)

    third = open_page()  # the bare token works as well
    third.goto(f"{live_server.url}/t/{class_id}")
    third.fill("html[data-ready='1'] #teacher-reopen-link", link.split("#token=")[1])
    third.click("#teacher-reopen button[type=submit]")
    expect(third.locator("#teacher-code")).to_have_text(code)
