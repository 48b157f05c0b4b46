"""The teacher's view of a class: each student's latest status per step, settled against the queue,
with who is editing what, late runs, raised hands, the room's most common failing headlines, the
class boards, and the grid as CSV.

A student's run is recorded as `queued` when it is submitted (with its run id); reading the
progress asks the queue about every run not yet settled and writes back the ones that are done. The
queue (in this process, or Redis for several web servers) and the database are both shared, so any
web server answers the same grid.
"""

from __future__ import annotations

import asyncio
import collections
import csv
import io
import time
from dataclasses import dataclass, replace
from typing import Any

from sandbox.protocol import RunStatus
from server.classroom.board import board, challenge_chip, score
from server.classroom.live import LiveState
from server.problems import ProblemError
from server.queue.interface import RunQueue, RunView
from server.store import class_steps
from server.store.class_steps import Mark, StepSetup
from server.store.classes import PENDING, ClassSession, ClassStore, StepStatus, Student
from server.store.lessons import lesson_store
from server.wire.classes import (
    Board,
    CellPublic,
    ClassBudget,
    ClassProgress,
    CommonError,
    Hand,
    StepSetupPublic,
    StudentProgress,
)

# A headline shared by fewer students than this is one student's mistake, not the room's.
COMMON_AT_LEAST = 2
COMMON_SHOWN = 5
# The statuses that count against the kernel (`RunStatus.failing`).
FAILING = frozenset(status.value for status in RunStatus if status.failing)
# An edit report older than this no longer shows the student as editing (they stopped, or left).
EDITING_SHOWN_SECONDS = 300.0


def headline(result: dict[str, Any]) -> str:
    """A result's one line for the grid: an error's own message (first line), else the summary."""
    error = result.get("error") or {}
    message = str(error.get("message") or "").strip().splitlines()
    return message[0] if message else str(result.get("summary", ""))


def class_member(store: ClassStore, token: str | None, step: int | None) -> Student | None:
    """The student a run's `class_token` names (None without one), or the problem refusing it."""
    if token is None:
        if step is not None:
            raise ProblemError(
                422,
                "Step without a class",
                "`step` is only for class runs: send `class_token` too",
                field="step",
            )
        return None
    student = store.student(token)
    session = store.get(student.class_id) if student is not None else None
    if student is None or session is None:
        raise ProblemError(
            403,
            "Unknown student",
            "the class token is not a current student's (removed, or never joined)",
            field="class_token",
        )
    if step is None or step > session.steps:
        raise ProblemError(
            422, "Unknown step", f"a class run names its step, 1 to {session.steps}", field="step"
        )
    return student


def first_status(view: RunView) -> tuple[str, str]:
    """A class run's cell when it is submitted: queued, or its result at once (a cache hit)."""
    return settled_status(view) or ("queued", "")


def settled_status(view: RunView | None) -> tuple[str, str] | None:
    """The (status, headline) a pending cell becomes, or None while the run is still queued."""
    if view is None:
        return "lost", "the run was forgotten before it was read (its result expired)"
    if view.state == "done" and view.result is not None:
        return str(view.result.get("status", "error")), headline(view.result)
    return ("running", "") if view.state == "running" else None


@dataclass(frozen=True)
class Room:
    """What a class is made of besides its cells: students, live state, step setups and marks, and
    the chip each step runs on in the lesson."""

    session: ClassSession
    students: list[Student]
    live: LiveState
    setups: dict[int, StepSetup]
    marks: list[Mark]
    lesson_chips: tuple[str, ...]

    def setup(self, step: int) -> StepSetup:
        return self.setups.get(step, StepSetup(step))

    def chip(self, step: int) -> str:
        """The chip a challenge step ranks on: the teacher's, else the lesson step's."""
        chips = self.lesson_chips
        return challenge_chip(self.setup(step), chips[step - 1] if step <= len(chips) else "")


async def settle(
    store: ClassStore, queue: RunQueue, class_id: str, cells: list[StepStatus], chips: dict[int, str]
) -> tuple[list[StepStatus], int, bool]:
    """`cells` with every finished run's status filled in (and stored), the furthest queue place, and
    whether a board time was kept (`chips`: the challenge steps' chips)."""
    out, furthest, scored = [], 0, False
    for cell in cells:
        if cell.status not in PENDING:
            out.append(cell)
            continue
        view = await queue.view(cell.run_id)
        if view is not None and view.position:
            furthest = max(furthest, view.position)
        settled, kept = await settle_one(store, class_id, cell, view, chips)
        out.append(settled)
        scored |= kept
    return out, furthest, scored


