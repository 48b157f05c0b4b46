"""Issue 41, a second round of held-out variants, over a real HTTP server (the fake sandbox).

Per-address caps that an IPv6 client escaped by sending from another address of its /64 (every
limit counted per address: join-code lookups, joins, measurements per share); a teacher whose own
runs did not count against the budget of the classes it started (its own cap beside the classes'
half of the queue); measurement lines with a number no JSON can store (a 500) or a time no kernel
takes.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
from collections.abc import Iterator

import httpx
import pytest

from server.app import create_app
from server.settings import Settings
from tests.api.test_class_live import ClassFake, bearer, join, start_class
from tests.live import serving

JOINS = 5


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("variants"), slots=1, queue_size=64, rate_per_minute=0,
        class_joins_per_minute=JOINS, class_students=10, store_saves_per_minute=0,
        trusted_proxies="127.0.0.1",
    )  # fmt: skip
    with serving(create_app(settings, backend=ClassFake())) as url:
        yield url


SUBNETS = itertools.count(1)


def from_address(url: str, address: str) -> httpx.Client:
    return httpx.Client(base_url=url, timeout=10, headers={"X-Forwarded-For": address})


@pytest.fixture
def subnet() -> str:
    """A /64 of this test's own: `f"{subnet}{i:x}"` is its i-th address."""
    return f"2001:db8:41:{next(SUBNETS):x}::"


def test_one_ipv6_subscriber_gets_one_join_code_lookup_budget(server, subnet):
    answers = []
    for i in range(1, JOINS + 3):
        with from_address(server, f"{subnet}{i:x}") as http:
            answers.append(http.head("/c/ZZZZZZ").status_code)
    assert answers == [404] * JOINS + [429, 429], answers
    with from_address(server, "2001:db8:41:ffff::1") as other:  # another subscriber is not held back
        assert other.head("/c/ZZZZZZ").status_code == 404


def test_one_ipv6_subscriber_gets_one_join_budget(server, subnet):
    with from_address(server, "10.41.0.1") as teacher:
        room = start_class(teacher)
    answers = []
    for i in range(1, JOINS + 3):
        with from_address(server, f"{subnet}{i:x}") as http:
            answers.append(http.post(f"/api/classes/{room['code']}/join", json={"name": f"s{i}"}).status_code)
    assert answers == [201] * JOINS + [429, 429], answers


def test_an_ipv4_address_written_as_ipv6_is_that_address(server):
    answers = []
    for i in range(JOINS + 1):
        address = "::ffff:10.41.1.1" if i % 2 else "10.41.1.1"
        with from_address(server, address) as http:
            answers.append(http.head("/c/ZZZZZZ").status_code)
    assert answers[-1] == 429, answers


# -- nicknames as the teacher reads them ------------------------------------------------------------------

NAMES = {
    "\u202eada": "ada",  # a right-to-left override: the rest of the row reads backwards
    "\u200b\u200b": "student",  # zero-width: a name that looks empty
    "ad\u200ba": "ad a",  # ... or like another student's
    "\x1b[2J": "[2J",  # a terminal escape, for whoever `cat`s the CSV
    "\uff1d1+1": "'=1+1",  # a full-width equals sign, folded, then escaped as any formula
    "\uff43\uff41\uff4c\uff43": "calc",
    "a\nb": "a b",
    "Zo\u00eb \u674e": "Zo\u00eb \u674e",
}


def test_a_nickname_is_shown_as_it_reads_in_the_grid_and_the_csv(server):
    with from_address(server, "10.41.8.1") as http:
        room = start_class(http)
        for i, name in enumerate(NAMES):
            with from_address(server, f"10.41.9.{i + 1}") as student:  # joins are limited per address
                join(student, room, name)
        teacher = bearer(room["teacher_token"])
        grid = http.get(f"/api/classes/{room['id']}/progress", headers=teacher).json()
        exported = http.get(f"/api/classes/{room['id']}/progress.csv", headers=teacher).text
        student = grid["students"][0]["id"]
        renamed = http.patch(
            f"/api/classes/{room['id']}/students/{student}", json={"name": "\u202e\u200b"}, headers=teacher
        )
        assert renamed.status_code == 204
        after = http.get(f"/api/classes/{room['id']}/progress", headers=teacher).json()
    shown = [s["name"] for s in grid["students"]]
    assert shown == [w.lstrip("'") for w in NAMES.values()], shown
    assert [row[0] for row in csv.reader(io.StringIO(exported))][1:] == list(NAMES.values())
    assert after["students"][0]["name"] == "student"


# -- measurements --------------------------------------------------------------------------------------

SOURCE = "x = 1\n"


def measurement(share: str, **fields: object) -> str:
    line = {
        "pallas_playground_measurement": 1, "share": share, "chip": "v5e", "device_kind": "TPU v5 lite",
        "interpret": False, "jax": "0.12.0", "jaxlib": "0.12.0", "case": "c", "verdict": "passed",
        "kernel_sha256": hashlib.sha256(SOURCE.encode()).hexdigest(), "device_seconds": 1e-3,
        "wall_seconds": 2e-3, "method": "profiler", **fields,
    }  # fmt: skip
    return json.dumps(line)


@pytest.fixture
def share(server) -> str:
    with from_address(server, "10.41.2.1") as http:
        return http.post("/api/shares", json={"source": SOURCE, "chip": "v5e"}).json()["id"]


