"""A phone's sticky header stays two rows (issue 42, item 6): at 390×844 it took three after a run
(the run's status pushed View and the theme to a row of their own), on top of every screen."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.e2e.test_class_day_bugs import PHONE, TARGET_PX
from tests.e2e.test_playground import goto

MOST = 0.13  # of the screen's height: two rows of 40 px touch targets


def header_share(page) -> float:
    return (
        page.evaluate("() => document.querySelector('.topbar').getBoundingClientRect().height")
        / PHONE["height"]
    )


def test_the_phone_header_stays_two_rows_before_during_and_after_a_run(open_page, live_server):
    page = open_page(viewport=PHONE, is_mobile=True, has_touch=True)
    goto(page, live_server, "/?entry=tiled_matmul")  # the exercise: it stops at its first hole, soon
    assert header_share(page) <= MOST
    page.locator("#run").tap()
    expect(page.locator("#cancel")).to_be_visible()
    assert header_share(page) <= MOST, "while it runs, Cancel too"
    expect(page.locator("#run-status")).to_have_attribute("data-phase", "error", timeout=120_000)
    assert header_share(page) <= MOST, f"after the run: {header_share(page):.0%}"
    for control in ("#run", "#settings-button", "#share", "#view-button", "#theme-toggle"):
        box = page.locator(control).bounding_box()
        assert box and box["width"] >= TARGET_PX and box["height"] >= TARGET_PX, (control, box)
    expect(page.locator("#run-status")).to_be_visible()
    assert page.evaluate("() => document.documentElement.scrollWidth <= document.documentElement.clientWidth")
