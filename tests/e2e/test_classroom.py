"""A class day in a real browser: a lesson in presentation mode, building a lesson, an embed in a course page."""

from __future__ import annotations

import contextlib
import http.server
import threading
from collections.abc import Iterator

import httpx
from playwright.sync_api import expect

from sandbox.catalog.entries import load_catalog
from tests.e2e.test_playground import SCRATCH_PRINTS_MARKUP, goto, run_and_wait, set_source, source

CATALOG = load_catalog()
TILED = CATALOG.get("tiled_matmul")
STUCK_K = next(w for w in TILED.wrong if w.name == "stuck_k_index_map")


def make_lesson(live_server) -> dict:
    steps = [
        {
            "source": TILED.solution_source,
            "entry": "tiled_matmul",
            "chip": "v5e",
            "note": "**Step one**: run the tiled matmul.",
        },
        {
            "source": STUCK_K.source,
            "entry": "tiled_matmul",
            "chip": "v5p",
            "note": "This one is wrong. Find the index map that is.",
        },
        {
            "source": SCRATCH_PRINTS_MARKUP,
            "entry": None,
            "chip": "v6e",
            "options": {"detect_races": True},
            "note": "Your own kernel.",
        },
    ]
    response = httpx.post(f"{live_server.url}/api/lessons", json={"title": "Pallas 101", "steps": steps})
    assert response.status_code in (200, 201), response.text
    return {**response.json(), "steps": steps}


def position(page) -> str:
    return page.get_attribute("#lesson-position", "data-step") or ""


def test_three_step_lesson_in_presentation_mode(page, live_server):
    lesson = make_lesson(live_server)
    steps = lesson["steps"]
    goto(page, live_server, f"{lesson['url']}?present=1&hide=reference,ir,toolbar")
    assert page.get_attribute("html", "data-present") == "1"
    assert page.is_hidden("#tab-ir") and page.is_hidden("#tab-reference") and page.is_hidden(".toolbar")
    assert page.is_visible("#tab-readme")
    assert page.inner_text("#lesson-title") == "Pallas 101"
    assert position(page) == "1" and page.inner_text("#lesson-position") == "Step 1 of 3"
    assert page.inner_text("#lesson-note strong") == "Step one"
    assert source(page) == steps[0]["source"] and page.is_checked("#chips input[value='v5e']")
    assert run_and_wait(page, keyboard=True) == "passed"

    page.keyboard.press("Alt+ArrowRight")
    expect(page.locator("#lesson-position")).to_have_attribute("data-step", "2")
    assert source(page) == steps[1]["source"] and page.is_checked("#chips input[value='v5p']")
    assert "step=2" in page.url and "present=1" in page.url
    assert run_and_wait(page) == "mismatch"
    set_source(page, TILED.solution_source)  # the student fixes it
    assert page.is_visible("#lesson-edited")
    assert run_and_wait(page) == "passed"

    page.keyboard.press("Alt+ArrowLeft")
    expect(page.locator("#lesson-position")).to_have_attribute("data-step", "1")
    assert page.text_content("#status") == "passed", "a step's result comes back with the step"
    assert "Your last result on this step" in page.inner_text("#snapshot-note")
    page.click("#lesson-next")
    expect(page.locator("#lesson-position")).to_have_attribute("data-step", "2")
    assert source(page) == TILED.solution_source, "the student's edit of step 2 is kept"
    page.click("#lesson-reset")
    expect(page.locator("#lesson-edited")).to_be_hidden()
    assert source(page) == steps[1]["source"]

    page.click("#lesson-next")
    expect(page.locator("#lesson-position")).to_have_attribute("data-step", "3")
    assert page.inner_text("#entry-title") == "Scratch file"
    assert page.is_checked("#chips input[value='v6e']") and page.is_checked("#opt-races")
    assert page.is_disabled("#lesson-next")
    assert run_and_wait(page) == "ran"


def test_teacher_builds_a_lesson_and_a_student_opens_it(page, open_page, live_server):
    goto(page, live_server, "/?entry=tiled_matmul")
    page.click("#lesson-button")
    page.click("#lesson-clear")
    page.fill("#lesson-builder-title", "Two kernels")
    page.click("#lesson-add")
    page.fill("#lesson-step-note", "The *new* API.")
    page.click("#lesson-builder-close")
    page.click("#catalog-button")
    page.click("#catalog-dialog .entry-card[data-slug='tiled_matmul_pallas_call']")
    expect(page.locator("#entry-title")).to_have_text(CATALOG.get("tiled_matmul_pallas_call").title)
    page.click("#chips label:has-text('v6e')")
    page.click("#lesson-button")
    page.click("#lesson-add")
    assert page.locator(".lesson-step").count() == 2
    page.click(".lesson-step[data-index='1'] [aria-label='Move step 2 up']")
    page.click("#lesson-create")
    link = page.locator("#lesson-url")
    expect(link).not_to_have_value("")
    url = link.input_value()
    assert "/l/" in url

    student = open_page()
    student.goto(url)
    student.wait_for_selector("html[data-ready='1']")
    assert student.inner_text("#lesson-title") == "Two kernels"
    assert student.inner_text("#lesson-position") == "Step 1 of 2"
    assert student.inner_text("#entry-title") == CATALOG.get("tiled_matmul_pallas_call").title
    assert student.is_checked("#chips input[value='v6e']")
    student.click("#lesson-next")
    expect(student.locator("#lesson-note em")).to_have_text("new")