async def settle_one(
    store: ClassStore, class_id: str, cell: StepStatus, view: RunView | None, chips: dict[int, str]
) -> tuple[StepStatus, bool]:
    """The cell as `view` (its run now) says; a final status is stored, with the board's time (then
    True: a board may have changed)."""
    now = settled_status(view)
    if now is None:
        return cell, False
    (status, line), at = now, time.time()
    if status != "running":  # running is not final: the next read asks again
        await asyncio.to_thread(store.settle, class_id, cell.run_id, status, line, at)
        chip = chips.get(cell.step)
        found = score(view.result, chip) if chip and view is not None and view.result else None
        if chip and found is not None:
            await asyncio.to_thread(
                class_steps.scored, store.database, class_id, cell.student_id, cell.step, *found, chip
            )
            return StepStatus(cell.student_id, cell.step, status, line, cell.run_id, at), True
    return StepStatus(cell.student_id, cell.step, status, line, cell.run_id, at), False


async def as_stored(
    store: ClassStore, class_id: str, before: list[StepStatus], settled: list[StepStatus]
) -> list[StepStatus]:
    """`settled`, with each cell settled just now as the database holds it: another web server's
    watch may have settled the run first (the first wins), and every server must show the same."""
    if all(new == old or new.status in PENDING for new, old in zip(settled, before, strict=True)):
        return settled
    stored = {(c.student_id, c.step): c for c in await asyncio.to_thread(store.progress, class_id)}
    return [c if c.status in PENDING else stored.get((c.student_id, c.step), c) for c in settled]


def lesson_chips(store: ClassStore, session: ClassSession) -> tuple[str, ...]:
    """The chip each step of the class's lesson revision runs on."""
    lesson = lesson_store(store.database).get(session.lesson, session.revision)
    return tuple(step.chip for step in lesson.record.steps) if lesson is not None else ()


def challenge_chips(room: Room) -> dict[int, str]:
    return {k: room.chip(k) for k, s in room.setups.items() if s.kind == "challenge"}


async def load_room(store: ClassStore, session: ClassSession, live: LiveState) -> Room:
    """The class's students, setups and marks from the database, with `live` state."""
    chips = await asyncio.to_thread(lesson_chips, store, session)
    students = await asyncio.to_thread(store.students, session.id)
    setups = await asyncio.to_thread(class_steps.setups, store.database, session.id)
    marks = await asyncio.to_thread(class_steps.marks, store.database, session.id)
    return Room(session, students, live, setups, marks, chips)


async def class_progress(store: ClassStore, queue: RunQueue, room: Room, limit: int) -> ClassProgress:
    """The teacher's grid of the class, with the class's budget (`limit` runs at once)."""
    session = room.session
    cells = await asyncio.to_thread(store.progress, session.id)
    settled, furthest, scored = await settle(store, queue, session.id, cells, challenge_chips(room))
    cells = await as_stored(store, session.id, cells, settled)
    if scored:  # a run settled here (its watch was lost) changed a board: read the marks again
        room = replace(room, marks=await asyncio.to_thread(class_steps.marks, store.database, session.id))
    places = {sid: place for place, (sid, _) in enumerate(room.live.hands, start=1)}
    names = {s.id: s.name for s in room.students}
    return ClassProgress(
        id=session.id,
        code=session.code,
        lesson=session.lesson,
        revision=session.revision,
        steps=session.steps,
        students=[
            StudentProgress(
                id=s.id, name=s.name, hand=places.get(s.id), steps=student_cells(room, s.id, cells)
            )
            for s in room.students
        ],
        common_errors=common_errors(room.students, cells),
        budget=ClassBudget(in_flight=sum(1 for c in cells if c.status in PENDING), limit=limit),
        furthest_in_queue=furthest,
        hands=[
            Hand(student_id=sid, name=names[sid], since=at) for sid, at in room.live.hands if sid in names
        ],
        follow=room.live.follow,
        setup=[setup_public(room.setup(k)) for k in range(1, session.steps + 1)],
        boards=boards(room),
    )


def boards(room: Room) -> list[Board]:
    return [
        board(room.setup(k), room.chip(k), room.students, room.marks)
        for k in range(1, room.session.steps + 1)
        if room.setup(k).kind == "challenge"
    ]


