"""A lesson on the projector (issue 42, item 5): presentation mode at 1280×720 shows at least 20 rows of
code beside the whole lesson note, as the page opens; the projector is the classroom's main screen."""

from __future__ import annotations

import httpx

from tests.e2e.test_class_day_bugs import visible_lines
from tests.e2e.test_playground import goto

SOURCE = "\n".join(f"x{i} = {i}  # line {i}" for i in range(1, 41)) + "\n"
NOTE = (
    "**Tiles.** Each grid step copies one `(bm, bk)` block of `x` and one `(bk, bn)` block of `y` into VMEM, "
    "multiplies them, and adds the product into an f32 accumulator that lives across the `k` steps.\n\n"
    "Change `bk` and run again: what happens to the time, and why?"
)


def note_cut(page) -> str:
    """'' when the whole note is on the screen, else how it is cut."""
    return page.evaluate(
        """() => { const n = document.querySelector('#lesson-note'); const r = n.getBoundingClientRect();
                   if (n.scrollHeight > n.clientHeight + 1) return `scrolls: ${n.scrollHeight} > ${n.clientHeight}`;
                   if (r.bottom > innerHeight || r.right > innerWidth) return `off screen: ${JSON.stringify(r)}`;
                   return ''; }"""
    )


def test_a_lesson_step_on_the_projector_shows_twenty_lines_and_its_whole_note(open_page, live_server):
    steps = [{"source": SOURCE, "chip": "v5e", "note": NOTE}]
    lesson = httpx.post(f"{live_server.url}/api/lessons", json={"title": "Tiles", "steps": steps}).json()
    page = open_page(viewport={"width": 1280, "height": 720})
    goto(page, live_server, f"{lesson['url']}?present=1")
    page.wait_for_selector("#lesson-note strong")
    assert note_cut(page) == ""
    assert visible_lines(page) >= 20
    assert page.evaluate("() => !!document.querySelector('.pane-side > #lesson-bar')"), "beside the code"

    page.click("#present")  # leaving presentation mode: the bar goes back above the code
    page.wait_for_selector(".pane-code > #lesson-bar", state="attached")
    assert page.get_attribute("html", "data-present") is None
