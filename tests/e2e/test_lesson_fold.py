"""Two lesson views the class day found wrong: an embedded lesson's note box too short for its text
(29 px for 65 px, in a frame of a course page), and the links "Create the lesson link" makes shown
below the fold of the builder dialog."""

from __future__ import annotations

import httpx
from playwright.sync_api import expect

from tests.e2e.test_playground import goto

NOTE = (
    "Look at the **index map** first.\n\nThen the block shape: is it a multiple of (8, 128)?\n\nRun it twice."
)


def test_an_embedded_lessons_note_shows_all_its_text(open_page, live_server):
    lesson = httpx.post(
        f"{live_server.url}/api/lessons",
        json={"title": "Tiles", "steps": [{"source": "x = 1\n", "chip": "v5e", "note": NOTE}]},
    ).json()
    frame = open_page(viewport={"width": 480, "height": 400})  # a frame in a course page
    frame.goto(f"{live_server.url}/embed/l/{lesson['id']}")
    frame.wait_for_selector("html[data-ready='1'] #embed-note p")
    frame.click("#run")  # the result below the editor took the note's room
    frame.wait_for_selector(
        "#result #status:not([data-status=running]):not([data-status=queued])", timeout=60_000
    )
    box = frame.evaluate(
        "() => { const n = document.querySelector('#embed-note'); return [n.clientHeight, n.scrollHeight]; }"
    )
    assert box[1] > 50 and box[0] >= box[1], f"the note box is {box[0]} px tall for {box[1]} px of text"


def test_the_lesson_links_come_into_view_when_made(open_page, live_server):
    page = open_page(viewport={"width": 1280, "height": 720})
    goto(page, live_server, "/?scratch")
    page.click("#lesson-button")
    page.click("#lesson-clear")
    for _ in range(4):  # enough steps that the dialog scrolls
        page.click("#lesson-add")
    page.click("#lesson-create")
    expect(page.locator("#lesson-url")).not_to_have_value("")
    page.wait_for_timeout(300)  # a smooth scroll, if any, ends
    seen = page.evaluate(
        """() => { const d = document.querySelector('#lesson-dialog').getBoundingClientRect();
                   const l = document.querySelector('#lesson-links').getBoundingClientRect();
                   return [l.top, l.bottom, d.top, d.bottom]; }"""
    )
    top, bottom, dialog_top, dialog_bottom = seen
    assert dialog_top <= top and bottom <= dialog_bottom, (
        f"links at {top:.0f}–{bottom:.0f} px, dialog shows {dialog_top:.0f}–{dialog_bottom:.0f}"
    )
