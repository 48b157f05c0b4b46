"""A class in real Chromium, on a server with the fake sandbox (the kernels are not the point here):
a teacher's live page at /t/{id} and 30 students from this one address, 2 of them browsers that
joined at /c/{code} and 28 HTTP clients with tokens of their own. Every student gets a result, the
teacher's grid shows each one's status within 2 s of it (over SSE, no polling), the room's planted
mistake is grouped, follow-me moves the browsers that follow (not the one that opted out), a raised
hand, an edit and a rename reach the other side, the CSV matches the grid, and the projector layout
(`?present=1`) stays live without the editing controls; on a phone the class controls are big enough."""

from __future__ import annotations

import csv
import io
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from playwright.sync_api import expect

from server.app import create_app
from server.settings import Settings
from tests.api.test_class_live import REFERENCE, ClassFake
from tests.e2e.test_class_day_bugs import PHONE, small_controls
from tests.e2e.test_playground import run_and_wait
from tests.e2e.test_projector_phone import screenshot
from tests.live import serving

STEPS = [
    {"source": "ok" + REFERENCE, "chip": "v5e", "note": "Run it."},
    {"source": "wrong" + REFERENCE, "chip": "v5e", "note": "Find the mistake."},
]
GRID_SECONDS = 2.0
FINAL = ("passed", "mismatch", "error")
# Records, in the teacher's page, when each cell first showed a final status (the grid is redrawn
# whole on every view, so the observer rescans it).
WATCH_GRID = """() => {
  window.shownAt = {};
  const scan = () => document.querySelectorAll('#teacher-grid tbody tr').forEach((row) => {
    const name = row.querySelector('.student-name')?.textContent;
    row.querySelectorAll('td[data-step]').forEach((td) => {
      const key = `${name}/${td.dataset.step}`;
      if (FINAL.includes(td.dataset.status) && !(key in window.shownAt)) window.shownAt[key] = Date.now();
    });
  });
  new MutationObserver(scan).observe(document.querySelector('#teacher-grid'), {childList: true, subtree: true});
  scan();
}""".replace("FINAL", str(list(FINAL)))


@pytest.fixture(scope="module")
def fake_server(tmp_path_factory) -> Iterator[str]:
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("class"),
        slots=2,
        queue_size=64,
        rate_per_minute=0,
        store_saves_per_minute=0,
    )
    with serving(create_app(settings, backend=ClassFake())) as url:
        yield url


def student_run(url: str, code: str, name: str, source: str) -> tuple[str, str, float]:
    """One simulated student: join, run step 2, wait for the result: (name, status, when seen)."""
    with httpx.Client(base_url=url, timeout=30) as http:
        token = http.post(f"/api/classes/{code}/join", json={"name": name}).json()["student_token"]
        created = http.post(
            "/api/runs", json={"source": source, "chip": "v5e", "class_token": token, "step": 2}
        )
        assert created.status_code == 201, created.text
        while (state := http.get(created.json()["url"]).json())["state"] != "done":
            time.sleep(0.05)
        return name, state["result"]["status"], time.time()


def cell(page, name: str, step: int):
    return page.locator(f"#teacher-grid tr:has(.student-name:text-is('{name}')) td[data-step='{step}']")


def join_in_browser(page, url: str, room: dict, name: str) -> None:
    page.goto(url + room["join_url"])
    page.wait_for_selector("html[data-ready='1'] #join-name")
    page.fill("#join-name", name)
    page.click("#join-button")
    page.wait_for_selector("html[data-ready='1'] #lesson-class #class-hand")


def step_shown(page) -> str | None:
    return page.get_attribute("#lesson-position", "data-step")


