"""The playground page in a real browser against a real server running real kernels.

Each test is a flow a person goes through: pick an entry and run it, break it, share it, cancel a
run. Assertions read what the page shows (text, element attributes), never pixels.
"""

from __future__ import annotations

import re

import httpx
import pytest
from playwright.sync_api import expect

from sandbox.catalog.entries import load_catalog

CATALOG = load_catalog()
RUN_TIMEOUT_MS = 120_000
FINISHED = "html[data-running='0'] #result[data-status]"


def goto(page, live_server, path: str = "/") -> None:
    page.goto(live_server.url + path)
    page.wait_for_selector("html[data-ready='1']")


def set_source(page, text: str) -> None:
    page.evaluate("text => window.playground.editor.setValue(text)", text)


def source(page) -> str:
    return page.evaluate("() => window.playground.editor.getValue()")


def show_solution(page) -> None:
    """Load the worked solution, saying yes if the page asks first (it asks once per entry)."""
    page.click("#solution")
    if page.locator("#confirm-dialog[open]").count():
        page.click("#confirm-yes")


def run_and_wait(page, *, keyboard: bool = False) -> str:
    if keyboard:
        page.locator("#editor .cm-content").click()
        page.keyboard.press("Control+Enter")
    else:
        page.click("#run")
    # The click handler clears the old result and marks the page running before it returns, so
    # the first finished state seen from here on is this run's (even a cached one's, instantly).
    page.wait_for_selector(FINISHED, timeout=RUN_TIMEOUT_MS)
    return page.get_attribute("#result", "data-status") or ""


# The page's run flow as deployed every time; other main flows take the deployed server with --long.
@pytest.mark.parametrize("any_server", ["live_server", "redis_pg_server"], indirect=True)
def test_tiled_matmul_solution_passes_with_timings_and_memory_bars(page, any_server):
    goto(page, any_server, "/?entry=tiled_matmul")
    assert page.inner_text("#entry-title") == CATALOG.get("tiled_matmul").title
    show_solution(page)
    # A source of its own: a cached result (another test's) has no phases to show (`#run-phases` below).
    set_source(page, source(page) + f"\n# {any_server.url}: a fresh run\n")
    page.click("#chips label:has-text('v5p')")
    assert run_and_wait(page, keyboard=True) == "passed"
    assert page.text_content("#status") == "passed"
    assert re.match(r"passed: 3/3 cases match the reference", page.inner_text("#summary"))
    rows = page.locator("#cases tbody tr")
    assert rows.count() == 3
    assert [rows.nth(i).get_attribute("data-passed") for i in range(3)] == ["true"] * 3
    assert page.text_content("#simulated") == "CPU simulation"
    assert page.locator("#timing tr[data-key='Kernel'] td").inner_text().endswith(")")
    vmem = page.locator("#memory .membar[data-kind='vmem']")
    # emit_pipeline double-buffers three 128x128 f32 blocks (x, y, out: 6 x 64 KiB) plus the
    # 128x128 f32 accumulator: 7 x 65,536 = 458,752 bytes, of v5p's 64 MiB per TensorCore.
    assert vmem.get_attribute("data-used") == "458752"
    assert vmem.get_attribute("data-capacity") == str(64 * 1024 * 1024)
    assert "0.68%" in vmem.inner_text()
    hbm = page.locator("#memory .membar[data-kind='hbm']")
    assert hbm.get_attribute("data-used") == str(3 * 256 * 256 * 4)
    assert "jax 0.12.0.1" in page.inner_text("#run-meta")
    # Where the time went, as the server measured it (RunResult.phases).
    assert re.match(
        r"First verdict [\d.]+ m?s after submission: .*first call [\d.]+ m?s", page.inner_text("#run-phases")
    )
    # The estimate says how far it is validated: no published timing of a pl.kernel program on a v5p.
    band = page.locator("#estimate-band")
    assert (band.text_content() or "").startswith("not validated for pl.kernel")
    assert band.get_attribute("data-low") == ""


