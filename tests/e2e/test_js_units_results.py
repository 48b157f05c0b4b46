"""The page's pure functions that show versions and per-case results, as tables in the real browser.

The same way as `tests/e2e/test_js_units.py` (its `js` fixture, from tests/e2e/conftest.py): each call
imports the module from /static/js/ in a page of the playground and returns the value to Python.
"""

from __future__ import annotations

import pytest

# -- runtimes.js and matrix.js: versions on the page ----------------------------------------------

ENTRY_RUNTIMES = {
    "passes everywhere": ({"0.11.2": {"status": "passed"}}, "Worked solution passes on jax 0.11.2."),
    "fails on the oldest": (
        {"0.10.2": {"status": "error"}, "0.12.0.1": {"status": "passed"}},
        "Worked solution passes on jax 0.12.0.1; not on 0.10.2 (error).",
    ),
    "no record says nothing": (None, ""),
}


@pytest.mark.parametrize("rows, text", ENTRY_RUNTIMES.values(), ids=list(ENTRY_RUNTIMES))
def test_entry_runtimes_text(js, rows, text):
    assert js("runtimes.js", "return m.entryRuntimesText(arg);", rows) == text


SHARE_RUNTIME = {
    "made on today's JAX says nothing": ({"runtime": "0.12.0.1", "run_on": "0.12.0.1"}, ""),
    "made on an older one runs there": (
        {"runtime": "0.10.2", "run_on": "0.10.2"},
        "This link was made on jax 0.10.2; it runs there (today's JAX is 0.12.0.1).",
    ),
    "made on one not installed: the server's note": (
        {"runtime": "0.9.0", "run_on": "0.10.2", "runtime_note": "opens on the nearest, jax 0.10.2."},
        "opens on the nearest, jax 0.10.2.",
    ),
    "an old share without a runtime says nothing": ({"runtime": None, "run_on": "0.12.0.1"}, ""),
    "an old share with a chip since removed: the server's note": (
        {
            "runtime": None,
            "run_on": "0.12.0.1",
            "runtime_note": "saved with settings this playground no longer has",
        },
        "saved with settings this playground no longer has",
    ),
}


@pytest.mark.parametrize("shared, text", SHARE_RUNTIME.values(), ids=list(SHARE_RUNTIME))
def test_share_runtime_text(js, shared, text):
    assert js("runtimes.js", "return m.shareRuntimeText(arg, '0.12.0.1');", shared) == text


def matrix_row(runtime: str, status: str, summary: str = "") -> dict:
    return {"runtime": runtime, "state": "done", "status": status, "summary": summary, "unavailable": [],
            "compiler": {"v5p": status == "passed"}}  # fmt: skip


def test_matrix_table_marks_the_first_change_and_shows_markup_as_text(js):
    matrix = {
        "rows": [
            matrix_row("0.10.2", "error", "<img src=x onerror=alert(1)>"),
            matrix_row("0.11.2", "passed"),
        ],
        "changes": [{"older": "0.10.2", "newer": "0.11.2", "text": "fails up to 0.10.2, passes from 0.11.2"}],
    }
    shown = js(
        "matrix.js",
        """
        const table = m.matrixTable(arg);
        return { rows: [...table.tBodies[0].rows].map((r) => [r.dataset.runtime, r.dataset.change, r.cells[1].textContent]),
                 head: [...table.tHead.rows[0].cells].map((c) => c.textContent),
                 notes: table.tBodies[0].rows[0].lastChild.textContent, markup: table.querySelectorAll("img").length };
        """,
        matrix,
    )
    assert shown["rows"] == [["0.10.2", "0", "error"], ["0.11.2", "1", "passed"]]
    assert shown["head"][-2:] == ["compiler v5p", "notes"]
    assert shown["notes"] == "1 note<img src=x onerror=alert(1)>"
    assert shown["markup"] == 0


def test_diff_section_colours_the_ir_diff_and_shows_markup_as_text(js):
    diff = {
        "older": "0.11.2", "newer": "0.12.0.1", "mosaic_note": "differs in 2 lines", "mosaic_truncated": False,
        "fields": [{"name": "status", "older": "passed", "newer": "<b>x</b>", "changed": True}],
        "mosaic_diff": "--- jax 0.11.2\n+++ jax 0.12.0.1\n@@ -1 +1 @@\n-  %0 = old\n+  %0 = <new>",
    }  # fmt: skip
    shown = js(
        "matrix.js",
        """
        const el = m.diffSection(arg);
        return { kinds: [...el.querySelectorAll("#ir-diff span")].map((s) => s.className),
                 cells: [...el.querySelectorAll("#diff-table tbody td")].map((c) => c.textContent),
                 changed: el.querySelector("#diff-table tbody tr").dataset.changed,
                 note: el.querySelector("#ir-diff-note").textContent, markup: el.querySelectorAll("b").length };
        """,
        diff,
    )
    assert shown["kinds"] == ["diff-file", "diff-file", "diff-hunk", "diff-del", "diff-add"]
    assert shown["cells"] == ["passed", "<b>x</b>"]
    assert shown["changed"] == "1"
    assert shown["note"] == "Mosaic IR: differs in 2 lines"
    assert shown["markup"] == 0


