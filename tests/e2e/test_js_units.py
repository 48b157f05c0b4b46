"""The page's pure functions, as tables, run in the real browser on the modules the live server serves.

No Node: each call imports the module from /static/js/ in a page of the playground (so under its
Content-Security-Policy) and returns the value to Python. Expected values are what a user would
read: a line number marked in the editor, a link that is or is not followed, a notice's text.
"""

from __future__ import annotations

import dataclasses
import typing

import pytest

from sandbox.protocol import RunResult
from sandbox.protocol.chips import CHIP_TABLE

# -- timeline.js: pairDmas -----------------------------------------------------------------------


def start(t: float, *ids: int) -> dict:
    return {"kind": "dma_start", "t": t, "dma": list(ids)}


def wait(t: float, *ids: int) -> dict:
    return {"kind": "dma_wait", "t": t, "dma": list(ids)}


PAIR_DMAS = {
    "a wait completes the DMA it names": ([start(0, 1), wait(5, 1)], [(1, 5)]),
    "the first wait naming a DMA completes it": ([start(0, 1), wait(3, 1), wait(7, 1)], [(1, 3)]),
    "a DMA nobody waits for has no end": ([start(0, 1), start(1, 2), wait(4, 2)], [(1, None), (2, 4)]),
    "one wait completes several DMAs": ([start(0, 1), start(1, 2), wait(6, 1, 2)], [(1, 6), (2, 6)]),
    "semaphores and steps are not DMAs": (
        [{"kind": "sem_signal", "t": 0}, start(1, 9), {"kind": "grid_step", "t": 2}, wait(3, 9)],
        [(9, 3)],
    ),
    "no events, no DMAs": ([], []),
}


@pytest.mark.parametrize("events, expected", PAIR_DMAS.values(), ids=list(PAIR_DMAS))
def test_pair_dmas(js, events, expected):
    pairs = js("timeline.js", "return m.pairDmas(arg);", events)
    assert [(p["start"]["dma"][0], p["wait"]["t"] if p["wait"] else None) for p in pairs] == expected


# -- gridview.js: parseRegion --------------------------------------------------------------------

PARSE_REGION = {
    "a 2-D block": ("[0:128, 128:256]", [256, 256], [[0, 128], [128, 256]]),
    "an index picks one row": ("[1, 0:8, 0:128]", [4, 8, 128], [[1, 2], [0, 8], [0, 128]]),
    "open ends run to the shape's": ("[:, 64:]", [128, 256], [[0, 128], [64, 256]]),
    "an ellipsis is the whole operand": ("[...]", [8, 128], [[0, 8], [0, 128]]),
    "no region is the whole operand": ("", [8, 128], [[0, 8], [0, 128]]),
    "a missing region is the whole operand": (None, [16], [[0, 16]]),
}


@pytest.mark.parametrize("text, shape, expected", PARSE_REGION.values(), ids=list(PARSE_REGION))
def test_parse_region(js, text, shape, expected):
    assert (
        js("gridview.js", "return m.parseRegion(arg.text, arg.shape);", {"text": text, "shape": shape})
        == expected
    )


# -- roofline.js: lowerBound ---------------------------------------------------------------------

KERNELS = {
    # f32 256^3 matmul: 43 FLOP/byte, under every chip's ridge.
    "small f32 matmul": (2 * 256**3, 3 * 256 * 256 * 4, "memory"),
    # bf16 8192^3 matmul: 2731 FLOP/byte, over every chip's ridge.
    "large bf16 matmul": (2 * 8192**3, 3 * 8192 * 8192 * 2, "compute"),
}


@pytest.mark.parametrize("chip", CHIP_TABLE.values(), ids=list(CHIP_TABLE))
@pytest.mark.parametrize("flop, byte, bound", KERNELS.values(), ids=list(KERNELS))
def test_lower_bound_is_the_chip_tables_roofline(js, chip, flop, byte, bound):
    got = js(
        "roofline.js",
        "return m.lowerBound(arg.chip, arg.flop, arg.byte);",
        {"chip": dataclasses.asdict(chip), "flop": flop, "byte": byte},
    )
    assert got["seconds"] == pytest.approx(chip.roofline_seconds(flop, byte))
    assert got["bound"] == bound


# -- marks.js: sourceMarks -----------------------------------------------------------------------


def traceback(*frames: tuple[str, int]) -> str:
    lines = ["Traceback (most recent call last):"]
    lines += [f'  File "{file}", line {line}, in f' for file, line in frames]
    return "\n".join(lines)


def race_case(*accesses: tuple[str, int, str]) -> dict:
    return {
        "name": "small",
        "races": [
            {
                "summary": "data race",
                "accesses": [
                    {
                        "file": file,
                        "line": line,
                        "kind": kind,
                        "buffer": "x_vmem",
                        "region": "[0:8]",
                        "by": "a DMA",
                    }
                    for file, line, kind in accesses
                ],
            }
        ],
    }


