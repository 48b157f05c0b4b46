"""classboard.js in the browser: a class board says whose time each row is (the host's measurement on a
chip, or the estimate a kernel's process reported), and shows nicknames as text."""

from __future__ import annotations


def test_a_board_says_which_times_the_host_measured_and_which_a_process_reported(js):
    rows = [
        {
            "rank": 1,
            "name": "ada",
            "seconds": 2e-5,
            "basis": "measured",
            "verdict": "checked",
            "reported": "by the host",
        },
        {
            "rank": 2,
            "name": "<b>eve</b>",
            "seconds": 3e-5,
            "basis": "estimate",
            "verdict": "checked",
            "reported": "by it",
        },
    ]
    shown = js(
        "classboard.js",
        """
        const table = m.boardTable({ step: 2, chip: "v5e", hidden: false, rows: arg });
        return { title: table.querySelector("h3").textContent,
                 badges: [...table.querySelectorAll(".badge")].map((b) => b.textContent),
                 names: [...table.querySelectorAll("tbody th")].map((th) => th.textContent),
                 markup: table.querySelectorAll("b").length,
                 measured: m.boardTable({ step: 2, chip: "v5e", hidden: false, rows: arg.slice(0, 1) })
                   .querySelector("h3").textContent };
        """,
        rows,
    )
    assert shown["badges"] == ["measured by the host", "reported"]
    assert shown["title"] == "Class board, step 2: on v5e, measured and estimated"
    assert shown["measured"] == "Class board, step 2: measured on a v5e by the host"
    assert shown["names"] == ["ada", "<b>eve</b>"] and shown["markup"] == 0  # nicknames are text
