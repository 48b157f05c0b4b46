"""Lessons: documents a teacher keeps editing, each a title and an ordered list of steps (an editor
state with a Markdown note).

A lesson has a stable id (its link, `/l/{id}`) and a secret edit token, given once to its author.
Every save with the token makes a new revision; the stable link shows the latest, and each revision
stays readable by its number, so a student mid-class is never switched silently. Revisions' content
is stored like shares (`server.store.sqlite`: salted content-addressed records) in the `lessons` table;
lessons saved before lessons had revisions are read as one-revision lessons that cannot be edited.

`LessonStore` is the whole contract a backend keeps (SQLite here, `SqliteLessonStore`); the
contract tests in `tests/unit/test_lesson_store.py` run against every implementation.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass
from typing import Any, Protocol

from server.store.sqlite import ID_PATTERN, RecordDatabase, RecordTable


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
    """What one revision of a lesson holds."""

    title: str
    steps: tuple[LessonStep, ...]
    versions: dict[str, str | None]


@dataclass(frozen=True)
class LessonRevision:
    """One revision of a lesson, as read back."""

    lesson: str  # the stable id
    number: int  # 1, 2, ...
    latest: int  # the newest revision's number when this was read
    record: LessonRecord
    created: float  # when the lesson was first saved
    revised: float  # when this revision was saved
    editable: bool  # False for lessons from before revisions (no edit token exists)


@dataclass(frozen=True)
class RevisionInfo:
    number: int
    revised: float
    title: str
    steps: int


class UnknownLessonError(Exception):
    """No lesson has this id."""


class LessonTokenError(Exception):
    """The edit token is missing or not this lesson's."""


class LessonStore(Protocol):
    def create(self, record: LessonRecord, token: str) -> LessonRevision:
        """A new lesson with `record` as revision 1, editable with `token` (kept only as a hash)."""
        ...

    def revise(self, lesson_id: str, record: LessonRecord, token: str) -> tuple[LessonRevision, bool]:
        """`record` as the lesson's next revision, and whether it is new (False: the latest already is
        `record`). Raises UnknownLessonError, or LessonTokenError for a wrong token."""
        ...

    def get(self, lesson_id: str, revision: int | None = None) -> LessonRevision | None:
        """Revision `revision` (default: the latest) of the lesson, or None."""
        ...

    def revisions(self, lesson_id: str) -> list[RevisionInfo] | None:
        """Every revision of the lesson, oldest first, or None for an unknown lesson."""
        ...


def new_token() -> str:
    """An edit token: 32 random bytes, URL-safe."""
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def decode_lesson(data: dict[str, Any]) -> LessonRecord:
    steps = tuple(LessonStep(**step) for step in data["steps"])
    return LessonRecord(title=data["title"], steps=steps, versions=data["versions"])


class DatabaseLessonStore:
    """`LessonStore` on a `RecordDatabase` (SQLite or PostgreSQL): heads and revision lists beside the content-addressed records."""

    def __init__(self, database: RecordDatabase) -> None:
        self.database = database
        self.contents = RecordTable(database, "lessons", decode_lesson)

    def create(self, record: LessonRecord, token: str) -> LessonRevision:
        stored, _ = self.contents.put(record)
        now = time.time()
        with self.database.transaction() as db:
            while True:  # a fresh id that no lesson (nor an old content-addressed one) has
                lesson_id = secrets.token_urlsafe(8)
                taken = db.execute("SELECT 1 FROM lesson_heads WHERE id = ?", (lesson_id,)).fetchone()
                if not taken and self.database.get("lessons", lesson_id) is None:
                    break
            db.execute(
                "INSERT INTO lesson_heads (id, token_sha256, created) VALUES (?, ?, ?)",
                (lesson_id, token_hash(token), now),
            )
            db.execute(
                "INSERT INTO lesson_revisions (lesson, number, record_id, created) VALUES (?, 1, ?, ?)",
                (lesson_id, stored.id, now),
            )
        return LessonRevision(lesson_id, 1, 1, record, now, now, True)

    def revise(self, lesson_id: str, record: LessonRecord, token: str) -> tuple[LessonRevision, bool]:
        heads = self.database.rows("SELECT token_sha256 FROM lesson_heads WHERE id = ?", (lesson_id,))
        if not heads:
            raise UnknownLessonError(lesson_id)
        if not hmac.compare_digest(heads[0][0], token_hash(token)):
            raise LessonTokenError(lesson_id)  # before anything is written
        stored, _ = self.contents.put(record)
        with self.database.transaction() as db:
            head = db.execute(
                "SELECT token_sha256, created FROM lesson_heads WHERE id = ?", (lesson_id,)
            ).fetchone()
            if head is None:
                raise UnknownLessonError(lesson_id)
            if not hmac.compare_digest(head[0], token_hash(token)):
                raise LessonTokenError(lesson_id)
            number, record_id, revised = db.execute(
                "SELECT number, record_id, created FROM lesson_revisions WHERE lesson = ? "
                "ORDER BY number DESC LIMIT 1",
                (lesson_id,),
            ).fetchone()
            if record_id == stored.id:
                return LessonRevision(lesson_id, number, number, record, head[1], revised, True), False
            now = time.time()
            db.execute(
                "INSERT INTO lesson_revisions (lesson, number, record_id, created) VALUES (?, ?, ?, ?)",
                (lesson_id, number + 1, stored.id, now),
            )
        return LessonRevision(lesson_id, number + 1, number + 1, record, head[1], now, True), True

    def get(self, lesson_id: str, revision: int | None = None) -> LessonRevision | None:
        if not ID_PATTERN.match(lesson_id):
            return None
        rows = self._revision_rows(lesson_id)
        if not rows:
            return self._legacy(lesson_id) if revision in (None, 1) else None
        latest = rows[-1][0]
        number = latest if revision is None else revision
        if not 1 <= number <= latest:
            return None
        _, record_id, revised = rows[number - 1]
        content = self.contents.get(record_id)
        if content is None:  # a revision names content that is always written first
            return None
        created = self._head_created(lesson_id)
        return LessonRevision(lesson_id, number, latest, content.record, created, revised, True)

    def revisions(self, lesson_id: str) -> list[RevisionInfo] | None:
        if not ID_PATTERN.match(lesson_id):
            return None
        rows = self._revision_rows(lesson_id)
        if not rows:
            legacy = self._legacy(lesson_id)
            return None if legacy is None else [_info(legacy)]
        found = []
        for number, record_id, revised in rows:
            content = self.contents.get(record_id)
            if content is not None:
                record = content.record
                found.append(RevisionInfo(number, revised, record.title, len(record.steps)))
        return found

    def _revision_rows(self, lesson_id: str) -> list[tuple[Any, ...]]:
        query = "SELECT number, record_id, created FROM lesson_revisions WHERE lesson = ? ORDER BY number"
        return self.database.rows(query, (lesson_id,))

    def _head_created(self, lesson_id: str) -> float:
        rows = self.database.rows("SELECT created FROM lesson_heads WHERE id = ?", (lesson_id,))
        return float(rows[0][0]) if rows else 0.0

    def _legacy(self, lesson_id: str) -> LessonRevision | None:
        content = self.contents.get(lesson_id)
        if content is None:
            return None
        return LessonRevision(lesson_id, 1, 1, content.record, content.created, content.created, False)


def _info(revision: LessonRevision) -> RevisionInfo:
    record = revision.record
    return RevisionInfo(revision.number, revision.revised, record.title, len(record.steps))


def lesson_store(database: RecordDatabase) -> LessonStore:
    """The lessons in `database`."""
    return DatabaseLessonStore(database)
