"""The database's schema grows without losing anything: a share database from before lessons still
opens, its shares read back under the same ids, and a server newer than the file is never assumed."""

import contextlib
import sqlite3
from pathlib import Path

import pytest

from server.store.lessons import LessonRecord, LessonStep, decode_lesson, lesson_store
from server.store.shares import share_store
from server.store.sqlite import FILE_NAME, SCHEMA_VERSION, RecordTable, SchemaTooNewError, open_database
from tests.api.conftest import make_client

# Written by the share store at schema version 1, before lessons existed (see the file's header).
V1_DUMP = Path(__file__).parent / "data" / "shares_v1.sql"
V1_SALT = "3a4d1025243c7dd8ceb2c9a012a40694"
CATALOG_SHARE, SCRATCH_SHARE = "eHZVQ8igrzg", "DQjGxqogAEg"


def run_sql(path: Path, script: str) -> None:
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.executescript(script)


def user_version(path: Path) -> int:
    with contextlib.closing(sqlite3.connect(path)) as db:
        return int(db.execute("PRAGMA user_version").fetchone()[0])


@pytest.fixture
def v1_dir(tmp_path) -> Path:
    run_sql(tmp_path / FILE_NAME, V1_DUMP.read_text(encoding="utf-8"))
    assert user_version(tmp_path / FILE_NAME) == 1
    return tmp_path


def test_version_1_database_opens_and_its_shares_read_back(backend, v1_dir):
    with make_client(backend, v1_dir) as client:
        catalog = client.get(f"/api/shares/{CATALOG_SHARE}")
        assert catalog.status_code == 200
        assert catalog.json()["source"] == "def matmul(x, y):\n    return x @ y\n"
        assert (catalog.json()["entry"], catalog.json()["chip"]) == ("tiled_matmul", "v6e")
        assert catalog.json()["options"]["detect_races"] is True
        assert catalog.json()["created"] == "2026-12-03T07:59:17Z"
        scratch = client.get(f"/api/shares/{SCRATCH_SHARE}").json()
        assert scratch["source"] == "print('héllo')\n" and scratch["options"]["random_seed"] == 7
        assert client.get(f"/s/{SCRATCH_SHARE}").status_code == 200
        # The new table is there too: an old share becomes a lesson step.
        lesson = client.post("/api/lessons", json={"title": "Old", "steps": [{"share": CATALOG_SHARE}]})
        assert lesson.status_code == 201
        assert client.get(lesson.json()["url"]).status_code == 200
    assert user_version(v1_dir / FILE_NAME) == SCHEMA_VERSION


def test_version_1_database_keeps_its_salt_and_ids(v1_dir):
    database = open_database(v1_dir)
    try:
        assert database.salt == V1_SALT
        shares = share_store(database)
        stored = shares.get(CATALOG_SHARE)
        assert stored is not None
        again, new = shares.put(stored.record)
        assert (again.id, new, again.created) == (CATALOG_SHARE, False, stored.created)
    finally:
        database.close()


STEP = LessonStep(source="x", entry=None, chip="v5p", options={}, note="")


def test_lessons_survive_an_older_server_resetting_the_version(tmp_path):
    database = open_database(tmp_path)
    lesson = lesson_store(database).create(LessonRecord(title="T", steps=(STEP,), versions={}), "token")
    database.close()
    run_sql(tmp_path / FILE_NAME, "PRAGMA user_version = 1")  # what a server from before lessons does
    database = open_database(tmp_path)
    try:
        store = lesson_store(database)
        stored = store.get(lesson.lesson)
        assert stored is not None and stored.record.steps == (STEP,) and stored.editable
        revised, new = store.revise(
            lesson.lesson, LessonRecord(title="T2", steps=(STEP,), versions={}), "token"
        )
        assert new and revised.number == 2
    finally:
        database.close()


def test_a_lesson_from_before_revisions_opens_as_one_revision_that_cannot_be_edited(backend, tmp_path):
    database = open_database(tmp_path)
    old = RecordTable(database, "lessons", decode_lesson)  # how schema version 2 stored a lesson
    stored, _ = old.put(LessonRecord(title="Old", steps=(STEP,), versions={}))
    database.close()
    run_sql(tmp_path / FILE_NAME, "PRAGMA user_version = 2")
    with make_client(backend, tmp_path) as client:
        lesson = client.get(f"/api/lessons/{stored.id}").json()
        assert (lesson["title"], lesson["revision"], lesson["latest_revision"]) == ("Old", 1, 1)
        assert lesson["editable"] is False
        assert client.get(f"/l/{stored.id}").status_code == 200
        refused = client.put(f"/api/lessons/{stored.id}", json={"title": "x", "steps": [{"source": "x"}]})
        assert refused.status_code == 404


def test_database_from_a_newer_server_is_refused(tmp_path):
    run_sql(tmp_path / FILE_NAME, f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    with pytest.raises(SchemaTooNewError, match=f"schema version {SCHEMA_VERSION + 1}"):
        open_database(tmp_path)
    assert user_version(tmp_path / FILE_NAME) == SCHEMA_VERSION + 1