# -- cases.js: one row per case and output ------------------------------------------------------

CASE_ROWS = {
    "an output's own tolerance wins over the case's": (
        {"tolerance": {"rtol": 0.001, "atol": 0.001}, "outputs": [{"tolerance": {"rtol": 0.1, "atol": 0.2}}]},
        ("0.1 / 0.2", ""),
    ),
    "without its own, an output shows the case's": (
        {"tolerance": {"rtol": 0.001, "atol": 0.002}, "outputs": [{}]},
        ("0.001 / 0.002", ""),
    ),
    "where the non-finite values sit is said under the mismatches": (
        {"tolerance": None, "outputs": [{"nonfinite_where": "NaN in rows 192–255 (all columns)"}]},
        ("—", "NaN in rows 192–255 (all columns)"),
    ),
}


@pytest.mark.parametrize(("case", "expected"), CASE_ROWS.values(), ids=CASE_ROWS.keys())
def test_case_rows(js, case, expected):
    output = {
        "name": "out",
        "shape": [8, 128],
        "dtype": "float32",
        "passed": False,
        "max_abs_error": 1.0,
        "mismatch_count": 3,
        "total": 1024,
        **case["outputs"][0],
    }
    row = js(
        "cases.js",
        "const el = m.casesSection([arg]); const tr = el.querySelector('#cases tbody tr');"
        "const where = tr.querySelector('.nonfinite');"
        "return [tr.querySelector('.tol').textContent, where ? where.textContent : ''];",
        {"name": "c", "passed": False, "tolerance": case["tolerance"], "outputs": [output]},
    )
    assert tuple(row) == expected


# -- sidebyside.js: mode `both` on a TPU server --------------------------------------------------


def test_the_chip_and_the_simulator_side_by_side(js):
    both = {
        "chip_status": "passed",
        "chip_summary": "passed: 2/2 cases match the reference",
        "simulated_status": "mismatch",
        "simulated_summary": "<b>mismatch</b>: 1/2 cases",
        "agree": False,
        "cases": [
            {
                "name": "c0",
                "outputs": [{"name": "out", "max_abs_error": 0.25, "mismatch_count": 3, "total": 1024}],
            }
        ],
        "largest": "largest difference 0.25 in out of case c0 at (2, 5): chip 0.0, simulated 0.25",
        "largest_abs_difference": 0.25,
        "estimated_seconds": 0.002,
        "measured_seconds": 0.0025,
    }
    shown = js(
        "sidebyside.js",
        "const el = m.sideBySideSection(arg); return [el.querySelector('#both-verdict').textContent,"
        " [...el.querySelectorAll('#both tr')].map((r) => r.textContent), el.querySelector('#both-cases tbody').textContent,"
        " el.querySelectorAll('b').length, m.sideBySideSection(null)];",
        both,
    )
    verdict, rows, cases, tags, absent = shown
    assert verdict == "The simulator's verdict is not the chip's."
    assert rows[0].startswith("On the chip") and "passed: 2/2 cases" in rows[0]
    assert "<b>mismatch</b>: 1/2 cases" in rows[1] and tags == 0  # the run's text is text, never markup
    assert rows[2] == "Outputs" + both["largest"]
    assert rows[3] == "Timemeasured on the chip 2.5 ms; the model's estimate 2 ms (estimate / measured 0.80)"
    assert cases == "c0out0.253 of 1,024" and absent is None


def test_a_server_without_a_tpu_does_not_offer_both_runs(js):
    # The switch shows on a TPU server only (`/api/version` mode "tpu"; tests/tpu asks for both there).
    shown = "const el = document.querySelector('#run-both-label'); return [el.hidden, el.getClientRects().length];"
    assert js("dom.js", shown) == [True, 0]  # hidden, and not drawn (a `.toolbar label` is inline-flex)


def test_a_result_with_both_verdicts_shows_them_once_its_module_has_loaded(js):
    # sidebyside.js is not part of the first page load: renderResult imports it for a result that needs it.
    both = {"chip_status": "passed", "chip_summary": "passed", "simulated_status": "passed",
            "simulated_summary": "passed", "agree": True, "cases": [], "largest": ""}  # fmt: skip
    shown = js(
        "results.js",
        "const root = document.createElement('div');"
        " m.renderResult(root, {status: 'passed', summary: 'passed', both: arg}, {onGoToLine: () => {}});"
        " for (let i = 0; i < 50 && !root.querySelector('#both-section'); i++) await new Promise((r) => setTimeout(r, 20));"
        " return root.querySelector('#both-verdict')?.textContent;",
        both,
    )
    assert shown == "The simulator gives the chip's verdict."
