"""The first visit loads what it shows (issue 42, item 7: the first page load was 257.6 KB against a
goal of 250 KB): the lesson player and the class session's part (lesson.js, classroom.js,
classboard.js) come with the first lesson opened, the run history (history.js) with the first result
or its tab, a share's measurements (measured.js) with the first share, not with every page."""

from __future__ import annotations

import httpx
from playwright.sync_api import expect

from tests.e2e.test_playground import goto

LESSON_ONLY = ("/js/lesson.js", "/js/classroom.js", "/js/classboard.js")
LATER = (*LESSON_ONLY, "/js/history.js", "/js/measured.js")


def loaded(page) -> list[str]:
    return page.evaluate(
        "() => performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname)"
    )


def test_the_lesson_modules_come_with_the_first_lesson_not_the_first_page(page, live_server):
    goto(page, live_server, "/?entry=tiled_matmul")
    page.wait_for_load_state("networkidle")
    assert [p for p in loaded(page) if p.endswith(LATER)] == []

    steps = [{"source": "x = 1\n", "chip": "v5e", "note": "**One** step."}]
    lesson = httpx.post(f"{live_server.url}/api/lessons", json={"title": "Lazy", "steps": steps}).json()
    goto(page, live_server, lesson["url"])
    expect(page.locator("#lesson-note strong")).to_have_text("One")
    expect(page.locator("#class-start")).to_be_visible()
    assert {p.rsplit("/js/", 1)[1] for p in loaded(page) if p.endswith(LESSON_ONLY)} == {
        "lesson.js",
        "classroom.js",
        "classboard.js",
    }


def test_the_history_comes_with_its_tab(page, live_server):
    goto(page, live_server, "/?scratch")
    page.click("#tab-history")
    expect(page.locator("#history-empty")).to_be_visible()
    assert any(p.endswith("/js/history.js") for p in loaded(page))
