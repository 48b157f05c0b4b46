"""Issue 41, a fifth round of held-out variants: class sessions, over a real HTTP server (the fake
sandbox).

A lesson is anyone's to publish and any teacher's to run a class from: a step file nested too deep
for Python's parser (RecursionError, not SyntaxError) made every view of such a class a 500 (the
grid, its CSV, each class run); and every view parsed every step's file again, so a lesson of large
steps cost seconds of the server's CPU per view, and a few open class pages wedged the server for
everyone. The board's ranking is held by `tests/unit/test_class_board.py` and
`tests/scale/test_store_contract.py`.
"""

from __future__ import annotations

import time

from server.classroom.lesson_facts import lesson_facts
from server.store.classes import class_store
from server.store.sqlite import open_database
from tests.api.test_class_live import REFERENCE, bearer, events
from tests.api.test_heldout_fourth_round import (
    ATTACKER,
    TEACHER,
    class_run,
    client,
    grid,
    joined,
    served,
    settled,
    start_class,
)

DEEP = "x = " + "1+" * 30000 + "1\n"  # ast.parse: RecursionError, not SyntaxError
LINE = "x = foo(a, b, c) + bar[1:2] * 3\n"
LARGE = LINE * (60000 // len(LINE))  # ~0.1 s of the parser's time, a step


def test_a_lesson_step_nested_too_deep_for_the_parser_is_not_a_500(tmp_path):
    """Every view of the class answers (it was a 500 each: grid, CSV, run, a student's page), and a
    class run on the step is judged as any other."""
    steps = [
        {"source": DEEP + REFERENCE, "entry": None, "chip": "v5e", "note": "Deep."},
        {
            "source": "from jax.experimental import pallas as pl\n" + DEEP + REFERENCE,
            "chip": "v5e",
            "note": "",
        },
    ]
    with served(tmp_path) as (url, _), client(url, ATTACKER) as http:
        room = start_class(url, steps)
        student = joined(http, room, "amy")
        for step in (1, 2):
            answer = class_run(http, student, "y = 1\n", step)
            assert answer.status_code == 201, answer.text
        found = settled(
            url, room, lambda g: {c["status"] for c in g["students"][0]["steps"].values()} == {"passed"}
        )
        assert set(found["students"][0]["steps"]) == {"1", "2"}
        with client(url, TEACHER) as teacher:
            csv = teacher.get(
                f"/api/classes/{room['id']}/progress.csv", headers=bearer(room["teacher_token"])
            )
        assert csv.status_code == 200 and '"amy","passed"' in csv.text
        with events(url, f"/api/classes/{room['id']}/live", student["student_token"]) as got:
            kind, view = got.get(timeout=5)
        assert kind == "class" and view["name"] == "amy" and not view["removed"]


def test_a_lesson_revision_is_parsed_once_not_once_a_view(tmp_path):
    """Ten reads of the grid of a lesson of large steps cost less CPU than the first read alone
    (each cost as much as the first before: every step's file parsed again), and the facts are the
    same object each time."""
    steps = [
        {"source": f"# step {k}\n{LARGE}{REFERENCE}", "entry": None, "chip": "v5e", "note": ""}
        for k in range(4)
    ]
    with served(tmp_path, body_bytes=4 << 20) as (url, _), client(url, ATTACKER) as http:
        room = start_class(url, steps)
        joined(http, room, "amy")
        first = time.process_time()
        grid(url, room)
        first = time.process_time() - first
        later = time.process_time()
        for _ in range(10):
            grid(url, room)
        later = time.process_time() - later
    assert later < first, (first, later)
    store = class_store(open_database(tmp_path))
    session = store.get(room["id"])
    assert session is not None
    facts = lesson_facts(store, session)
    assert facts is lesson_facts(store, session) and facts.reference_steps == {1, 2, 3, 4}