def test_present_button_toggles_the_mode_and_keeps_it_in_the_link(page, live_server):
    goto(page, live_server, "/?entry=tiled_matmul")
    page.click("#present")
    assert page.get_attribute("html", "data-present") == "1"
    assert "present=1" in page.url
    assert effective_font_px(page, ".cm-content") >= 18
    page.click("#present")
    assert page.get_attribute("html", "data-present") is None and "present" not in page.url


def effective_font_px(page, selector: str) -> float:
    """The font size of `selector` as the screen shows it: CSS px times the page's zoom."""
    return page.evaluate(
        """(selector) => {
            const el = document.querySelector(selector);
            const zoom = el.getBoundingClientRect().width / el.offsetWidth;
            return parseFloat(getComputedStyle(el).fontSize) * zoom;
        }""",
        selector,
    )


def share(live_server, **fields) -> str:
    body = {"source": TILED.solution_source, "entry": "tiled_matmul", "chip": "v5e", **fields}
    return httpx.post(f"{live_server.url}/api/shares", json=body).json()["id"]


@contextlib.contextmanager
def course_site(frame_src: str) -> Iterator[str]:
    """A course page on another origin (another loopback port) with the playground in an iframe.

    A real server: Chromium's local-network rules block a page it cannot place (an intercepted
    request counts as public) from framing a loopback address.
    """
    html = f"<!doctype html><link rel='icon' href='data:,'><title>Week 1</title><h1>Week 1</h1><iframe id='pp' src='{frame_src}' width='900' height='640'></iframe>"

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.end_headers()
            self.wfile.write(html.encode())

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/week1.html"
    finally:
        server.shutdown()
        server.server_close()


def test_embed_runs_inside_an_iframe_on_a_course_page(page, live_server):
    share_id = share(live_server)
    with course_site(f"{live_server.url}/embed/{share_id}") as course:
        page.goto(course)
        frame = page.frame_locator("#pp")
        frame.locator("html[data-ready='1']").wait_for(state="attached")
        frame.locator("#run").click()
        expect(frame.locator("#status")).to_have_text("passed", timeout=120_000)
        link = frame.locator("a#open-in-playground")
        assert link.get_attribute("href").endswith(f"/s/{share_id}")


def open_embed(page, live_server, share_id: str) -> None:
    page.goto(f"{live_server.url}/embed/{share_id}")
    page.wait_for_selector("html[data-ready='1']")


def test_embed_marks_the_line_an_error_points_at(page, live_server):
    open_embed(
        page, live_server, share(live_server, source="import jax\n\n\ndef matmul(x, y):\n    return x @ (y\n")
    )
    page.click("#run")
    expect(page.locator("#status")).to_have_text("error", timeout=120_000)
    marked = page.locator(".cm-error-line")
    expect(marked).to_have_count(1)
    assert marked.get_attribute("data-error-line") == page.get_attribute(
        "#error-section .goto-line", "data-line"
    )


def test_embed_marks_the_racing_lines_like_the_playground(page, live_server):
    wrong = next(
        w for w in CATALOG.get("race_condition_demo").wrong if w.name == "prefetch_into_the_slot_being_read"
    )
    share_id = share(
        live_server,
        source=wrong.source,
        entry="race_condition_demo",
        chip="v5p",
        options={"detect_races": True},
    )
    open_embed(page, live_server, share_id)
    page.click("#run")
    expect(page.locator("#status")).to_have_text("mismatch", timeout=120_000)
    reported = sorted(
        {b.get_attribute("data-line") or "" for b in page.locator("#races-section .goto-line").all()}
    )
    assert len(reported) >= 2
    # The editor draws only the lines in view: go to each reported line, then look for its mark.
    for line in reported:
        page.click(f"#races-section .goto-line[data-line='{line}'] >> nth=0")
        expect(page.locator(f".cm-race-line[data-race-line='{line}']")).to_be_visible()


def test_read_only_embed_cannot_be_edited(page, live_server):
    share_id = share(live_server, chip="v6e")
    page.goto(f"{live_server.url}/embed/{share_id}?readonly=1")
    page.wait_for_selector("html[data-ready='1']")
    assert page.get_attribute(".cm-content", "aria-readonly") == "true"
    before = page.evaluate("() => window.embed.editor.getValue()")
    page.click(".cm-content")
    page.keyboard.type("oops")
    assert page.evaluate("() => window.embed.editor.getValue()") == before
    assert page.is_visible("#run")


def test_the_main_app_refuses_to_be_framed(page, live_server):
    page.allow_console("frame-ancestors")
    with (
        course_site(f"{live_server.url}/?entry=tiled_matmul") as course,
        page.expect_console_message(lambda m: "frame-ancestors" in m.text),
    ):
        page.goto(course)
    frame = next(f for f in page.frames if f != page.main_frame)
    assert frame.locator("#editor").count() == 0
