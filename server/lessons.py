"""Lessons: a title and an ordered list of steps, each an editor state with a teacher's note.

Stored like shares (`server.store`: the same salted content-addressed ids, idempotent saves and
SQLite file) in the `lessons` table. A step made from a share holds a copy of that share's content,
so a lesson never changes meaning; the lesson records the versions it was made on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from server.store import RecordDatabase, RecordStore, RecordTable, Stored

MAX_STEPS = 30
NOTE_BYTES = 8 * 1024
TITLE_CHARS = 200


@dataclass(frozen=True)
class LessonStep:
    """One step: the editor state it opens (as a share holds it) and the Markdown note beside it."""

    source: str
    entry: str | None
    chip: str
    options: dict[str, Any]
    note: str


@dataclass(frozen=True)
class LessonRecord:
    """What a lesson captures; the id is derived from exactly these fields."""

    title: str
    steps: tuple[LessonStep, ...]
    versions: dict[str, str | None]


type Lesson = Stored[LessonRecord]
type LessonStore = RecordStore[LessonRecord]


def decode_lesson(data: dict[str, Any]) -> LessonRecord:
    steps = tuple(LessonStep(**step) for step in data["steps"])
    return LessonRecord(title=data["title"], steps=steps, versions=data["versions"])


def lesson_store(database: RecordDatabase) -> LessonStore:
    """The lessons in `database`."""
    return RecordTable(database, "lessons", decode_lesson)
