"""What playground users expect, in a real browser: a diff against the template or the solution, a
history of their runs with results and a side-by-side compare, download and upload of the .py,
Back / Forward between entries and lesson steps, a shortcut sheet, a link that carries its result."""

from __future__ import annotations

from pathlib import Path

import httpx
from playwright.sync_api import expect

from sandbox.catalog.entries import load_catalog
from tests.e2e.test_playground import SCRATCH_PRINTS_MARKUP, goto, run_and_wait, set_source, source

CATALOG = load_catalog()
TILED = CATALOG.get("tiled_matmul")


def test_diff_against_the_template_and_the_solution(page, live_server):
    goto(page, live_server, "/?entry=tiled_matmul")
    set_source(page, TILED.template_source.replace("def matmul_kernel(", "def my_matmul_kernel("))
    page.click("#diff-button")
    summary = page.locator("#diff-summary")
    expect(summary).to_have_attribute("data-chunks", "1")
    assert page.locator("#diff-view .cm-mergeView .cm-editor").count() == 2
    assert page.locator("#diff-view .cm-changedText").count() >= 1
    page.click("#diff-solution")
    assert int(summary.get_attribute("data-chunks") or 0) > 1, "the solution differs in every hole"
    assert page.get_attribute("#diff-solution", "aria-pressed") == "true"
    page.click("#diff-close")
    set_source(page, TILED.template_source)
    page.keyboard.press("Alt+Shift+KeyD")
    expect(summary).to_have_text("Your code is exactly the template.")


def test_run_history_keeps_results_and_compares_two_runs(page, live_server):
    goto(page, live_server, "/?scratch")
    first = SCRATCH_PRINTS_MARKUP.replace("x * 2", "x * 11")
    set_source(page, first)
    assert run_and_wait(page) == "ran"
    set_source(
        page,
        "import numpy as np\n\ndef make_inputs(seed):\n    return (np.ones(4),)\n\ndef kernel(x):\n    raise IndexError('row 9 of 4')\n",
    )
    assert run_and_wait(page) == "error"
    page.click("#tab-history")
    runs = page.locator("#history-list .history-run")
    expect(runs).to_have_count(2)
    assert [runs.nth(i).get_attribute("data-status") for i in range(2)] == ["error", "ran"]
    for i in range(2):
        runs.nth(i).locator("input[type=checkbox]").check()
    table = page.locator("#compare-table")
    expect(table).to_be_visible()
    status = table.locator("tr[data-row='Status'] td")
    assert [status.nth(0).inner_text(), status.nth(1).inner_text()] == ["ran", "error"], (
        "older run on the left"
    )
    assert "IndexError" in table.locator("tr[data-row='Error'] td").nth(1).inner_text()
    assert "differ" in (table.locator("tr[data-row='Status']").get_attribute("class") or "")
    page.reload()  # kept in this browser
    page.wait_for_selector("html[data-ready='1']")
    page.click("#tab-history")
    page.locator("#history-list .history-run[data-status='ran'] .history-open").click()
    assert source(page) == first
    expect(page.locator("#status")).to_have_text("ran")
    assert "From your run history" in page.inner_text("#snapshot-note")


def test_download_and_upload_the_py(page, live_server, tmp_path: Path):
    goto(page, live_server, "/?entry=tiled_matmul")
    with page.expect_download() as info:
        page.click("#download")
    download = info.value
    assert download.suggested_filename == "tiled_matmul.py"
    assert Path(download.path()).read_text() == TILED.template_source
    mine = tmp_path / "mine.py"
    mine.write_text("# my kernel from disk\n")
    page.set_input_files("#upload", str(mine))
    expect(page.locator("#load-notice")).to_contain_text("mine.py from your computer")
    assert source(page) == "# my kernel from disk\n"
    page.keyboard.press("Control+z")  # one undoable step, like any load
    assert source(page) == TILED.template_source


