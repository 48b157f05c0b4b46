"""The `LessonStore` contract, for every implementation (SQLite today; add a factory for another).

What a backend must keep: a new lesson is revision 1 with its own stable id; only the edit token
revises it; a revision never changes and stays readable by its number; the latest is the default;
saving what the latest already holds makes no revision; unknown ids and numbers read as None.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from server.store.lessons import (
    LessonRecord,
    LessonStep,
    LessonStore,
    LessonTokenError,
    UnknownLessonError,
    lesson_store,
)
from server.store.sqlite import open_database


def sqlite_store(tmp_path: Path) -> Iterator[LessonStore]:
    database = open_database(tmp_path)
    try:
        yield lesson_store(database)
    finally:
        database.close()


FACTORIES: dict[str, Callable[[Path], Iterator[LessonStore]]] = {"sqlite": sqlite_store}


@pytest.fixture(params=list(FACTORIES))
def store(request, tmp_path) -> Iterator[LessonStore]:
    yield from FACTORIES[request.param](tmp_path)


def record(title: str = "Pallas 101", note: str = "Run it.") -> LessonRecord:
    step = LessonStep(source="def f(): ...\n", entry=None, chip="v5p", options={}, note=note)
    return LessonRecord(title=title, steps=(step,), versions={"jax": "0.12.0.1"})


def test_a_new_lesson_is_revision_one(store):
    lesson = store.create(record(), "secret")
    assert (lesson.number, lesson.latest, lesson.editable) == (1, 1, True)
    got = store.get(lesson.lesson)
    assert got is not None and got.record == record() and got.number == 1
    assert store.create(record(), "secret").lesson != lesson.lesson


def test_revisions_are_kept_and_the_latest_is_the_default(store):
    lesson = store.create(record(), "secret")
    second, new = store.revise(lesson.lesson, record(note="Run it twice."), "secret")
    assert new and (second.number, second.latest) == (2, 2)
    assert store.get(lesson.lesson).record.steps[0].note == "Run it twice."
    first = store.get(lesson.lesson, 1)
    assert first is not None and first.record == record() and (first.number, first.latest) == (1, 2)
    assert first.created == second.created and first.revised <= second.revised
    assert [(r.number, r.steps) for r in store.revisions(lesson.lesson)] == [(1, 1), (2, 1)]


def test_saving_the_latest_again_makes_no_revision(store):
    lesson = store.create(record(), "secret")
    same, new = store.revise(lesson.lesson, record(), "secret")
    assert not new and same.number == 1 and store.get(lesson.lesson).latest == 1


def test_only_the_token_revises(store):
    lesson = store.create(record(), "secret")
    with pytest.raises(LessonTokenError):
        store.revise(lesson.lesson, record(title="Hijacked"), "guess")
    with pytest.raises(UnknownLessonError):
        store.revise("AAAAAAAAAAA", record(), "secret")
    assert store.get(lesson.lesson).record.title == "Pallas 101"


def test_unknown_ids_and_revisions_read_as_none(store):
    lesson = store.create(record(), "secret")
    assert store.get("AAAAAAAAAAA") is None and store.revisions("AAAAAAAAAAA") is None
    assert store.get(lesson.lesson, 2) is None and store.get(lesson.lesson, 0) is None
    assert store.get("../etc/passwd") is None
