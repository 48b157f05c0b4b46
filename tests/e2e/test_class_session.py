"""A class session in a real browser: a teacher's grid at /t/{id}, one student joining in a browser at
/c/{code} and running step 1, and 29 more students (HTTP clients with their own tokens, all from this one
address) making the same planted mistake on step 2: every one gets a result, the grid shows each status
within 2 s, the room's common mistake is grouped, and the CSV matches the grid."""

from __future__ import annotations

import csv
import io
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from playwright.sync_api import expect

from sandbox.catalog.entries import load_catalog
from tests.e2e.test_playground import goto, run_and_wait
from tests.e2e.test_projector_phone import screenshot

TILED = load_catalog().get("tiled_matmul")
STUCK_K = next(w for w in TILED.wrong if w.name == "stuck_k_index_map")
STEPS = [
    {"source": TILED.solution_source, "entry": "tiled_matmul", "chip": "v5e", "note": "Run it."},
    {"source": STUCK_K.source, "entry": "tiled_matmul", "chip": "v5e", "note": "Find the wrong index map."},
]
GRID_SECONDS = 2.0


def student_run(url: str, name: str, code: str) -> tuple[str, str]:
    """One simulated student: join, run step 2 as given, wait for the result; (name, status)."""
    with httpx.Client(base_url=url, timeout=120) as http:
        token = http.post(f"/api/classes/{code}/join", json={"name": name}).json()["student_token"]
        run = {k: STEPS[1][k] for k in ("source", "entry", "chip")}
        created = http.post("/api/runs", json={**run, "class_token": token, "step": 2})
        assert created.status_code == 201, created.text
        while (state := http.get(created.json()["url"]).json())["state"] != "done":
            time.sleep(0.2)
        return name, state["result"]["status"]


def cell(page, name: str, step: int):
    return page.locator(f"#teacher-grid tr:has(th:text-is('{name}')) td[data-step='{step}']")


def test_a_teacher_sees_a_room_of_thirty_from_one_address(open_page, live_server):
    lesson = httpx.post(f"{live_server.url}/api/lessons", json={"title": "Tiles", "steps": STEPS}).json()
    room = httpx.post(f"{live_server.url}/api/classes", json={"lesson": lesson["id"]}).json()
    teacher = open_page()
    teacher.goto(f"{live_server.url}{room['teacher_url']}#token={room['teacher_token']}")
    expect(teacher.locator("#teacher-code")).to_have_text(room["code"])
    assert "token" not in teacher.url, "the teacher token leaves the address bar"

    student = open_page()
    goto(student, live_server, room["join_url"])  # the join page has no editor: wait for its form
    student.fill("#join-name", "ada")
    student.click("#join-button")
    student.wait_for_selector("html[data-ready='1'] #lesson-class")
    assert student.inner_text("#lesson-class").startswith(f"Class {room['code']} · ada")
    assert run_and_wait(student) == "passed"
    seen = time.monotonic()
    expect(cell(teacher, "ada", 1)).to_have_attribute("data-status", "passed", timeout=GRID_SECONDS * 1000)
    assert time.monotonic() - seen <= GRID_SECONDS

    names = [f"student{i:02}" for i in range(1, 30)]
    first = student_run(live_server.url, names[0], room["code"])  # the planted mistake runs once...
    with ThreadPoolExecutor(8) as pool:  # ...and the room's identical runs are answered from the cache
        results = [first, *pool.map(lambda n: student_run(live_server.url, n, room["code"]), names[1:])]
    assert dict(results) == dict.fromkeys(names, "mismatch")
    finished = time.monotonic()
    for name in (names[0], names[-1]):
        expect(cell(teacher, name, 2)).to_have_attribute(
            "data-status", "mismatch", timeout=GRID_SECONDS * 1000
        )
    assert time.monotonic() - finished <= GRID_SECONDS
    assert cell(teacher, "ada", 2).get_attribute("data-status") == "none"
    headline = cell(teacher, names[0], 2).get_attribute("title")
    assert headline and "mismatch" in headline.lower()
    common = teacher.locator("#teacher-common li").first
    expect(common).to_contain_text("29 students on step 2")
    screenshot(teacher, "class-teacher.png")
    assert headline in common.inner_text()

    with teacher.expect_download() as download:
        teacher.click("#teacher-csv")
    rows = list(csv.reader(io.StringIO(download.value.path().read_text())))
    assert rows[0] == ["student", "step 1 status", "step 1 headline", "step 2 status", "step 2 headline"]
    by_name = {row[0]: row for row in rows[1:]}
    assert len(by_name) == 30 and by_name["ada"][1:4:2] == ["passed", "not started"]
    assert all(by_name[n][3] == "mismatch" and by_name[n][4] == headline for n in names)

    teacher.on("dialog", lambda dialog: dialog.accept())
    teacher.locator(f"#teacher-grid tr:has(th:text-is('{names[-1]}')) .remove-student").click()
    expect(teacher.locator("#teacher-grid tbody tr")).to_have_count(29, timeout=GRID_SECONDS * 1000)


WAITS = {
    "no estimate": ({"position": 1, "queued": 1}, "Queued (1 of 1)"),
    "starts at once": ({"position": 1, "queued": 1, "eta_seconds": 0.0}, "Queued (1 of 1)"),
    "seconds": ({"position": 17, "queued": 17, "eta_seconds": 44.4}, "Queued (17 of 17), about 44 s to wait"),
    "minutes": (
        {"position": 40, "queued": 60, "eta_seconds": 150.0},
        "Queued (40 of 60), about 3 min to wait",
    ),
}


@pytest.mark.parametrize(("data", "text"), WAITS.values(), ids=list(WAITS))
def test_a_queued_run_shows_its_estimated_wait(js, data, text):
    assert js("runstatus.js", "return m.runStatusText('queued', arg);", data) == text
