"""The page where a class sees it: a projector at 1280×720 in presentation mode, a phone at 390×844,
and the talk's headline, the SparseCore all-gather beside the TensorCore matmul, in the trace.

With PLAYGROUND_SCREENSHOTS=DIR set, each test also saves the view it checked into DIR (the README's
screenshots: `PLAYGROUND_SCREENSHOTS=docs scripts/test tests/e2e/test_projector_phone.py`).
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
from playwright.sync_api import expect

from sandbox.catalog.entries import load_catalog
from tests.e2e.test_classroom import effective_font_px
from tests.e2e.test_playground import SCRATCH_PRINTS_MARKUP, goto, run_and_wait, set_source, show_solution

CATALOG = load_catalog()
TILED = CATALOG.get("tiled_matmul")
PROJECTOR = {"width": 1280, "height": 720}
PHONE = {"width": 390, "height": 844}
READABLE_PX = 17.5  # the smallest text a room reads off a projected 1280×720 screen


def screenshot(page, name: str) -> None:
    folder = os.environ.get("PLAYGROUND_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / name))


def clipped(page, selector: str) -> list[str]:
    """The elements matching `selector` whose content is cut off sideways (wider than their box)."""
    return page.evaluate(
        """(s) => [...document.querySelectorAll(s)]
            .filter((el) => el.scrollWidth > el.clientWidth + 1).map((el) => el.id || el.className)""",
        selector,
    )


def test_presentation_mode_at_1280x720_makes_every_panel_readable(open_page, live_server):
    steps = [
        {
            "source": TILED.solution_source,
            "entry": "tiled_matmul",
            "chip": "v5p",
            "note": "Each **K step** adds one tile product into the f32 accumulator.",
        },
        {"source": "# next\n", "note": "Next."},
    ]
    lesson = httpx.post(
        f"{live_server.url}/api/lessons", json={"title": "Tiled matmul", "steps": steps}
    ).json()
    page = open_page(viewport=PROJECTOR)
    goto(page, live_server, f"{lesson['url']}?present=1&hide=toolbar,entry")
    assert page.get_attribute("html", "data-present") == "1" and page.is_hidden(".toolbar")
    assert run_and_wait(page) == "passed"
    for selector in (".cm-content", "#lesson-note p", "#cases td", "#summary", ".lesson-title"):
        assert effective_font_px(page, selector) >= READABLE_PX, selector
    assert clipped(page, "#panel-results, #panel-results .table-wrap") == [], "no table is cut off"
    assert page.locator("#editor .cm-lineWrapping").count() == 1, "long lines wrap on the projector"
    screenshot(page, "projector.png")

    page.click("#tab-trace")
    label = page.locator(".tl-label").first
    expect(label).to_be_visible()
    height = label.evaluate("(el) => el.getBoundingClientRect().height")
    assert height >= 12, f"trace lane names are {height:.1f} px high on screen"

    # The View menu: text size, wrap and panels, each reflected in the link.
    before = effective_font_px(page, ".cm-content")
    page.click("#view-button")
    page.click("#size-up")
    assert "size=150" in page.url
    assert effective_font_px(page, ".cm-content") > before
    page.uncheck("#view-parts input[data-part='ir']")
    assert page.is_hidden("#tab-ir")
    assert parse_qs(urlsplit(page.url).query)["hide"] == ["toolbar,entry,ir"]
    page.uncheck("#view-wrap")
    assert page.locator("#editor .cm-lineWrapping").count() == 0 and "wrap=0" in page.url
    page.keyboard.press("Escape")
    expect(page.locator("#view-menu")).to_be_hidden()


def test_a_phone_run_shows_progress_by_the_button_and_brings_the_result_into_view(open_page, live_server):
    page = open_page(viewport=PHONE, is_mobile=True, has_touch=True)
    goto(page, live_server, "/?scratch")
    set_source(page, SCRATCH_PRINTS_MARKUP.replace("x * 2", "x * 17"))  # not a cached run: progress shows
    status = page.locator("#run-status")
    page.locator("#run").tap()
    expect(status).to_have_attribute("data-phase", "running")
    assert status.is_visible() and status.evaluate("(el) => el.getBoundingClientRect().top") < 200
    expect(page.locator("#status")).to_be_in_viewport(timeout=120_000)
    expect(status).to_have_attribute("data-phase", "ran")
    below_header = "() => document.querySelector('#status').getBoundingClientRect().top >= document.querySelector('.topbar').getBoundingClientRect().bottom"
    page.wait_for_function(below_header)  # the smooth scroll ends with the result under the sticky header
    assert page.locator("#run").is_visible(), "Run stays on screen"
    overflow = page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0
    screenshot(page, "phone.png")


def overlaps(a: dict, b: dict) -> bool:
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and b["y"] < a["y"] + a["height"]
    )


def test_overlap_trace_shows_sparsecore_gather_beside_tensorcore_matmul(open_page, live_server):
    page = open_page(viewport={"width": 1280, "height": 900})
    goto(page, live_server, "/?entry=sc_all_gather_overlap")
    show_solution(page)
    assert run_and_wait(page) == "passed"
    page.click("#open-trace")
    lanes = page.locator("g.tl-lane")
    expect(lanes).to_have_count(8)  # drawn after the tab opens
    names = [lanes.nth(i).locator(".tl-label").text_content() for i in range(lanes.count())]
    assert names == [f"device {d} · {kind} 0" for d in range(4) for kind in ("SparseCore", "TensorCore")]
    assert page.locator("rect.tl-dma[data-core-kind='sparse_core'].remote").count() >= 4 * 3, (
        "the ring's hops"
    )
    assert page.locator("rect.tl-step[data-core-kind='tensor_core']").count() > 0
    note = page.locator("#overlap-note")
    assert note.get_attribute("data-serialised") == "4"
    assert "one after the other" in note.inner_text() and "at the same time" in note.inner_text()
    marks = page.evaluate(
        """() => [...document.querySelectorAll('svg.timeline .tl-label, svg.timeline rect.tl-dma, svg.timeline rect.tl-step')]
            .map((el) => { const r = el.getBoundingClientRect();
                           return {label: el.classList.contains('tl-label'), x: r.x, y: r.y, width: r.width, height: r.height}; })"""
    )
    labels = [m for m in marks if m["label"]]
    bars = [m for m in marks if not m["label"]]
    assert labels and bars and not any(overlaps(lab, bar) for lab in labels for bar in bars)

    page.click("button[data-unit='tpu']")
    starts = page.evaluate(
        """() => Object.fromEntries(['sparse_core', 'tensor_core'].map((kind) => [kind,
            Math.min(...[...document.querySelectorAll(`rect.tl-dma[data-device='0'][data-core-kind='${kind}']`)]
              .map((r) => Number(r.dataset.start)))]))"""
    )
    assert starts == {"sparse_core": 0, "tensor_core": 0}, "on the estimated TPU clock both start together"
    screenshot(page, "trace-overlap.png")