def test_wrong_kernel_is_a_mismatch_with_details(page, live_server):
    goto(page, live_server, "/?entry=tiled_matmul")
    page.select_option("#wrong", "stuck_k_index_map")
    assert "Loaded the wrong kernel" in page.inner_text("#notices")
    assert run_and_wait(page) == "mismatch"
    # The one-block case passes: with one K block, a stuck K index is the right one.
    assert page.locator("#cases tbody tr[data-passed='false']").count() == 2
    first = page.locator(".mismatch-detail").first
    assert first.is_visible()
    indices = first.locator(".mismatch")
    assert indices.count() > 0
    assert re.fullmatch(r"\[\d+,\s*\d+\]", indices.first.get_attribute("data-index") or "")
    maps = page.locator("#maps-section svg.heatmap")
    assert maps.count() == 3 and int(maps.first.get_attribute("data-over") or 0) > 0  # one per case


def test_syntax_error_marks_the_users_line(page, live_server):
    goto(page, live_server, "/?entry=tiled_matmul")
    set_source(page, "import jax\n\n\ndef matmul(x, y):\n    return x @ (y\n")
    assert run_and_wait(page) == "error"
    assert "SyntaxError" in page.inner_text("#error-section")
    marked = page.locator(".cm-error-line")
    assert marked.count() == 1
    assert marked.get_attribute("data-error-line") in {"5", "6"}
    button = page.locator("#error-section .goto-line")
    assert button.get_attribute("data-line") == marked.get_attribute("data-error-line")


def test_kernel_that_raises_marks_the_raising_line(page, live_server):
    goto(page, live_server, "/?entry=tiled_matmul")
    set_source(
        page,
        "def helper():\n    raise ValueError('block shape does not divide M')\n\n\ndef matmul(x, y):\n    return helper()\n",
    )
    assert run_and_wait(page) == "error"
    assert page.locator(".cm-error-line").get_attribute("data-error-line") == "2"
    assert "block shape does not divide M" in page.inner_text("#error-section")


def test_share_link_reopens_code_entry_chip_and_options(page, open_page, any_server):
    goto(page, any_server, "/?entry=hbm_manual_dma")
    text = "# my version of the manual DMA kernel\n" + CATALOG.get("hbm_manual_dma").solution_source
    set_source(page, text)
    page.click("#chips label:has-text('v6e')")
    page.check("#opt-races")
    page.click("#share")
    page.wait_for_selector("#share-panel:not([hidden])")
    url = page.input_value("#share-url")
    assert re.fullmatch(re.escape(any_server.url) + r"/s/[A-Za-z0-9_-]{11}", url)

    other = open_page()
    other.goto(url)
    other.wait_for_selector("html[data-ready='1']")
    assert source(other) == text
    assert other.inner_text("#entry-title") == CATALOG.get("hbm_manual_dma").title
    assert other.is_checked("#chips input[value='v6e']")
    assert other.is_checked("#opt-races")
    assert "Opened shared link" in other.inner_text("#notices")


def test_unknown_share_link_says_so(page, live_server):
    page.allow_console("status of 404")
    goto(page, live_server, "/s/AAAAAAAAAAA")
    assert "cannot be opened" in page.inner_text("#notices")


SCRATCH_PRINTS_MARKUP = """\
import numpy as np

def make_inputs(seed):
    return (np.arange(4, dtype=np.float32),)

def kernel(x):
    print('<img src=x onerror=alert(1)><script>alert(2)</script>')
    return x * 2
"""


def test_printed_markup_is_shown_as_text_and_runs_nothing(page, live_server):
    dialogs = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    goto(page, live_server, "/?scratch")
    set_source(page, SCRATCH_PRINTS_MARKUP)
    assert run_and_wait(page) == "ran"
    assert "<img src=x onerror=alert(1)>" in page.inner_text("#stdout")
    assert page.locator("#result img, #result script").count() == 0
    assert page.locator("#outputs tbody tr").count() == 1
    assert dialogs == []