def test_a_teacher_runs_a_live_room_of_thirty_from_one_address(open_page, fake_server):
    url = fake_server
    lesson = httpx.post(f"{url}/api/lessons", json={"title": "Tiles", "steps": STEPS}).json()
    room = httpx.post(f"{url}/api/classes", json={"lesson": lesson["id"]}).json()
    teacher = open_page()
    teacher.goto(f"{url}{room['teacher_url']}#token={room['teacher_token']}")
    expect(teacher.locator("#teacher-code")).to_have_text(room["code"])
    assert "token" not in teacher.url, "the teacher token leaves the address bar"
    teacher.evaluate(WATCH_GRID)

    browsers = {name: open_page() for name in ("ada", "cy")}
    for name, page in browsers.items():
        join_in_browser(page, url, room, name)
    assert browsers["ada"].inner_text("#lesson-class").startswith(f"Class {room['code']} · ada")
    browsers["cy"].uncheck("#class-follow")  # cy opts out of follow-me
    assert run_and_wait(browsers["ada"]) == "passed"
    ran_at = time.time()

    teacher.select_option("#teacher-follow", "2")  # follow me: everyone to step 2
    expect(browsers["ada"].locator("#lesson-position")).to_have_attribute(
        "data-step", "2", timeout=GRID_SECONDS * 1000
    )
    assert step_shown(browsers["cy"]) == "1", "an opted-out student stays where they are"

    browsers["ada"].evaluate(
        "() => window.playground.editor.setValue('edited' + window.playground.editor.getValue())"
    )
    expect(cell(teacher, "ada", 2)).to_have_attribute("data-status", "editing", timeout=GRID_SECONDS * 1000)
    browsers["cy"].click("#class-hand")
    expect(teacher.locator("#teacher-hands li")).to_have_text(
        ["cy (0 min) Answered"], timeout=GRID_SECONDS * 1000
    )
    expect(browsers["cy"].locator("#class-hand")).to_have_text("Lower hand (1 in line)")

    names = [f"student{i:02}" for i in range(1, 29)]
    sources = {n: ("wrong" if i else "ok") + REFERENCE for i, n in enumerate(names)}  # one gets it right
    with ThreadPoolExecutor(9) as pool:
        results = list(pool.map(lambda n: student_run(url, room["code"], n, sources[n]), names))
    assert {name: status for name, status, _ in results} == {
        n: "mismatch" if i else "passed" for i, n in enumerate(names)
    }

    expect(cell(teacher, names[-1], 2)).to_have_attribute(
        "data-status", "mismatch", timeout=GRID_SECONDS * 1000
    )
    time.sleep(0.3)  # the last views settle
    shown = teacher.evaluate("() => window.shownAt")
    lags = {name: shown[f"{name}/2"] / 1000 - at for name, _, at in results}
    lags["ada"] = shown["ada/1"] / 1000 - ran_at
    assert max(lags.values()) <= GRID_SECONDS, sorted(lags.items(), key=lambda kv: -kv[1])[:3]

    headline = cell(teacher, names[1], 2).get_attribute("title")
    assert headline and "mismatch" in headline.lower()
    common = teacher.locator("#teacher-common li").first
    expect(common).to_contain_text("27 students on step 2")
    assert headline in common.inner_text()

    teacher.once("dialog", lambda dialog: dialog.accept("Cyrus"))
    teacher.locator("#teacher-grid tr:has(.student-name:text-is('cy')) .rename-student").click()
    expect(browsers["cy"].locator("#lesson-class")).to_contain_text(
        "Class " + room["code"] + " · Cyrus", timeout=GRID_SECONDS * 1000
    )
    expect(teacher.locator("#teacher-hands li")).to_have_text(["Cyrus (0 min) Answered"])
    screenshot(teacher, "class-teacher.png")
    teacher.locator("#teacher-hands .answer-hand").click()
    expect(browsers["cy"].locator("#class-hand")).to_have_text("Raise hand", timeout=GRID_SECONDS * 1000)

    with teacher.expect_download() as download:
        teacher.click("#teacher-csv")
    rows = list(csv.reader(io.StringIO(download.value.path().read_text())))
    assert rows[0] == ["student", "step 1 status", "step 1 headline", "step 2 status", "step 2 headline"]
    grid = teacher.evaluate(
        """() => [...document.querySelectorAll('#teacher-grid tbody tr')].map((row) =>
            [row.querySelector('.student-name').textContent,
             ...[...row.querySelectorAll('td[data-step]')].flatMap((td) => [td.dataset.status, td.title])])"""
    )
    as_csv = [[cell_ if cell_ != "none" else "not started" for cell_ in row] for row in grid]
    assert len(rows) == 31 and [r[::2] for r in rows[1:]] == [r[::2] for r in as_csv]
    assert all(row[4] == headline for row in rows[1:] if row[0] in names[1:])

    teacher.on("dialog", lambda dialog: dialog.accept())
    teacher.locator(f"#teacher-grid tr:has(.student-name:text-is('{names[-1]}')) .remove-student").click()
    expect(teacher.locator("#teacher-grid tbody tr")).to_have_count(29, timeout=GRID_SECONDS * 1000)


def test_the_teacher_page_on_a_projector_stays_live(open_page, fake_server):
    url = fake_server
    lesson = httpx.post(f"{url}/api/lessons", json={"title": "Tiles", "steps": STEPS}).json()
    room = httpx.post(f"{url}/api/classes", json={"lesson": lesson["id"]}).json()
    projector = open_page()
    projector.goto(f"{url}{room['teacher_url']}?present=1#token={room['teacher_token']}")
    expect(projector.locator("#teacher-code")).to_have_text(room["code"])
    assert projector.url.endswith("?present=1"), "the layout stays, the token leaves"
    assert student_run(url, room["code"], "ada", "ok" + REFERENCE)[1] == "passed"
    expect(cell(projector, "ada", 2)).to_have_attribute("data-status", "passed", timeout=GRID_SECONDS * 1000)
    for control in ("#teacher-csv", ".rename-student", ".remove-student", "#teacher-setup"):
        assert not projector.locator(control).first.is_visible(), f"{control} is hidden on the projector"
    assert (
        projector.evaluate(
            "() => parseFloat(getComputedStyle(document.querySelector('.class-grid td')).fontSize)"
        )
        >= 20
    )


def test_a_student_on_a_phone_gets_class_controls_big_enough(open_page, fake_server):
    lesson = httpx.post(f"{fake_server}/api/lessons", json={"title": "Tiles", "steps": STEPS}).json()
    room = httpx.post(f"{fake_server}/api/classes", json={"lesson": lesson["id"]}).json()
    teacher = {"Authorization": f"Bearer {room['teacher_token']}"}
    httpx.put(f"{fake_server}/api/classes/{room['id']}/steps/1", json={"kind": "challenge"}, headers=teacher)
    phone = open_page(viewport=PHONE, is_mobile=True, has_touch=True)
    join_in_browser(phone, fake_server, room, "ada")
    phone.locator("#class-hand").tap()
    expect(phone.locator("#class-hand")).to_have_text("Lower hand (1 in line)")
    expect(phone.locator("#class-board summary")).to_be_visible()
    small = small_controls(phone)
    assert small == [], small
    first_line = phone.evaluate(
        "() => document.querySelector('#editor .cm-line').getBoundingClientRect().top"
    )
    assert first_line < PHONE["height"] / 2, f"the code starts {first_line:.0f} px down"


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
