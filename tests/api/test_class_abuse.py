"""Issue 41, item 2: class sessions that cannot be gamed, over a real HTTP server (the fake sandbox).

Reports for steps the class lacks are refused; the join limiter is a sliding window (a fixed one let
twice its rate through across a window's edge); removed students leave room for real ones; the join
page answers 200/404 for a code only within the address's budget, HEAD as GET; the CSV export never
hands a spreadsheet a formula.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import csv
import io
import itertools
import time
from collections.abc import Iterator

import httpx
import pytest

from sandbox.results.checked_by import CHECKED_BY_LESSON
from server.app import create_app
from server.classroom import live as live_module
from server.classroom.live import InProcessLive
from server.settings import Settings
from tests.api.test_class_live import STEPS, ClassFake, bearer, join, start_class
from tests.live import serving

JOINS = 5
STUDENTS = 3
FAKE = ClassFake()  # this module's server's backend: the jobs it was given


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("classabuse"), slots=1, queue_size=64, rate_per_minute=0,
        class_joins_per_minute=JOINS, class_students=STUDENTS, store_saves_per_minute=0,
        trusted_proxies="127.0.0.1",
    )  # fmt: skip
    with serving(create_app(settings, backend=FAKE)) as url:
        yield url


ADDRESSES = itertools.count(1)


@pytest.fixture
def http(server) -> Iterator[httpx.Client]:
    """A client from an address of its own (behind the trusted proxy): budgets count per test."""
    n = next(ADDRESSES)
    with httpx.Client(base_url=server, timeout=10, headers={"X-Forwarded-For": f"10.41.{n}.1"}) as client:
        yield client


def test_an_editing_report_for_a_step_the_class_lacks_is_refused(http):
    room = start_class(http)  # two steps
    ada = join(http, room, "ada")
    base = f"/api/classes/{room['id']}"
    for step in (3, 999_999_999):
        answer = http.post(f"{base}/editing", json={"step": step}, headers=bearer(ada))
        assert answer.status_code == 422 and answer.json()["title"] == "Unknown step", answer.text
    assert http.post(f"{base}/editing", json={"step": 2}, headers=bearer(ada)).status_code == 204
    grid = http.get(f"{base}/progress", headers=bearer(room["teacher_token"])).json()
    assert set(grid["students"][0]["steps"]) == {"2"}


def test_removed_students_leave_room_for_real_ones(http):
    room = start_class(http)
    teacher = bearer(room["teacher_token"])
    for name in ("x1", "x2", "x3"):
        join(http, room, name)
    full = http.post(f"/api/classes/{room['code']}/join", json={"name": "ada"})
    assert full.status_code == 409, full.text
    base = f"/api/classes/{room['id']}"
    for student in http.get(f"{base}/progress", headers=teacher).json()["students"]:
        assert http.delete(f"{base}/students/{student['id']}", headers=teacher).status_code == 204
    join(http, room, "ada")
    names = [s["name"] for s in http.get(f"{base}/progress", headers=teacher).json()["students"]]
    assert names == ["ada"]


@pytest.mark.parametrize("method", ["HEAD", "GET"])
def test_the_join_page_is_no_unlimited_oracle_for_codes(http, method):
    room = start_class(http)
    answers = [http.request(method, f"/c/{code}") for code in ("AAAAAA", "BBBBBB", "CCCCCC", "DDDDDD")]
    answers.append(http.request(method, f"/c/{room['code']}"))
    assert [a.status_code for a in answers] == [404] * 4 + [200]
    refused = [http.request(m, f"/c/{room['code']}") for m in ("HEAD", "GET")]
    assert [a.status_code for a in refused] == [429, 429]  # HEAD and GET share the budget
    assert 1 <= int(refused[0].headers["retry-after"]) <= 60


def test_the_csv_export_escapes_what_a_spreadsheet_would_evaluate(http):
    room = start_class(http)
    names = ['=HYPERLINK("http://evil","x")', "+1+1", "@SUM(A1)"]
    for name in names:
        join(http, room, name)
    teacher = bearer(room["teacher_token"])
    base = f"/api/classes/{room['id']}"
    students = http.get(f"{base}/progress", headers=teacher).json()["students"]
    http.patch(f"{base}/students/{students[0]['id']}", json={"name": "-2+3"}, headers=teacher)
    answer = http.get(f"{base}/progress.csv", headers=teacher)
    rows = list(csv.reader(io.StringIO(answer.text)))
    assert [r[0] for r in rows[1:]] == ["'-2+3", "'+1+1", "'@SUM(A1)"]
    assert all(not cell.startswith(live_formula) for r in rows for cell in r for live_formula in "=+-@\t\r")
    assert answer.text.splitlines()[1].startswith('"\'-2+3"')  # every cell quoted


def test_the_join_limiter_never_lets_more_than_its_rate_through_in_any_minute(monkeypatch):
    clock = [59.5]  # near the end of a fixed minute: the old limiter allowed as many again at 60.0
    monkeypatch.setattr(live_module.time, "time", lambda: clock[0])

    async def scenario() -> list[float]:
        live = InProcessLive()
        waits = [await live.admit_join("1.2.3.4", 3) for _ in range(3)]
        clock[0] = 60.5
        waits += [await live.admit_join("1.2.3.4", 3), await live.admit_join("1.2.3.4", 3, what="lookup")]
        clock[0] = 119.6
        waits.append(await live.admit_join("1.2.3.4", 3))
        return waits

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        waits = pool.submit(asyncio.run, scenario()).result()
    assert waits[:3] == [0.0, 0.0, 0.0]
    assert waits[3] == pytest.approx(59.0)  # until the first of the three is a minute old
    assert waits[4] == 0.0  # lookups have a budget of their own
    assert waits[5] == 0.0


def test_a_class_run_is_checked_by_its_lesson_steps_reference(http):
    # Issue 41, 2 (a): a file with its own reference and an unrelated op ranked on the board.
    room = start_class(http)  # step 2 is a scratch file with its own reference
    ada = join(http, room, "ada")
    source = "def kernel(x):\n    return x + 1\n\ndef reference(x):\n    return x + 1\n"
    body = {"source": source, "chip": "v6e", "class_token": ada, "step": 2}
    answer = http.post("/api/runs", json=body)
    assert answer.status_code == 201, answer.text
    deadline = time.monotonic() + 10
    while (run := http.get(f"/api/runs/{answer.json()['id']}").json())["state"] != "done":
        assert time.monotonic() < deadline
        time.sleep(0.05)
    assert run["result"]["checked_by"] == CHECKED_BY_LESSON
    (job,) = [j for j in FAKE.jobs if j.source == source]
    assert job.reference_source == STEPS[1]["source"]  # the lesson's reference checks it, not the file's
    other = http.post("/api/runs", json={**body, "entry": "tiled_matmul"})
    assert other.status_code == 422 and other.json()["title"] == "Not this step's exercise", other.text
