"""A class's steps as the teacher set them up, and each student's marks on them.

A step is an `exercise` (the default), an `assignment` (a deadline: runs submitted after it are
late), or a `challenge` (correct kernels are ranked on a named chip, the class board, which the
teacher may hide). Marks keep, per student and step, when their latest run was submitted (so a late
run stays late however long it queued) and their best correct kernel's time on the challenge's chip
(with what that time is: the TPU time model's estimate, or measured on a TPU). Both tables hold at
most one row per step, and per student and step: bounded by the class's students and the lesson.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from server.store.sqlite import RecordDatabase

StepKind = Literal["exercise", "assignment", "challenge"]
Basis = Literal["estimate", "measured"]


@dataclass(frozen=True)
class StepSetup:
    step: int
    kind: StepKind = "exercise"
    deadline: float | None = None  # seconds since the epoch (assignments)
    chip: str = ""  # the chip a challenge ranks on ("": the lesson step's own)
    board_hidden: bool = False


@dataclass(frozen=True)
class Mark:
    student_id: str
    step: int
    submitted: float
    best_seconds: float | None
    best_basis: str
    best_chip: str


def setups(database: RecordDatabase, class_id: str) -> dict[int, StepSetup]:
    rows = database.rows(
        "SELECT step, kind, deadline, chip, board_hidden FROM class_steps WHERE class_id = ?", (class_id,)
    )
    return {
        int(step): StepSetup(
            int(step), kind, None if deadline is None else float(deadline), chip, bool(hidden)
        )
        for step, kind, deadline, chip, hidden in rows
    }


def set_up(database: RecordDatabase, class_id: str, setup: StepSetup) -> None:
    with database.transaction() as db:
        db.execute(
            "INSERT INTO class_steps (class_id, step, kind, deadline, chip, board_hidden) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (class_id, step) DO UPDATE SET kind = excluded.kind, deadline = excluded.deadline, "
            "chip = excluded.chip, board_hidden = excluded.board_hidden",
            (class_id, setup.step, setup.kind, setup.deadline, setup.chip, int(setup.board_hidden)),
        )


def marks(database: RecordDatabase, class_id: str) -> list[Mark]:
    rows = database.rows(
        "SELECT student_id, step, submitted, best_seconds, best_basis, best_chip FROM class_marks "
        "WHERE class_id = ?",
        (class_id,),
    )
    return [
        Mark(sid, int(step), float(at), None if best is None else float(best), basis, chip)
        for sid, step, at, best, basis, chip in rows
    ]


def scored(
    database: RecordDatabase,
    class_id: str,
    student_id: str,
    step: int,
    seconds: float,
    basis: Basis,
    chip: str,
) -> None:
    """A correct kernel took `seconds` on `chip`: kept if it beats the student's best there (a best on
    another chip, after the teacher changed the challenge's chip, is replaced). A time the host
    measured beats any estimate the kernel's process reported, and an estimate never replaces a
    measured time (the board ranks them so: `server.classroom.board.ranked`); before, any time of the
    other basis replaced the best, so the last run decided, not the best one."""
    with database.transaction() as db:
        db.execute(
            "UPDATE class_marks SET best_seconds = ?, best_basis = ?, best_chip = ? "
            "WHERE class_id = ? AND student_id = ? AND step = ? AND (best_seconds IS NULL OR best_chip <> ? "
            "OR (best_basis = ? AND best_seconds > ?) OR (? = 1 AND best_basis <> 'measured'))",
            (
                seconds,
                basis,
                chip,
                class_id,
                student_id,
                step,
                chip,
                basis,
                seconds,
                int(basis == "measured"),
            ),
        )