def setup_public(setup: StepSetup) -> StepSetupPublic:
    return StepSetupPublic(
        step=setup.step,
        kind=setup.kind,
        deadline=setup.deadline,
        chip=setup.chip,
        board_hidden=setup.board_hidden,
    )


def student_cells(room: Room, student_id: str, cells: list[StepStatus]) -> dict[str, CellPublic]:
    """One student's row: each run's cell (late or not), and `editing` where they edited since."""
    submitted = {m.step: m.submitted for m in room.marks if m.student_id == student_id}
    row: dict[str, CellPublic] = {}
    for cell in cells:
        if cell.student_id == student_id:
            late = is_late(room.setup(cell.step), submitted.get(cell.step))
            row[str(cell.step)] = CellPublic(
                status=cell.status,  # type: ignore[arg-type]  # the store holds only CellStatus values
                headline=cell.headline,
                updated=cell.updated,
                late=late,
            )
    editing = room.live.editing.get(student_id)
    steps = room.session.steps
    if (
        editing is not None
        and 1 <= editing.step <= steps
        and time.time() - editing.at <= EDITING_SHOWN_SECONDS
    ):
        before = row.get(str(editing.step))
        if before is None or (before.status not in PENDING and editing.at > submitted.get(editing.step, 0.0)):
            row[str(editing.step)] = CellPublic(
                status="editing",
                headline=before.headline if before else "",
                updated=editing.at,
                last_status=before.status if before else None,
                late=before.late if before else False,
            )
    return row


def is_late(setup: StepSetup, submitted: float | None) -> bool:
    return (
        setup.kind == "assignment"
        and setup.deadline is not None
        and submitted is not None
        and submitted > setup.deadline
    )


def common_errors(students: list[Student], cells: list[StepStatus]) -> list[CommonError]:
    """Failing headlines that two or more current students share, most students first."""
    names = {s.id: s.name for s in students}
    groups: dict[tuple[int, str], list[str]] = collections.defaultdict(list)
    for cell in cells:
        if cell.status in FAILING and cell.student_id in names:
            groups[(cell.step, cell.headline)].append(names[cell.student_id])
    ranked = sorted(groups.items(), key=lambda item: (-len(item[1]), item[0]))
    return [
        CommonError(step=step, headline=line, students=sorted(who))
        for (step, line), who in ranked[:COMMON_SHOWN]
        if len(who) >= COMMON_AT_LEAST
    ]


# A cell a spreadsheet would read as a formula starts with one of these (OWASP, "CSV Injection"; the
# full-width forms too, which some spreadsheets fold into the ASCII ones).
# A pipe starts a DDE call in some; a spreadsheet may skip leading blanks before any of them.
FORMULA_STARTS = ("=", "+", "-", "@", "|", "\t", "\r", "\n", "\uff1d", "\uff0b", "\uff0d", "\uff20", "\uff5c")


def csv_cell(value: str) -> str:
    """A cell as text a spreadsheet shows and never evaluates: a formula character at its start, or
    after leading blanks, is escaped with a single quote (students' names and run headlines are theirs
    to choose)."""
    return (
        "'" + value
        if value.lstrip().startswith(FORMULA_STARTS) or value.startswith(FORMULA_STARTS)
        else value
    )


class _SafeWriter:
    def __init__(self, out: io.StringIO) -> None:
        # Every cell quoted too, as OWASP recommends: a separator inside a cell cannot start a new one.
        self.writer = csv.writer(out, lineterminator="\n", quoting=csv.QUOTE_ALL)

    def writerow(self, row: list[str]) -> None:
        self.writer.writerow([csv_cell(cell) for cell in row])


def progress_csv(progress: ClassProgress) -> str:
    """The grid as CSV: one row per student, a status and a headline column per step."""
    out = io.StringIO()
    writer = _SafeWriter(out)
    steps = range(1, progress.steps + 1)
    assignments = {s.step for s in progress.setup if s.kind == "assignment"}
    header = ["student"]
    for k in steps:
        header += [
            f"step {k} status",
            f"step {k} headline",
            *([f"step {k} late"] if k in assignments else []),
        ]
    writer.writerow(header)
    for student in progress.students:
        row = [student.name]
        for k in steps:
            cell = student.steps.get(str(k))
            row += [cell.status, cell.headline] if cell else ["not started", ""]
            if k in assignments:
                row.append("late" if cell and cell.late else "")
        writer.writerow(row)
    return out.getvalue()
