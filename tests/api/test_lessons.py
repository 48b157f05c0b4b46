"""Lessons as documents: a stable id, an edit token for the author, revisions; steps checked one by one."""

import re

import pytest

from tests.api.conftest import make_client

KERNEL = "def matmul(x, y):\n    return x @ y\n"
LESSON = {
    "title": "Tiling a matmul",
    "steps": [
        {"source": KERNEL, "entry": "tiled_matmul", "chip": "v6e", "note": "Start from **this**."},
        {"source": "print('scratch')\n", "options": {"detect_races": True}, "note": "Now on your own."},
    ],
}
DEFAULT_OPTIONS = {
    "detect_races": None,
    "uninitialized_memory": None,
    "dma_execution_mode": None,
    "random_seed": None,
    "out_of_bounds_reads": None,
    "buffer_bounds": None,
}


def test_lesson_is_saved_and_read_back(client):
    created = client.post("/api/lessons", json=LESSON)
    assert created.status_code == 201
    body = created.json()
    assert re.fullmatch(r"[A-Za-z0-9_-]{11}", body["id"])
    assert body["url"] == f"/l/{body['id']}" and created.headers["location"] == f"/api/lessons/{body['id']}"
    assert body["revision"] == 1 and body["revision_url"] == f"/l/{body['id']}?rev=1"
    assert len(body["token"]) >= 40 and body["edit_url"] == f"/l/{body['id']}#edit={body['token']}"
    lesson = client.get(f"/api/lessons/{body['id']}").json()
    assert lesson["title"] == "Tiling a matmul" and lesson["url"] == body["url"]
    assert (lesson["revision"], lesson["latest_revision"], lesson["editable"]) == (1, 1, True)
    assert "token" not in lesson
    assert lesson["steps"] == [
        {
            "source": KERNEL,
            "entry": "tiled_matmul",
            "chip": "v6e",
            "options": DEFAULT_OPTIONS,
            "note": "Start from **this**.",
        },
        {
            "source": "print('scratch')\n",
            "entry": None,
            "chip": "v5p",
            "options": {**DEFAULT_OPTIONS, "detect_races": True},
            "note": "Now on your own.",
        },
    ]
    assert lesson["versions"]["jax"] == "0.12.0.1" and set(lesson["versions"]) == {
        "python",
        "jax",
        "jaxlib",
        "libtpu",
    }
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", lesson["created"])


def test_each_save_of_a_new_lesson_is_its_own_document(client):
    first = client.post("/api/lessons", json=LESSON).json()
    again = client.post("/api/lessons", json=LESSON).json()
    assert again["id"] != first["id"] and again["token"] != first["token"]


def revise(client, lesson: dict, body: dict, token: str | None = None):
    return client.put(
        f"/api/lessons/{lesson['id']}", json=body, headers={"X-Lesson-Token": token or lesson["token"]}
    )


def test_an_edit_makes_a_revision_the_stable_link_shows(client):
    lesson = client.post("/api/lessons", json=LESSON).json()
    fixed = {**LESSON, "steps": [{**LESSON["steps"][0], "note": "Start from **here**."}, LESSON["steps"][1]]}
    saved = revise(client, lesson, fixed)
    assert saved.status_code == 201
    assert saved.json() == {**saved.json(), "id": lesson["id"], "revision": 2, "token": None}
    latest = client.get(f"/api/lessons/{lesson['id']}").json()
    assert (latest["revision"], latest["latest_revision"]) == (2, 2)
    assert latest["steps"][0]["note"] == "Start from **here**."
    old = client.get(f"/api/lessons/{lesson['id']}/revisions/1").json()
    assert (old["revision"], old["latest_revision"]) == (1, 2)
    assert old["steps"][0]["note"] == "Start from **this**."
    unchanged = revise(client, lesson, fixed)
    assert unchanged.status_code == 200 and unchanged.json()["revision"] == 2
    listed = client.get(f"/api/lessons/{lesson['id']}/revisions").json()
    assert [(r["revision"], r["steps"], r["revision_url"]) for r in listed] == [
        (1, 2, f"/l/{lesson['id']}?rev=1"),
        (2, 2, f"/l/{lesson['id']}?rev=2"),
    ]