SOURCE_MARKS = {
    "a passed run marks nothing": ({"status": "passed", "cases": [{"name": "small", "passed": True}]}, []),
    "a syntax error marks its line": (
        {
            "error": {
                "type": "SyntaxError",
                "message": "'(' was never closed",
                "traceback": traceback(("kernel.py", 5)),
            }
        },
        [(5, "error", "SyntaxError: '(' was never closed")],
    ),
    "an error marks the innermost line of the user's file": (
        {
            "error": {
                "type": "ValueError",
                "message": "bad block",
                "traceback": traceback(
                    ("harness.py", 80), ("kernel.py", 6), ("kernel.py", 2), ("jax/_src/core.py", 900)
                ),
            }
        },
        [(2, "error", "ValueError: bad block")],
    ),
    "an exercise's hole marks the line that called todo()": (
        {
            "error": {
                "type": "NotImplementedError",
                "message": "TODO at line 47: B's index map",
                "traceback": 'Traceback (most recent call last):\n  File "kernel.py", line 47, in <lambda>\n'
                '  File "kernel.py", line 25, in todo\n',
            }
        },
        [(47, "error", "NotImplementedError: TODO at line 47: B's index map")],
    ),
    "an error only in library frames marks nothing": (
        {
            "error": {
                "type": "RuntimeError",
                "message": "x",
                "line": 3,
                "traceback": traceback(("jax/_src/core.py", 9)),
            }
        },
        [],
    ),
    "an error without a traceback marks its own line": (
        {"error": {"type": "TimeoutError", "message": "too slow", "line": 7}},
        [(7, "error", "TimeoutError: too slow")],
    ),
    "a kernel the TPU compiler rejects marks the rejected line": (
        {
            "lowering": {
                "lowers": False,
                "error": {"line": 12, "message": "block shape not divisible by (8, 128)"},
            }
        },
        [(12, "error", "rejected by the TPU compiler: block shape not divisible by (8, 128)")],
    ),
    "a kernel that lowers marks nothing": ({"lowering": {"lowers": True, "error": None}}, []),
    "racing accesses mark their lines in the user's file only": (
        {
            "cases": [
                race_case(
                    ("kernel.py", 20, "write"), ("pallas_call.py", 300, "read"), ("kernel.py", 25, "read")
                )
            ]
        },
        [
            (20, "race", "data race: write of x_vmem [0:8] by a DMA"),
            (25, "race", "data race: read of x_vmem [0:8] by a DMA"),
        ],
    ),
}


@pytest.mark.parametrize("result, expected", SOURCE_MARKS.values(), ids=list(SOURCE_MARKS))
def test_source_marks(js, result, expected):
    marks = js("marks.js", "return m.sourceMarks(arg);", result)
    assert [(mark["line"], mark["kind"], mark["message"]) for mark in marks] == expected


# -- run.js: runRequest, withCase, liveResult ----------------------------------------------------

EDITOR = {
    "source": "def matmul(x, y): ...",
    "entry": "tiled_matmul",
    "chip": "v6e",
    "options": {"detect_races": True},
}
REQUEST = {**EDITOR, "mode": "auto"}
RUN_REQUEST = {
    "the editor's state": ({}, REQUEST),
    "check on all chips": ({"lowerChips": list(CHIP_TABLE)}, {**REQUEST, "lower_chips": list(CHIP_TABLE)}),
    "no chips to check adds nothing": ({"lowerChips": []}, REQUEST),
    "run again for fresh timings": ({"fresh": True}, {**REQUEST, "fresh": True}),
    "on a chosen JAX version": ({"runtime": "0.11.2"}, {**REQUEST, "runtime": "0.11.2"}),
}


@pytest.mark.parametrize("extra, expected", RUN_REQUEST.values(), ids=list(RUN_REQUEST))
def test_run_request(js, extra, expected):
    body = js(
        "run.js",
        "return m.runRequest(arg.editor, arg.extra);",
        {"editor": {**EDITOR, "id": "share-id"}, "extra": extra},
    )
    assert body == expected


def case(name: str, index: int | None = None) -> dict:
    event = {"result": {"name": name, "passed": True}}
    return event if index is None else {**event, "index": index}


LIVE_CASES = {
    "in order": ([case("small", 0), case("large", 1)], ["small", "large"]),
    "out of order": ([case("large", 1), case("small", 0)], ["small", "large"]),
    "a gap waits for its case": ([case("large", 1)], ["large"]),
    "without an index, appended": ([case("small"), case("large")], ["small", "large"]),
    "a replayed case replaces itself": ([case("small", 0), case("small again", 0)], ["small again"]),
}


@pytest.mark.parametrize("events, shown", LIVE_CASES.values(), ids=list(LIVE_CASES))
def test_live_result_shows_the_cases_checked_so_far(js, events, shown):
    live = js("run.js", "return m.liveResult(arg.reduce(m.withCase, []));", events)
    assert live["status"] == "running" and live["summary"] == "Running…"
    assert [c["name"] for c in live["cases"]] == shown


# -- notices.js: problemText, versionDrift, Notices ----------------------------------------------