def test_back_and_forward_between_entries_and_lesson_steps(page, live_server):
    goto(page, live_server, "/?entry=tiled_matmul")
    page.click("#catalog-button")
    page.click("#catalog-dialog .entry-card[data-slug='ring_all_gather']")
    expect(page.locator("#entry-title")).to_have_text(CATALOG.get("ring_all_gather").title)
    assert page.url.endswith("/?entry=ring_all_gather")
    page.go_back()
    expect(page.locator("#entry-title")).to_have_text(TILED.title)
    assert page.url.endswith("/?entry=tiled_matmul")
    page.go_forward()
    expect(page.locator("#entry-title")).to_have_text(CATALOG.get("ring_all_gather").title)

    steps = [{"source": f"# step {k}\n", "note": f"Step {k}."} for k in (1, 2, 3)]
    lesson = httpx.post(f"{live_server.url}/api/lessons", json={"title": "Three", "steps": steps}).json()
    goto(page, live_server, lesson["url"])
    page.click("#lesson-next")
    page.click("#lesson-next")
    expect(page.locator("#lesson-position")).to_have_attribute("data-step", "3")
    page.go_back()
    expect(page.locator("#lesson-position")).to_have_attribute("data-step", "2")
    assert source(page) == "# step 2\n" and page.url.endswith("step=2")
    page.go_back()
    expect(page.locator("#lesson-position")).to_have_attribute("data-step", "1")
    page.go_back()  # out of the lesson, back to the entry before it
    expect(page.locator("#entry-title")).to_have_text(CATALOG.get("ring_all_gather").title)
    assert page.locator("#lesson-bar").is_hidden()


def test_shortcut_sheet_opens_on_question_mark(page, live_server):
    goto(page, live_server, "/?entry=tiled_matmul")
    page.locator("#tab-results").focus()
    page.keyboard.press("?")
    sheet = page.locator("#shortcuts-dialog")
    expect(sheet).to_be_visible()
    assert "Run the kernel" in sheet.inner_text() and "Alt + → / Alt + ←" in sheet.inner_text()
    page.keyboard.press("Escape")
    expect(sheet).to_be_hidden()
    page.locator("#editor .cm-content").click()
    page.keyboard.type("?")  # typed into the editor, not a shortcut there
    expect(sheet).to_be_hidden()


def test_the_link_shown_is_the_newest_shares_whichever_answers_last(page, live_server):
    """Share, then tick "with its result" at once: two shares in flight. The plain one, answered last,
    must not put its link under the "with its result" label (it once did, one CI run in two)."""
    goto(page, live_server, "/?scratch")
    set_source(page, SCRATCH_PRINTS_MARKUP.replace("x * 2", "x * 17"))
    assert run_and_wait(page) == "ran"
    page.click("#share")  # the panel is open: its Share button and its box can be used at once
    expect(page.locator("#share-url")).not_to_have_value("")
    held = []

    def hold_plain_shares(route):
        if "run" in (route.request.post_data_json or {}):
            route.continue_()
        else:
            held.append(route)

    page.route("**/api/shares", hold_plain_shares)
    page.click("#share")
    page.check("#share-with-result")
    url = page.locator("#share-url")
    expect(url).to_have_attribute("data-with-result", "1")
    with_result = url.input_value()
    assert len(held) == 1
    with page.expect_response(lambda r: r.request.method == "POST" and "/api/shares" in r.url):
        held[0].continue_()
    page.evaluate("() => new Promise((done) => setTimeout(done, 100))")  # the page has read the answer
    assert url.input_value() == with_result and url.get_attribute("data-with-result") == "1"


def test_a_share_carries_its_result_until_it_is_run_again(page, open_page, live_server):
    goto(page, live_server, "/?scratch")
    set_source(page, SCRATCH_PRINTS_MARKUP.replace("x * 2", "x * 13"))
    page.click("#share")
    expect(page.locator("#share-url")).not_to_have_value("")
    assert page.is_disabled("#share-with-result"), "no run of this code yet"
    assert run_and_wait(page) == "ran"
    page.click("#share")
    page.check("#share-with-result")
    expect(page.locator("#share-url")).to_have_attribute("data-with-result", "1")
    url = page.input_value("#share-url")

    reader = open_page()
    reader.goto(url)
    reader.wait_for_selector("html[data-ready='1']")
    note = reader.inner_text("#snapshot-note")
    assert note.startswith("Result from 20") and ", jax 0.12.0.1" in note
    assert reader.text_content("#status") == "ran" and "<img src=x" in reader.inner_text("#stdout")
    assert run_and_wait(reader) == "ran"
    assert reader.locator("#snapshot-note").count() == 0
