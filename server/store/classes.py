"""Class sessions: a teacher runs a lesson with a room of students, no accounts.

A class has a stable id (the teacher's page, `/t/{id}`), a short join code the room types, and a
secret teacher token (given once, kept only as a hash, as lesson edit tokens are). A student joins
with the code and a nickname and gets a student token of their own (also kept as a hash): their
runs carry it, so the queue limits each student and the class as a whole instead of the school's
one network address. Each student's latest status per step is kept here, in the shared database,
so every web server sees the same class (SQLite for one server, PostgreSQL for several).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

from server.clients import owner_key
from server.store import class_joins
from server.store.class_joins import Joiner
from server.store.lessons import new_token, token_hash
from server.store.sqlite import RecordDatabase
from server.wire.classes import CELL_PROGRESS, NAME_CHARS, plain_line

# Join codes avoid letters a room misreads off a projector (0/O, 1/I/L).
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 6
HEADLINE_CHARS = 200
# Statuses of a step that has not finished: a progress read asks the queue whether it has.
PENDING = frozenset(CELL_PROGRESS)


@dataclass(frozen=True)
class ClassSession:
    id: str
    code: str
    lesson: str
    revision: int
    steps: int
    created: float


@dataclass(frozen=True)
class Student:
    class_id: str
    id: str
    name: str


@dataclass(frozen=True)
class StepStatus:
    """A student's latest run on one step (1-based), as the teacher's grid shows it."""

    student_id: str
    step: int
    status: str
    headline: str
    run_id: str
    updated: float


class UnknownClassError(Exception):
    """No class has this id or join code."""


class ClassFullError(Exception):
    """The class has as many students as one class may have."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the class has {limit} students already")
        self.limit = limit


class ClassTokenError(Exception):
    """The token is missing or not this class's (teacher) or not any student's."""


def clip(headline: str) -> str:
    """A headline as stored: one plain line (a student's own error message may carry a bidi override
    that reorders the teacher's grid), at most HEADLINE_CHARS, with an ellipsis where it was cut."""
    line = plain_line(headline)
    return line if len(line) <= HEADLINE_CHARS else line[: HEADLINE_CHARS - 1] + "…"


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normal_code(code: str) -> str:
    """What a student typed, as stored: upper case, no spaces or dashes."""
    return code.upper().replace(" ", "").replace("-", "")