SCRATCH_SLEEPS = """\
import time
import numpy as np

def make_inputs(seed):
    return (np.zeros(4, np.float32),)

def kernel(x):
    print('about to sleep', flush=True)
    time.sleep(600)
    return x
"""


def test_cancel_stops_a_long_run(page, live_server):
    goto(page, live_server, "/?scratch")
    set_source(page, SCRATCH_SLEEPS)
    page.click("#run")
    page.wait_for_selector("#run-log li:has-text('importing your code')", timeout=RUN_TIMEOUT_MS)
    page.click("#cancel")
    page.wait_for_selector(FINISHED, timeout=30_000)
    assert page.get_attribute("#result", "data-status") == "cancelled"
    assert page.is_enabled("#run") and page.is_disabled("#cancel")


def test_oversized_source_is_refused_with_a_clear_message(page, live_server):
    page.allow_console("status of 413")
    goto(page, live_server, "/?scratch")
    set_source(page, "# " + "x" * (live_server.settings.source_bytes + 10) + "\n")
    page.click("#run")
    notice = page.locator("#request-error")
    notice.wait_for()
    assert "Source too large" in notice.inner_text()
    assert "65,536" in notice.inner_text()
    assert page.is_enabled("#run")


def test_catalog_picker_opens_an_entry(page, live_server):
    goto(page, live_server)
    page.click("#catalog-button")
    cards = page.locator("#catalog-dialog .level:not([data-level='scratch']) .entry-card")
    assert [cards.nth(i).get_attribute("data-slug") for i in range(cards.count())] == [
        e.slug
        for level in ("beginner", "intermediate", "advanced")
        for e in CATALOG.entries
        if e.level == level
    ]
    page.fill("#catalog-filter", "sparsecore")
    visible = page.locator("#catalog-dialog .level:not([data-level='scratch']) .entry-card:visible")
    sparse = [e.slug for e in CATALOG.entries if any("sparsecore" in c.lower() for c in e.concepts)]
    assert sorted(visible.nth(i).get_attribute("data-slug") or "" for i in range(visible.count())) == sorted(
        sparse
    )
    page.fill("#catalog-filter", "")
    page.click("#catalog-dialog .entry-card[data-slug='block_sparse_matmul']")
    expect(page.locator("#entry-title")).to_have_text(CATALOG.get("block_sparse_matmul").title)
    assert page.url.endswith("/?entry=block_sparse_matmul")
    page.click("#tab-reference")
    assert "def reference" in page.inner_text("#reference")


def chip_buttons(page) -> list[str]:
    inputs = page.locator("#chips input[name='chip']")
    return [inputs.nth(i).get_attribute("value") or "" for i in range(inputs.count())]


def test_chip_buttons_are_the_chips_the_server_lists(page, live_server):
    listed = [chip["name"] for chip in httpx.get(f"{live_server.url}/api/chips").json()]
    goto(page, live_server, "/?scratch")
    assert chip_buttons(page) == listed == ["v5e", "v5p", "v6e", "tpu7x", "tpu8i", "tpu8t"]
    assert page.is_checked("#chips input[value='v5p']"), "the server's default chip, until the user picks one"


def test_chip_buttons_follow_the_servers_list(page, live_server):
    def two_chips(route):
        route.fulfill(json=[c for c in route.fetch().json() if c["name"] in ("v5e", "v6e")])

    page.route("**/api/chips", two_chips)
    goto(page, live_server, "/?scratch")
    assert chip_buttons(page) == ["v5e", "v6e"]
    assert page.is_checked("#chips input[value='v5e']")
    page.click("#catalog-button")
    assert "chips: v5e, v6e" in page.inner_text("#catalog-dialog .entry-card[data-slug='']")


def test_draft_survives_a_reload(page, live_server):
    goto(page, live_server, "/?entry=ring_all_gather")
    set_source(page, "# draft in progress\n")
    page.reload()
    page.wait_for_selector("html[data-ready='1']")
    assert source(page) == "# draft in progress\n"
    page.click("#reset")
    assert source(page) == CATALOG.get("ring_all_gather").template_source


