"""Lessons: saved like shares (content-addressed, idempotent), steps checked one by one."""

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
}


def test_lesson_is_saved_and_read_back(client):
    created = client.post("/api/lessons", json=LESSON)
    assert created.status_code == 201
    body = created.json()
    assert re.fullmatch(r"[A-Za-z0-9_-]{11}", body["id"])
    assert body["url"] == f"/l/{body['id']}" and created.headers["location"] == f"/api/lessons/{body['id']}"
    lesson = client.get(f"/api/lessons/{body['id']}").json()
    assert lesson["title"] == "Tiling a matmul" and lesson["url"] == body["url"]
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


def test_saving_the_same_lesson_again_gives_the_same_id(client):
    first = client.post("/api/lessons", json=LESSON)
    again = client.post("/api/lessons", json=LESSON)
    assert again.status_code == 200 and again.json() == first.json()
    retitled = client.post("/api/lessons", json={**LESSON, "title": "Tiling, again"})
    assert retitled.status_code == 201 and retitled.json()["id"] != first.json()["id"]


def test_lesson_id_is_stable_across_a_reopened_store(backend, tmp_path):
    with make_client(backend, tmp_path) as client:
        lesson_id = client.post("/api/lessons", json=LESSON).json()["id"]
    with make_client(backend, tmp_path) as client:
        again = client.post("/api/lessons", json=LESSON)
        assert again.status_code == 200 and again.json()["id"] == lesson_id
        assert client.get(f"/api/lessons/{lesson_id}").json()["title"] == LESSON["title"]


def test_share_step_copies_the_share_content(client):
    share = {"source": KERNEL, "entry": "tiled_matmul", "chip": "v6e"}
    share_id = client.post("/api/shares", json=share).json()["id"]
    by_share = {"title": "T", "steps": [{"share": share_id, "note": "Look."}]}
    created = client.post("/api/lessons", json=by_share)
    assert created.status_code == 201
    step = client.get(f"/api/lessons/{created.json()['id']}").json()["steps"][0]
    assert step == {**share, "options": DEFAULT_OPTIONS, "note": "Look."}
    # The same content written out in full is the same lesson: a share step is only a shorthand.
    inline = {"title": "T", "steps": [{**share, "note": "Look."}]}
    assert client.post("/api/lessons", json=inline).json()["id"] == created.json()["id"]


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