def test_only_the_edit_token_revises(client):
    lesson = client.post("/api/lessons", json=LESSON).json()
    other = client.post("/api/lessons", json=LESSON).json()
    for token in ("wrong", other["token"]):
        refused = revise(client, lesson, {**LESSON, "title": "Hijacked"}, token=token)
        assert refused.status_code == 403 and refused.json()["title"] == "Not your lesson"
    no_header = client.put(f"/api/lessons/{lesson['id']}", json=LESSON)
    assert no_header.status_code == 403
    assert client.get(f"/api/lessons/{lesson['id']}").json()["title"] == LESSON["title"]
    unknown = revise(client, {"id": "AAAAAAAAAAA", "token": lesson["token"]}, LESSON)
    assert unknown.status_code == 404


def test_unknown_revision_is_404(client):
    lesson = client.post("/api/lessons", json=LESSON).json()
    missing = client.get(f"/api/lessons/{lesson['id']}/revisions/2")
    assert missing.status_code == 404 and missing.json()["title"] == "Unknown revision"
    assert client.get("/api/lessons/AAAAAAAAAAA/revisions/1").json()["title"] == "Unknown lesson"


def test_lesson_and_its_token_survive_a_reopened_store(backend, tmp_path):
    with make_client(backend, tmp_path) as client:
        lesson = client.post("/api/lessons", json=LESSON).json()
    with make_client(backend, tmp_path) as client:
        assert client.get(f"/api/lessons/{lesson['id']}").json()["title"] == LESSON["title"]
        assert revise(client, lesson, {**LESSON, "title": "Tiling, again"}).status_code == 201


def test_share_step_copies_the_share_content(client):
    share = {"source": KERNEL, "entry": "tiled_matmul", "chip": "v6e"}
    share_id = client.post("/api/shares", json=share).json()["id"]
    by_share = {"title": "T", "steps": [{"share": share_id, "note": "Look."}]}
    created = client.post("/api/lessons", json=by_share)
    assert created.status_code == 201
    step = client.get(f"/api/lessons/{created.json()['id']}").json()["steps"][0]
    assert step == {**share, "options": DEFAULT_OPTIONS, "note": "Look."}
    # The same content written out in full saves no new revision: a share step is only a shorthand.
    inline = {"title": "T", "steps": [{**share, "note": "Look."}]}
    same = revise(client, created.json(), inline)
    assert same.status_code == 200 and same.json()["revision"] == 1


BIG = "x" * (64 * 1024 + 1)
ERRORS = [
    (
        "unknown entry",
        [{"source": "x"}, {"source": "x", "entry": "nope"}],
        422,
        "step 2: entry 'nope'",
        "steps.1.entry",
    ),
    ("unknown share", [{"share": "AAAAAAAAAAA"}], 422, "step 1: no share 'AAAAAAAAAAA'", "steps.0.share"),
    (
        "source too large",
        [{"source": "x"}, {"source": "x"}, {"source": BIG}],
        413,
        "step 3: the source is 65,537 bytes",
        "steps.2.source",
    ),
    (
        "note too long",
        [{"source": "x", "note": "é" * 4097}],
        422,
        "step 1: the note is 8,194 bytes",
        "steps.0.note",
    ),
]


@pytest.mark.parametrize(("name", "steps", "status", "phrase", "field"), ERRORS, ids=[e[0] for e in ERRORS])
def test_step_errors_name_the_step(client, name, steps, status, phrase, field):
    response = client.post("/api/lessons", json={"title": "T", "steps": steps})
    assert response.status_code == status
    assert response.headers["content-type"] == "application/problem+json"
    body = response.json()
    assert body["status"] == status and phrase in body["detail"] and body["field"] == field


def test_a_lesson_within_every_limit_is_accepted(client):
    steps = [{"source": "x" * (64 * 1024), "note": "n" * 8192}] + [{"source": f"step {k}"} for k in range(29)]
    response = client.post("/api/lessons", json={"title": "t" * 200, "steps": steps})
    assert response.status_code == 201
    assert len(client.get(response.json()["url"].replace("/l/", "/api/lessons/")).json()["steps"]) == 30