@pytest.mark.parametrize(
    ("replace", "field"),
    [
        (('"wall_seconds": 0.002', '"wall_seconds": 1e400'), "wall_seconds"),
        (('"wall_seconds": 0.002', '"wall_seconds": Infinity'), "wall_seconds"),
        (('"device_seconds": 0.001', '"device_seconds": 5e-324'), "device_seconds"),
        (('"device_seconds": 0.001', '"device_seconds": 1e-9'), "device_seconds"),
        (('"device_seconds": 0.001', '"device_seconds": NaN'), "device_seconds"),
    ],
    ids=["wall 1e400", "wall Infinity", "device 5e-324", "device 1 ns", "device NaN"],
)
def test_a_measurement_with_a_number_no_kernel_takes_is_refused_never_500(server, share, replace, field):
    line = measurement(share).replace(*replace)
    assert replace[1] in line
    with from_address(server, "10.41.3.1") as http:
        answer = http.post(f"/api/shares/{share}/measurements", json={"line": line})
        assert answer.status_code == 422, answer.text
        assert field in answer.text
        listed = http.get(f"/api/shares/{share}/measurements")
    assert listed.status_code == 200 and listed.json()["measurements"] == []


def test_one_ipv6_subscriber_keeps_at_most_its_share_of_a_shares_measurements(server, share, subnet):
    made = []
    for i in range(1, 16):
        with from_address(server, f"{subnet}{i:x}") as http:
            line = measurement(share, device_seconds=i * 1e-4)
            made.append(http.post(f"/api/shares/{share}/measurements", json={"line": line}).status_code)
    assert made == [201] * 10 + [429] * 5, made
    with from_address(server, "10.41.4.1") as owner:
        line = measurement(share, device_seconds=0.0123)
        mine = owner.post(f"/api/shares/{share}/measurements", json={"line": line})
    assert mine.status_code == 201, mine.text


# -- a teacher's own runs and its classes' runs share one budget ---------------------------------------


def test_a_teachers_own_runs_count_against_its_classes_budget(tmp_path):
    settings = Settings(
        data_dir=tmp_path, slots=1, queue_size=64, per_address_queue=24, class_queue=64, per_client_queue=64,
        rate_per_minute=0, address_rate_per_minute=0, class_rate_per_minute=0, class_students=10,
        class_joins_per_minute=0, store_saves_per_minute=0, trusted_proxies="127.0.0.1",
    )  # fmt: skip
    backend = ClassFake()
    with serving(create_app(settings, backend=backend)) as url, from_address(url, "10.41.5.1") as teacher:
        try:
            room = start_class(teacher)
            students = [join(teacher, room, f"s{i}") for i in range(4)]
            own = [
                teacher.post("/api/runs", json={"source": f"block {i}\n", "chip": "v5e"}) for i in range(30)
            ]
            step = {"chip": "v5e", "step": 1}
            classes = [
                teacher.post("/api/runs", json={"source": f"block {i}\n", "class_token": s, **step})
                for i, s in enumerate(students * 10)
            ]
            taken = sum(r.status_code == 201 for r in own), sum(r.status_code == 201 for r in classes)
            # Its own cap (24), and the classes' budget (half the queue, 32) counting those 24 too.
            assert taken == (24, 8), taken
            refused = next(r for r in classes if r.status_code != 201)
            assert refused.status_code == 429 and "your class" in refused.json()["detail"], refused.text
            with from_address(url, "10.41.6.1") as other:
                assert other.post("/api/runs", json={"source": "block v\n", "chip": "v5e"}).status_code == 201
        finally:
            backend.release.set()


# -- event streams resumed after an id that is digits only to `str.isdigit` ------------------------------


def _events_after(http: httpx.Client, url: str, last: bytes) -> str:
    with http.stream("GET", url, headers=[(b"Last-Event-ID", last)]) as answer:
        assert answer.status_code == 200
        return answer.read().decode()


@pytest.mark.parametrize("last", [b"\xb2", b"\xb9\xb2\xb3", b"1\xbd"], ids=["²", "¹²³", "1½"])
def test_a_last_event_id_of_latin1_digits_replays_the_stream(server, last):
    """A header is Latin-1: "²" passed `str.isdigit()` and then broke `int()`, and the stream with it."""
    with from_address(server, "10.41.7.1") as http:
        run = http.post("/api/runs", json={"source": "x = 1\n", "chip": "v5e"}).json()
        while http.get(run["url"]).json()["state"] != "done":
            pass
        assert "event: done" in _events_after(http, run["events_url"], last)
        sweep = http.post(
            "/api/sweeps",
            json={
                "source": "def kernel(x):\n    return x\n",
                "chip": "v5e",
                "params": {"bm": [128]},
                "size": {"m": 256},
            },
        )
        assert sweep.status_code == 201, sweep.text
        assert "event: " in _events_after(http, sweep.json()["events_url"], last)


@pytest.mark.parametrize("deadline", ["NaN", "Infinity", "-Infinity", "1e400"])
def test_a_deadline_that_is_no_time_is_refused(server, deadline):
    """Python's JSON reads these as floats; a NaN deadline was stored and shown as none."""
    with from_address(server, "10.41.10.1") as http:
        room = start_class(http)
        answer = http.put(
            f"/api/classes/{room['id']}/steps/1",
            content=f'{{"kind": "assignment", "deadline": {deadline}}}',
            headers={**bearer(room["teacher_token"]), "Content-Type": "application/json"},
        )
    assert answer.status_code == 422 and "deadline" in answer.text, answer.text


def test_a_runs_headline_is_kept_as_one_plain_line_for_the_grid():
    """A student's own error message is the grid's headline: its bidi override reordered the row."""
    from server.store.classes import HEADLINE_CHARS, clip

    assert (
        clip("error in kernel: ValueError: \u202eda\u200b\nx\x1b[2J")
        == "error in kernel: ValueError: da x [2J"
    )
    assert len(clip("\u202e" + "x" * 1000)) == HEADLINE_CHARS
