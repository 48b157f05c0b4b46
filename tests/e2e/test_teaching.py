"""Teaching with the playground in a real browser: an exercise from its template to the solution, a
teacher revising a lesson while a student is on it, copy buttons and embed snippets, a lesson
embedded in a course page on another origin."""

from __future__ import annotations

import re

import httpx
from playwright.sync_api import expect

from sandbox.catalog.entries import load_catalog
from tests.e2e.test_classroom import course_site
from tests.e2e.test_playground import SCRATCH_PRINTS_MARKUP, goto, run_and_wait, set_source, source

CATALOG = load_catalog()
TILED = CATALOG.get("tiled_matmul")


def test_template_stops_at_a_hole_then_the_solution_passes(page, live_server):
    goto(page, live_server, "/?entry=tiled_matmul")
    assert source(page) == TILED.template_source, "the page opens on the exercise, not the answer"
    assert run_and_wait(page) == "error"
    message = page.inner_text("#error-section .error-message")
    hole = re.search(r"TODO at line (\d+): (.+)", message)
    assert hole and "index map" in hole.group(2), message
    assert page.get_attribute(".cm-error-line", "data-error-line") == hole.group(1), (
        "the hole's line is marked"
    )
    assert "todo(" in TILED.template_source.splitlines()[int(hole.group(1)) - 1]

    page.click("#solution")
    expect(page.locator("#confirm-dialog")).to_be_visible()
    page.click("#confirm-no")
    assert source(page) == TILED.template_source, "saying no keeps the learner's code"
    page.click("#solution")
    page.click("#confirm-yes")
    assert source(page) == TILED.solution_source
    assert run_and_wait(page) == "passed"
    page.click("#reset")
    assert source(page) == TILED.template_source
    page.click("#solution")  # asked once per entry: not again
    assert page.locator("#confirm-dialog[open]").count() == 0 and source(page) == TILED.solution_source


def test_wrong_kernel_keeps_its_secret_behind_the_spoiler(page, live_server):
    goto(page, live_server, "/?entry=tiled_matmul")
    page.select_option("#wrong", "stuck_k_index_map")
    assert "WRONG" not in source(page)
    spoiler = page.locator("#load-notice details.why")
    expect(spoiler).to_be_visible()
    assert not spoiler.locator("p").is_visible(), "the explanation stays folded until asked for"
    spoiler.locator("summary").click()
    assert "index map" in spoiler.locator("p").inner_text()


LESSON = {
    "title": "In-place chunks",
    "steps": [
        {
            "source": "# step one\n",
            "entry": None,
            "chip": "v5p",
            "note": "Predict **which chunks** go wrong.",
        },
        {"source": "# step two\n", "entry": None, "chip": "v5p", "note": "Now run it."},
    ],
}


