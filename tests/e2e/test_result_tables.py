"""The result's tables fit the result pane (issue 42, item 6): at 1280×720 the time model's steps and
the roofline table were wider than the pane and had to be scrolled sideways to read their last column
(the bound). Headers and text wrap between words; no word is broken inside."""

from __future__ import annotations

from tests.e2e.test_playground import goto, run_and_wait, show_solution

WIDER_THAN_PANE = """() => [...document.querySelectorAll('#panel-results table.data')]
    .filter((t) => t.getBoundingClientRect().width > t.closest('.panel').clientWidth)
    .map((t) => `${t.id || t.className}: ${Math.round(t.getBoundingClientRect().width)} px`)"""
BROKEN_WORDS = """() => [...document.querySelectorAll('#panel-results table.data th, #panel-results table.data td')]
    .filter((c) => { const words = c.textContent.trim().split(/[\\s-]+/).filter(Boolean).length;
                     const range = document.createRange(); range.selectNodeContents(c);
                     const lines = new Set([...range.getClientRects()].map((r) => Math.round(r.top))).size;
                     return words > 0 && lines > words; }).map((c) => c.textContent)"""


def test_the_result_tables_fit_the_result_pane_at_1280x720(open_page, live_server):
    page = open_page(viewport={"width": 1280, "height": 720})
    goto(page, live_server, "/?entry=tiled_matmul")
    show_solution(page)
    assert run_and_wait(page) == "passed"
    assert page.locator("#estimate-steps").count() == 1 and page.locator("#roofline").count() == 1
    assert page.evaluate(WIDER_THAN_PANE) == []
    assert page.evaluate(BROKEN_WORDS) == []
