"""Who may join a class, and from where: the teacher's door, each address's share of the class, and
the students the teacher removed.

A teacher can close a class to new joins and open it again (`Door.closed`), and say how many
students one network address may have in it (`Door.per_address`; unset: `default_per_address`, the
larger of `LEAST_PER_ADDRESS` and a quarter of the class's cap), so one address cannot fill a class
by joining two hundred times; a teacher whose room sits behind one school address raises it. (The
address that started the class is held to it too: a student in the room shares the teacher's school
address.) A student the teacher removed keeps their place in their address's share for
`REJOIN_SECONDS`, and their browser (the page's browser id) cannot join the class again for as
long: removing a made-up student does not hand the same address a fresh place at once, and the
removed student cannot walk back in. (A join without a browser id is bound by its address's share
alone: one address behind which a school sits is not shut out for one student's removal.) Addresses
and browser ids are kept as salted digests, never as given.

Every check runs inside the join's write transaction (`admit`), so joins racing each other cannot
pass a cap together.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from server.store.sqlite import RecordDatabase, Statements

LEAST_PER_ADDRESS = 8
REJOIN_SECONDS = 1800.0


@dataclass(frozen=True)
class Door:
    """A class's door as the teacher set it: open or closed, and the students one address may have
    (None: the default)."""

    closed: bool = False
    per_address: int | None = None


@dataclass(frozen=True)
class Joiner:
    """Who joins: digests of their network address and browser id ("": none sent)."""

    address: str
    browser: str


class ClassClosedError(Exception):
    """The teacher closed the class to new joins."""


class JoinsPerAddressError(Exception):
    """The address already has as many students in the class as one address may have."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"{limit} students of this class joined from this address")
        self.limit = limit


class RejoinRefusedError(Exception):
    """The teacher removed a student who joined from this browser a short while ago."""

    def __init__(self, retry_after: float) -> None:
        super().__init__("removed from this class a short while ago")
        self.retry_after = retry_after


def default_per_address(class_students: int) -> int:
    """Students one address may have in a class unless its teacher says otherwise."""
    return max(LEAST_PER_ADDRESS, class_students // 4)


DOOR = "SELECT closed, per_address FROM class_doors WHERE class_id = ?"


def door(database: RecordDatabase, class_id: str) -> Door:
    return _door(database.rows(DOOR, (class_id,)))


def _door(rows: list[tuple[Any, ...]]) -> Door:
    if not rows:
        return Door()
    closed, per_address = rows[0]
    return Door(bool(closed), None if per_address is None else int(per_address))


def set_door(database: RecordDatabase, class_id: str, setting: Door) -> None:
    with database.transaction() as db:
        db.execute(
            "INSERT INTO class_doors (class_id, closed, per_address) VALUES (?, ?, ?) "
            "ON CONFLICT (class_id) DO UPDATE SET closed = excluded.closed, per_address = excluded.per_address",
            (class_id, int(setting.closed), setting.per_address),
        )


def admit(db: Statements, class_id: str, joiner: Joiner, class_students: int, now: float) -> None:
    """Raise why `joiner` may not join the class now (inside the join's transaction), or pass."""
    setting = _door([tuple(row) for row in db.execute(DOOR, (class_id,)).fetchall()])
    if setting.closed:
        raise ClassClosedError(class_id)
    since = now - REJOIN_SECONDS
    if joiner.browser:
        removed = db.execute(
            "SELECT MAX(removed_at) FROM class_joins WHERE class_id = ? AND browser = ? AND removed_at > ?",
            (class_id, joiner.browser, since),
        ).fetchone()[0]
        if removed is not None:
            raise RejoinRefusedError(float(removed) + REJOIN_SECONDS - now)
    limit = setting.per_address or default_per_address(class_students)
    held = db.execute(
        "SELECT COUNT(*) FROM class_joins j JOIN class_students s ON s.class_id = j.class_id "
        "AND s.id = j.student_id WHERE j.class_id = ? AND j.joiner = ? "
        "AND (s.removed = 0 OR j.removed_at > ?)",
        (class_id, joiner.address, since),
    ).fetchone()[0]
    if int(held) >= limit:
        raise JoinsPerAddressError(limit)


def record(db: Statements, class_id: str, student_id: str, joiner: Joiner) -> None:
    """Keep where the new student joined from (inside the join's transaction)."""
    db.execute(
        "INSERT INTO class_joins (class_id, student_id, joiner, browser) VALUES (?, ?, ?, ?)",
        (class_id, student_id, joiner.address, joiner.browser),
    )


def removed(db: Statements, class_id: str, student_id: str, now: float) -> None:
    """The teacher removed the student now (inside the removal's transaction)."""
    db.execute(
        "UPDATE class_joins SET removed_at = ? WHERE class_id = ? AND student_id = ?",
        (now, class_id, student_id),
    )
