"""Issue 41 again, over a real HTTP server (the fake sandbox): variants of its class-session attacks.

CSV cells a spreadsheet evaluates although they do not start with `=` (a pipe, leading blanks, the
full-width pipe); steps no class has, as numbers past SQLite's integers, on every route that takes
one; none may answer 500.
"""

from __future__ import annotations

import csv
import io
import itertools
from collections.abc import Iterator

import httpx
import pytest

from server.app import create_app
from server.classroom.export import csv_cell
from server.settings import Settings
from tests.api.test_class_live import ClassFake, bearer, join, start_class
from tests.live import serving


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    settings = Settings(
        data_dir=tmp_path_factory.mktemp("heldout"), slots=1, queue_size=64, rate_per_minute=0,
        class_joins_per_minute=20, class_students=10, store_saves_per_minute=0,
        trusted_proxies="127.0.0.1",
    )  # fmt: skip
    with serving(create_app(settings, backend=ClassFake())) as url:
        yield url


ADDRESSES = itertools.count(1)


@pytest.fixture
def http(server) -> Iterator[httpx.Client]:
    n = next(ADDRESSES)
    with httpx.Client(base_url=server, timeout=10, headers={"X-Forwarded-For": f"10.42.{n}.1"}) as client:
        yield client


LIVE = [
    "|cmd /C calc",
    " =1+1",
    "  +SUM(A1)",
    "\u3000=1+1",  # an ideographic space, then a formula
    "\t=1",
    "\n=1",
    "\r@x",
    "\uff5ccmd",  # full-width pipe
    "\uff1d1+1",
    " \uff0b1",
]


@pytest.mark.parametrize("text", LIVE, ids=[repr(t) for t in LIVE])
def test_a_cell_a_spreadsheet_would_evaluate_is_escaped(text):
    assert csv_cell(text).startswith("'"), repr(text)
    assert csv_cell("ada") == "ada" and csv_cell("a = b") == "a = b"


def test_the_csv_export_escapes_pipes_and_full_width_pipes_in_names(http):
    room = start_class(http)
    for name in ("|calc", "\uff5ccalc", "ok"):
        join(http, room, name)
    teacher = bearer(room["teacher_token"])
    answer = http.get(f"/api/classes/{room['id']}/progress.csv", headers=teacher)
    assert answer.status_code == 200, answer.text
    names = [row[0] for row in csv.reader(io.StringIO(answer.text))][1:]
    assert names == ["'|calc", "'|calc", "ok"]  # the full-width pipe folded to "|" (a nickname is NFKC)


HUGE_STEPS = [0, -1, 2**63, 2**70]


@pytest.mark.parametrize("step", HUGE_STEPS)
def test_a_step_the_class_lacks_is_refused_on_every_route(http, step):
    room = start_class(http)
    ada = join(http, room, "ada")
    teacher = bearer(room["teacher_token"])
    base = f"/api/classes/{room['id']}"
    answers = {
        "run": http.post("/api/runs", json={"source": "x", "chip": "v6e", "class_token": ada, "step": step}),
        "editing": http.post(f"{base}/editing", json={"step": step}, headers=bearer(ada)),
        "follow": http.put(f"{base}/follow", json={"step": step}, headers=teacher),
        "setup": http.put(f"{base}/steps/{step}", json={"kind": "exercise"}, headers=teacher),
    }
    for route, answer in answers.items():
        assert answer.status_code == 422, (route, answer.status_code, answer.text)
        assert answer.headers["content-type"].startswith("application/problem+json"), route
    grid = http.get(f"{base}/progress", headers=teacher)
    assert grid.status_code == 200 and grid.json()["students"][0]["steps"] == {}


# A file the parser cannot build a tree of (nested too deep), and `DEVICES` set wrong: a share keeps
# either unrun, and a run is refused or runs; neither may answer 500.
UNPARSABLE = {
    "parser stack overflow": "-" * 20000 + "1\n",
    "recursion in the parser": "x = " + "-" * 5000 + "1\n",
    "DEVICES a string": "DEVICES = 'x'\ndef kernel(x):\n    return x\n",
    "DEVICES too many": "DEVICES = 10**9\n",
}


@pytest.mark.parametrize("source", UNPARSABLE.values(), ids=UNPARSABLE.keys())
def test_a_file_that_does_not_parse_or_sets_devices_wrong_never_answers_500(http, source):
    share = http.post("/api/shares", json={"source": source, "chip": "v5e"})
    assert share.status_code == 201, share.text
    notebook = http.get(f"/api/shares/{share.json()['id']}/notebook")
    assert notebook.status_code == 200, notebook.text
    cells = ["".join(cell["source"]) for cell in notebook.json()["cells"]]
    assert any(source.strip() in cell for cell in cells)
    run = http.post("/api/runs", json={"source": source, "chip": "v5e"})
    assert run.status_code in (201, 422), run.text
    if run.status_code == 422:
        assert run.json()["title"] == "Invalid run" and "DEVICES" in run.json()["detail"]