def test_dark_theme_sticks(page, live_server):
    goto(page, live_server)
    before = page.get_attribute("html", "data-theme")
    page.click("#theme-toggle")
    after = page.get_attribute("html", "data-theme")
    assert {before, after} == {"light", "dark"}
    page.reload()
    page.wait_for_selector("html[data-ready='1']")
    assert page.get_attribute("html", "data-theme") == after


@pytest.mark.parametrize("viewport", [{"width": 390, "height": 844}, {"width": 1280, "height": 720}])
def test_page_fits_the_viewport_without_sideways_scrolling(open_page, live_server, viewport):
    page = open_page(viewport=viewport)
    goto(page, live_server, "/?entry=tiled_matmul")
    assert page.locator("#editor .cm-content").is_visible()
    assert page.locator("#run").is_visible()
    overflow = page.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )
    assert overflow <= 0


def test_controls_are_reachable_by_keyboard(page, live_server):
    goto(page, live_server)
    reached = set()
    for _ in range(40):
        page.keyboard.press("Tab")
        reached.add(page.evaluate("() => document.activeElement.id || document.activeElement.className"))
    assert {"catalog-button", "run", "share", "theme-toggle"} <= reached


def test_races_are_marked_on_the_racing_lines_and_the_fix_has_none(page, live_server):
    entry = CATALOG.get("race_condition_demo")
    goto(page, live_server, "/?entry=race_condition_demo")
    assert page.is_checked("#opt-races"), "the entry turns the race detector on"
    page.select_option("#wrong", "prefetch_into_the_slot_being_read")
    assert run_and_wait(page) == "mismatch"
    assert "DATA RACES" in page.inner_text("#races-section")  # the heading (CSS upper case)
    assert "write by a DMA" in page.inner_text("#races-section")
    wrong = next(w for w in entry.wrong if w.name == "prefetch_into_the_slot_being_read").source
    marked = page.locator(".cm-race-line")
    assert marked.count() >= 2
    for i in range(marked.count()):
        line = int(marked.nth(i).get_attribute("data-race-line") or 0)
        assert 1 <= line <= len(wrong.splitlines())
    show_solution(page)
    assert run_and_wait(page) == "passed"
    assert page.locator(".cm-race-line").count() == 0
    assert page.locator("#races-section").count() == 0


def test_rate_limit_is_explained_with_when_to_try_again(page, live_server):
    from server.ratelimit import RateLimiter

    runner = live_server.app.state.queue
    saved = runner.limiter
    runner.limiter = RateLimiter(per_minute=1, burst=1)  # this browser's second run within a minute
    page.allow_console("status of 429")
    try:
        goto(page, live_server, "/?scratch")
        set_source(page, SCRATCH_PRINTS_MARKUP.replace("x * 2", "x * 3"))
        assert run_and_wait(page) == "ran"
        set_source(page, SCRATCH_PRINTS_MARKUP.replace("x * 2", "x * 4"))  # not the cached run again
        page.click("#run")
        notice = page.locator("#request-error")
        notice.wait_for()
        text = notice.inner_text()
        assert "Rate limited" in text and re.search(r"try again in \d+ s", text), text
        assert page.is_enabled("#run")
    finally:
        runner.limiter = saved


def test_a_cached_result_says_so_and_runs_fresh_on_request(page, live_server):
    goto(page, live_server, "/?scratch")
    set_source(page, SCRATCH_PRINTS_MARKUP.replace("x * 2", "x * 5"))
    assert run_and_wait(page) == "ran"
    assert page.locator("#cached").count() == 0
    assert run_and_wait(page) == "ran"
    first = page.inner_text("#cached")
    assert "Served from the cache" in first
    page.click("#run-fresh")
    page.wait_for_selector(FINISHED, timeout=RUN_TIMEOUT_MS)
    assert page.get_attribute("#result", "data-status") == "ran"
    assert page.locator("#cached").count() == 0