PROBLEM_TEXT = {
    "with when to try again": (
        {"title": "Rate limited", "detail": "30 runs per minute", "retryAfter": "12"},
        "The run was refused: Rate limited: 30 runs per minute (try again in 12 s)",
    ),
    "without": (
        {"title": "Source too large", "detail": "at most 65,536 bytes", "retryAfter": None},
        "The run was refused: Source too large: at most 65,536 bytes",
    ),
}


@pytest.mark.parametrize("error, text", PROBLEM_TEXT.values(), ids=list(PROBLEM_TEXT))
def test_problem_text(js, error, text):
    assert js("notices.js", "return m.problemText(arg, 'The run was refused');", error) == text


NOW = {"jax": "0.12.0.1", "jaxlib": "0.12.0.1", "python": "3.12.1"}
VERSION_DRIFT = {
    "same versions": ({"jax": "0.12.0.1", "jaxlib": "0.12.0.1"}, NOW, None),
    "older jax and jaxlib": (
        {"jax": "0.11.2", "jaxlib": "0.11.2"},
        NOW,
        {"then": "jax 0.11.2, jaxlib 0.11.2", "now": "jax 0.12.0.1, jaxlib 0.12.0.1"},
    ),
    "only jax differs": (
        {"jax": "0.11.2", "jaxlib": "0.12.0.1"},
        NOW,
        {"then": "jax 0.11.2", "now": "jax 0.12.0.1"},
    ),
    "another Python does not matter": ({**NOW, "python": "3.13.0"}, NOW, None),
    "a link without versions": (None, NOW, None),
    "a server that did not say": ({"jax": "0.11.2"}, None, None),
}


@pytest.mark.parametrize("then, now, expected", VERSION_DRIFT.values(), ids=list(VERSION_DRIFT))
def test_version_drift(js, then, now, expected):
    assert (
        js("notices.js", "return m.versionDrift(arg.then, arg.now);", {"then": then, "now": now}) == expected
    )


def test_notices_show_markup_as_text_and_keep_one_per_id(js):
    shown = js(
        "notices.js",
        """
        const root = document.createElement("div");
        const notices = new m.Notices(root);
        notices.show("warning", "<img src=x onerror=alert(1)>", "markup");
        notices.show("info", "Loaded the template.", "load-notice");
        notices.show("info", "Loaded the worked solution.", "load-notice");
        notices.problem({ title: "Queue full", detail: "try later", retryAfter: "5" }, "The run was refused");
        const stacked = [...root.children].map((el) => [el.id, el.dataset.kind, el.textContent]);
        notices.clearProblem();
        const single = new m.Notices(document.createElement("div"), { single: true });
        single.show("warning", "<b>first</b>");
        single.show("error", "second");
        return { stacked, left: root.children.length, single: [...single.root.children].map((el) => el.textContent),
                 markup: root.querySelectorAll("img").length };
        """,
    )
    assert shown["stacked"] == [
        ["markup", "warning", "<img src=x onerror=alert(1)>✕"],
        ["load-notice", "info", "Loaded the worked solution.✕"],
        ["request-error", "error", "The run was refused: Queue full: try later (try again in 5 s)✕"],
    ]
    assert shown["left"] == 2
    assert shown["single"] == ["second"]
    assert shown["markup"] == 0


# -- results.js: the RunResult fields it knows ---------------------------------------------------


def test_results_view_knows_exactly_the_run_result_fields(js):
    fields = js("results.js", "return m.RESULT_FIELDS;")
    assert sorted(fields) == sorted(f.name for f in dataclasses.fields(RunResult))
    assert len(set(fields)) == len(fields)


def test_results_view_knows_exactly_the_case_result_fields(js):
    (case_type, _) = typing.get_args(typing.get_type_hints(RunResult)["cases"])
    fields = js("results.js", "return m.CASE_FIELDS;")
    assert sorted(fields) == sorted(f.name for f in dataclasses.fields(case_type))
    assert len(set(fields)) == len(fields)


# -- runstatus.js: the live events the page did not listen for before ----------------------------

RUN_STATUS = {
    "live step counts while the kernel runs": (
        "progress",
        {"grid_steps": 1234, "dmas": 9},
        "Running: 1,234 grid steps…",
    ),
    "progress before any grid step": ("progress", {"grid_steps": 0}, "Running…"),
    "the compiler accepts the kernel": (
        "lowering",
        {"check": {"chip": "v5e", "lowers": True}},
        "TPU compiler checked; finishing…",
    ),
    "the compiler rejects the kernel": (
        "lowering",
        {"check": {"chip": "v5e", "lowers": False}},
        "TPU compiler rejects it; finishing…",
    ),
}


@pytest.mark.parametrize(("kind", "data", "text"), RUN_STATUS.values(), ids=list(RUN_STATUS))
def test_run_status_line_shows_progress_and_the_compilers_verdict(js, kind, data, text):
    assert (
        js("runstatus.js", "return m.runStatusText(arg.kind, arg.data);", {"kind": kind, "data": data})
        == text
    )