class ClassStore:
    """Classes, their students and progress on a `RecordDatabase` (SQLite or PostgreSQL)."""

    def __init__(self, database: RecordDatabase) -> None:
        self.database = database

    def create(self, lesson: str, revision: int, steps: int, owner: str = "") -> tuple[ClassSession, str]:
        """A new class on revision `revision` of `lesson`, and its teacher token (given only now);
        `owner`: the network address that starts it (kept as a salted hash, `owner_of`)."""
        token, now = new_token(), time.time()
        with self.database.transaction() as db:
            while True:  # a fresh id and code (codes are short, so a clash is possible)
                class_id, code = secrets.token_urlsafe(8), new_code()
                clash = db.execute(
                    "SELECT 1 FROM classes WHERE id = ? OR code = ?", (class_id, code)
                ).fetchone()
                if not clash:
                    break
            db.execute(
                "INSERT INTO classes (id, code, lesson, revision, steps, token_sha256, created) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (class_id, code, lesson, revision, steps, token_hash(token), now),
            )
            db.execute(
                "INSERT INTO class_owners (class_id, owner) VALUES (?, ?) ON CONFLICT (class_id) DO NOTHING",
                (class_id, self._owner_key(owner) if owner else ""),
            )
        return ClassSession(class_id, code, lesson, revision, steps, now), token

    def get(self, class_id: str) -> ClassSession | None:
        return self._one("id", class_id)

    def owner_of(self, class_id: str) -> str:
        """Who started the class, as kept (a class from before owners were kept: its own id)."""
        rows = self.database.rows("SELECT owner FROM class_owners WHERE class_id = ?", (class_id,))
        return str(rows[0][0]) if rows and rows[0][0] else f"class-{class_id}"

    def owner_key_if_teacher(self, address: str) -> str | None:
        """The key `owner_of` gives the classes `address` started, if it started any (a class kept
        before owner keys named their network has the older key, the address's digest alone)."""
        for key in (self._owner_key(address), self._digest(address)[:24]):
            if self.database.rows("SELECT 1 FROM class_owners WHERE owner = ? LIMIT 1", (key,)):
                return key
        return None

    def _owner_key(self, address: str) -> str:
        return owner_key(address, self._digest)

    def _digest(self, text: str) -> str:
        return hashlib.sha256(f"{self.database.salt}\nclass owner\n{text}".encode()).hexdigest()

    def by_code(self, code: str) -> ClassSession | None:
        return self._one("code", normal_code(code))

    def check_teacher(self, class_id: str, token: str) -> ClassSession:
        """The class, if `token` is its teacher token; else UnknownClassError or ClassTokenError."""
        rows = self.database.rows("SELECT token_sha256 FROM classes WHERE id = ?", (class_id,))
        if not rows:
            raise UnknownClassError(class_id)
        if not hmac.compare_digest(rows[0][0], token_hash(token)):
            raise ClassTokenError(class_id)
        found = self.get(class_id)
        assert found is not None
        return found

    def join(
        self, code: str, name: str, limit: int, address: str = "", browser: str = ""
    ) -> tuple[ClassSession, Student, str]:
        """A new student of the class with join code `code`, and their token (given only now); a
        class holds at most `limit` students (ClassFullError). Removed ones do not count: a teacher
        who removes joins an address made up makes room for real students. The class's door decides
        first (`class_joins.admit`: closed, the address's share, a removed student's browser)."""
        session = self.by_code(code)
        if session is None:
            raise UnknownClassError(code)
        token, student_id, now = new_token(), secrets.token_urlsafe(6), time.time()
        joiner = self._joiner(address, browser)
        with self.database.transaction() as db:
            class_joins.admit(db, session.id, joiner, limit, now)
            count = db.execute(
                "SELECT COUNT(*) FROM class_students WHERE class_id = ? AND removed = 0", (session.id,)
            ).fetchone()[0]
            if int(count) >= limit:
                raise ClassFullError(limit)
            db.execute(
                "INSERT INTO class_students (class_id, id, token_sha256, name, created) VALUES (?, ?, ?, ?, ?)",
                (session.id, student_id, token_hash(token), name[:NAME_CHARS], now),
            )
            class_joins.record(db, session.id, student_id, joiner)
        return session, Student(session.id, student_id, name[:NAME_CHARS]), token

    def _joiner(self, address: str, browser: str) -> Joiner:
        """Who joins, as kept: salted digests of the address and of the browser id ("": none)."""
        digest = self._digest(f"joiner\n{address}")[:32]
        return Joiner(digest, self._digest(f"browser\n{browser}")[:32] if browser else "")

    def student(self, token: str) -> Student | None:
        """The student whose token this is, unless the teacher removed them."""
        rows = self.database.rows(
            "SELECT class_id, id, name FROM class_students WHERE token_sha256 = ? AND removed = 0",
            (token_hash(token),),
        )
        return Student(*rows[0]) if rows else None

    def students(self, class_id: str) -> list[Student]:
        rows = self.database.rows(
            "SELECT class_id, id, name FROM class_students WHERE class_id = ? AND removed = 0 "
            "ORDER BY created, id",
            (class_id,),
        )
        return [Student(*row) for row in rows]

    def rename(self, class_id: str, student_id: str, name: str) -> bool:
        return self._update_student(class_id, student_id, "name = ?", (name[:NAME_CHARS],))

    def remove(self, class_id: str, student_id: str) -> bool:
        """Remove a student: their token stops working and the grid no longer shows them; their
        browser (or address) cannot join again for a while (`class_joins.REJOIN_SECONDS`)."""
        with self.database.transaction() as db:
            changed = db.execute(
                "UPDATE class_students SET removed = 1 WHERE class_id = ? AND id = ? AND removed = 0",
                (class_id, student_id),
            ).rowcount
            if changed:
                class_joins.removed(db, class_id, student_id, time.time())
        return bool(changed)

    def record(self, student: Student, step: int, status: str, headline: str, run_id: str) -> None:
        """`status` as the student's latest on `step` (a new run replaces the one before), submitted
        now (an assignment's deadline is held against this time, not the result's)."""
        now = time.time()
        with self.database.transaction() as db:
            db.execute(
                "INSERT INTO class_progress (class_id, student_id, step, status, headline, run_id, updated) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (class_id, student_id, step) DO UPDATE SET "
                "status = excluded.status, headline = excluded.headline, run_id = excluded.run_id, "
                "updated = excluded.updated",
                (student.class_id, student.id, step, status, clip(headline), run_id, now),
            )
            db.execute(
                "INSERT INTO class_marks (class_id, student_id, step, submitted) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (class_id, student_id, step) DO UPDATE SET submitted = excluded.submitted",
                (student.class_id, student.id, step, now),
            )

    def settle(self, class_id: str, run_id: str, status: str, headline: str, at: float) -> None:
        """The run `run_id` ended with `status` (seen at `at`): update the step it is still the latest,
        unsettled run of. The first to settle it wins (its watch, or a read of the grid on any web
        server), so every server shows the same cell."""
        with self.database.transaction() as db:
            db.execute(
                "UPDATE class_progress SET status = ?, headline = ?, updated = ? "
                "WHERE class_id = ? AND run_id = ? AND status IN ('queued', 'running')",
                (status, clip(headline), at, class_id, run_id),
            )

    def progress(self, class_id: str) -> list[StepStatus]:
        rows = self.database.rows(
            "SELECT student_id, step, status, headline, run_id, updated FROM class_progress "
            "WHERE class_id = ? ORDER BY student_id, step",
            (class_id,),
        )
        return [StepStatus(r[0], int(r[1]), r[2], r[3], r[4], float(r[5])) for r in rows]

    # -- internals -----------------------------------------------------------------------------

    def _one(self, column: str, value: str) -> ClassSession | None:
        rows = self.database.rows(
            f"SELECT id, code, lesson, revision, steps, created FROM classes WHERE {column} = ?", (value,)
        )
        if not rows:
            return None
        class_id, code, lesson, revision, steps, created = rows[0]
        return ClassSession(class_id, code, lesson, int(revision), int(steps), float(created))

    def _update_student(
        self, class_id: str, student_id: str, assignment: str, values: tuple[object, ...]
    ) -> bool:
        with self.database.transaction() as db:
            changed = db.execute(
                f"UPDATE class_students SET {assignment} WHERE class_id = ? AND id = ? AND removed = 0",
                (*values, class_id, student_id),
            ).rowcount
        return bool(changed)


def class_store(database: RecordDatabase) -> ClassStore:
    """The classes in `database`."""
    return ClassStore(database)