def test_teacher_revises_a_lesson_while_a_student_is_on_it(page, open_page, any_server):
    created = httpx.post(f"{any_server.url}/api/lessons", json=LESSON).json()
    student = open_page()
    goto(student, any_server, created["url"])
    assert student.inner_text("#lesson-note strong") == "which chunks"

    goto(page, any_server, created["edit_url"])  # the teacher's edit link opens the builder
    expect(page.locator("#lesson-dialog")).to_be_visible()
    assert "#edit=" not in page.url, "the token leaves the address bar"
    assert page.inner_text("#lesson-heading") == "Edit the lesson (revision 1)"
    page.locator("#lesson-step-code .cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.insert_text("x = 1  # fixed\n")
    page.fill("#lesson-step-note", "Predict **which rows** go wrong.")
    page.click("#note-preview")
    expect(page.locator("#lesson-step-preview strong")).to_have_text("which rows")
    first = ".lesson-step[data-index='0'] .lesson-step-what"
    page.drag_and_drop(".lesson-step[data-index='1']", ".lesson-step[data-index='0']")  # by dragging
    assert page.inner_text(first).strip().endswith("# step two")
    page.drag_and_drop(".lesson-step[data-index='1']", ".lesson-step[data-index='0']")
    assert page.inner_text(first).strip().endswith("# step one")
    page.locator(".lesson-step[data-index='1'] .lesson-step-head").focus()
    page.keyboard.press("Alt+ArrowUp")  # and by keys: step two first
    assert page.inner_text(first).strip().endswith("# step two")
    assert page.inner_text("#lesson-step-heading").startswith("Step 2:"), "the selection follows its step"
    page.click("#lesson-create")
    expect(page.locator("#lesson-revision-url")).to_have_value(f"{any_server.url}/l/{created['id']}?rev=2")
    assert page.input_value("#lesson-url") == f"{any_server.url}{created['url']}"

    # The student is still on revision 1, told a newer one exists, never switched.
    student.click("#lesson-next")
    notice = student.locator("#lesson-newer")
    expect(notice).to_contain_text("newer revision (2)")
    assert student.inner_text("#lesson-note") == "Now run it." and source(student) == "# step two\n"
    student.reload()
    student.wait_for_selector("html[data-ready='1']")
    assert student.get_attribute("#lesson-position", "data-revision") == "1", "a reload stays on revision 1"
    student.click("#open-newer")
    student.wait_for_selector("html[data-ready='1']")
    expect(student.locator("#lesson-position")).to_have_attribute("data-revision", "2")
    assert source(student) == "# step two\n", "revision 2 starts with the step the teacher moved up"

    fresh = open_page()
    goto(fresh, any_server, created["url"])  # the stable link shows the latest
    assert fresh.get_attribute("#lesson-position", "data-revision") == "2"
    assert source(fresh) == "# step two\n"
    fresh.click("#lesson-next")
    assert source(fresh) == "# step one\nx = 1  # fixed\n"
    goto(fresh, any_server, f"{created['url']}?rev=1")  # the old revision still opens
    assert source(fresh) == "# step one\n"
    # The page asks for the lesson's latest revision after it is ready: wait for the notice, not count it.
    expect(fresh.locator("#lesson-newer")).to_have_count(1)


def test_copy_buttons_and_embed_snippets(open_page, live_server):
    page = open_page(permissions=["clipboard-read", "clipboard-write"])
    goto(page, live_server, "/?scratch")
    set_source(page, "# shared for the course page\n")
    page.click("#share")
    expect(page.locator("#share-url")).not_to_have_value("")
    url = page.input_value("#share-url")
    page.click("#copy-link")
    expect(page.locator("#copy-status")).to_have_text("Copied.")
    assert page.evaluate("() => navigator.clipboard.readText()") == url
    share_id = url.rsplit("/", 1)[1]
    page.click("#share-embed")
    snippet = page.locator("#embed-snippet")
    expect(snippet).to_have_value(re.compile(re.escape(f'src="{live_server.url}/embed/{share_id}"')))
    page.check("#embed-readonly")
    expect(snippet).to_have_value(re.compile(re.escape(f"/embed/{share_id}?readonly=1")))
    page.click("#embed-copy")
    assert page.evaluate("() => navigator.clipboard.readText()") == snippet.input_value()
    assert snippet.input_value().startswith("<iframe ") and 'loading="lazy"' in snippet.input_value()
    page.click("#embed-close")

    page.click("#lesson-button")
    page.click("#lesson-clear")
    page.fill("#lesson-builder-title", "Embedded")
    page.click("#lesson-add")
    page.click("#lesson-create")
    expect(page.locator("#lesson-url")).not_to_have_value("")
    lesson_url = page.input_value("#lesson-url")
    page.click("#lesson-links button[data-copy='#lesson-edit-url']")
    assert "#edit=" in page.evaluate("() => navigator.clipboard.readText()")
    page.click("#lesson-embed")
    lesson_id = lesson_url.rsplit("/", 1)[1]
    expect(page.locator("#embed-snippet")).to_have_value(re.compile(re.escape(f"/embed/l/{lesson_id}")))


def test_a_lesson_embedded_in_a_course_page_on_another_origin(page, live_server):
    steps = [
        {"source": "# read me first\n", "note": "First, **read**."},
        {"source": SCRATCH_PRINTS_MARKUP.replace("x * 2", "x * 7"), "note": "Then run it."},
    ]
    lesson = httpx.post(f"{live_server.url}/api/lessons", json={"title": "Week 1", "steps": steps}).json()
    with course_site(f"{live_server.url}/embed/l/{lesson['id']}") as course:
        page.goto(course)
        frame = page.frame_locator("#pp")
        frame.locator("html[data-ready='1']").wait_for(state="attached")
        expect(frame.locator("#step-position")).to_have_text("Step 1 of 2")
        expect(frame.locator("#embed-note strong")).to_have_text("read")
        frame.locator("#step-next").click()
        expect(frame.locator("#step-position")).to_have_text("Step 2 of 2")
        frame.locator("#run").click()
        expect(frame.locator("#status")).to_have_text("ran", timeout=120_000)
        assert frame.locator("a#open-in-playground").get_attribute("href") == f"/l/{lesson['id']}?step=2"
