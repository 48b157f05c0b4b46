"""The teacher's view of a class: each student's latest status per step, settled against the queue,
with who is editing what, late runs, raised hands, the room's most common failing headlines, the
class boards, the class's budget as the queue counts it, and who may join (the grid as CSV:
`server.classroom.export`).

A student's run is recorded as `queued` when it is submitted (with its run id); reading the
progress asks the queue about every run not yet settled and writes back the ones that are done. The
queue (in this process, or Redis for several web servers) and the database are both shared, so any
web server answers the same grid.
"""

from __future__ import annotations

import asyncio
import collections
import time
from dataclasses import dataclass, field, replace
from typing import Any

from sandbox.protocol import RunStatus
from server.classroom import judging
from server.classroom.board import board, challenge_chip, score
from server.classroom.judging import Judging
from server.classroom.lesson_facts import lesson_facts
from server.classroom.live import LiveState
from server.clients import class_group
from server.problems import ProblemError
from server.queue.engine import class_cap
from server.queue.interface import RunQueue, RunView
from server.settings import Settings
from server.store import class_joins, class_steps
from server.store.class_joins import Door
from server.store.class_steps import Mark, StepSetup
from server.store.classes import PENDING, ClassSession, ClassStore, StepStatus, Student
from server.wire.classes import (
    Board,
    CellPublic,
    ClassBudget,
    ClassJoins,
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


def first_status(view: RunView, step: int, judged: Judging) -> tuple[str, str]:
    """A class run's cell when it is submitted: queued, or its result at once (a cache hit)."""
    return settled_status(view, step, judged) or ("queued", "")


def settled_status(view: RunView | None, step: int, judged: Judging) -> tuple[str, str] | None:
    """The (status, headline) a pending cell on `step` becomes, or None while the run is still queued
    (a lesson step that asks for a Pallas kernel reads a pass without one as `no_kernel`: `judging`)."""
    if view is None:
        return "lost", "the run was forgotten before it was read (its result expired)"
    if view.state == "done" and view.result is not None:
        found = judging.verdict(view.result, step, judged)
        return found or (str(view.result.get("status", "error")), headline(view.result))
    return ("running", "") if view.state == "running" else None


@dataclass(frozen=True)
class ClassLimits:
    """The server's bounds a class's grid shows: the class budget's runs at once, and its students."""

    budget: int
    students: int

    @classmethod
    def of(cls, settings: Settings) -> ClassLimits:
        return cls(class_cap(settings.class_queue, settings.queue_size), settings.class_students)


@dataclass(frozen=True)
class Room:
    """What a class is made of besides its cells: students, live state, step setups and marks, the
    chip each step runs on in the lesson, the steps whose lesson file asks for a Pallas kernel, and
    who may join (the teacher's door)."""

    session: ClassSession
    students: list[Student]
    live: LiveState
    setups: dict[int, StepSetup]
    marks: list[Mark]
    lesson_chips: tuple[str, ...]
    kernel_steps: frozenset[int] = frozenset()
    door: Door = field(default_factory=Door)

    def setup(self, step: int) -> StepSetup:
        return self.setups.get(step, StepSetup(step))

    def chip(self, step: int) -> str:
        """The chip a challenge step ranks on: the teacher's, else the lesson step's."""
        chips = self.lesson_chips
        return challenge_chip(self.setup(step), chips[step - 1] if step <= len(chips) else "")


async def settle(
    store: ClassStore, queue: RunQueue, class_id: str, cells: list[StepStatus], judged: Judging
) -> tuple[list[StepStatus], int, bool]:
    """`cells` with every finished run's status filled in (and stored), the furthest queue place, and
    whether a board time was kept (`judged`: the challenge steps' chips, the steps asking for a kernel)."""
    out, furthest, scored = [], 0, False
    for cell in cells:
        if cell.status not in PENDING:
            out.append(cell)
            continue
        view = await queue.view(cell.run_id)
        if view is not None and view.position:
            furthest = max(furthest, view.position)
        settled, kept = await settle_one(store, class_id, cell, view, judged)
        out.append(settled)
        scored |= kept
    return out, furthest, scored


async def settle_one(
    store: ClassStore, class_id: str, cell: StepStatus, view: RunView | None, judged: Judging
) -> tuple[StepStatus, bool]:
    """The cell as `view` (its run now) says; a final status is stored, with the board's time (then
    True: a board may have changed)."""
    now = settled_status(view, cell.step, judged)
    if now is None:
        return cell, False
    (status, line), at = now, time.time()
    if status != "running":  # running is not final: the next read asks again
        await asyncio.to_thread(store.settle, class_id, cell.run_id, status, line, at)
        chip = judged.chips.get(cell.step)
        result = view.result if view is not None and status == "passed" else None
        found = score(result, chip) if chip and result else None
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


def challenge_chips(room: Room) -> dict[int, str]:
    return {k: room.chip(k) for k, s in room.setups.items() if s.kind == "challenge"}


def judging_of(room: Room) -> Judging:
    return Judging(challenge_chips(room), room.kernel_steps)


async def load_room(store: ClassStore, session: ClassSession, live: LiveState) -> Room:
    """The class's students, setups, marks and door from the database, with `live` state."""
    facts = await asyncio.to_thread(lesson_facts, store, session)
    students = await asyncio.to_thread(store.students, session.id)
    setups = await asyncio.to_thread(class_steps.setups, store.database, session.id)
    marks = await asyncio.to_thread(class_steps.marks, store.database, session.id)
    door = await asyncio.to_thread(class_joins.door, store.database, session.id)
    return Room(session, students, live, setups, marks, facts.chips, facts.kernel_steps, door)


async def in_flight(store: ClassStore, queue: RunQueue, class_id: str) -> int:
    """Runs queued or running against the class's budget, as the queue counts them (its 429 too):
    every run of every class its owner started, and the owner's own."""
    owner = await asyncio.to_thread(store.owner_of, class_id)
    return len(await queue.runs_in_flight(class_group(owner)))


def joins_public(door: Door, limits: ClassLimits) -> ClassJoins:
    default = class_joins.default_per_address(limits.students)
    return ClassJoins(
        open=not door.closed, per_address=door.per_address or default, per_address_default=default
    )


async def class_progress(
    store: ClassStore, queue: RunQueue, room: Room, limits: ClassLimits
) -> ClassProgress:
    """The teacher's grid of the class, with the class's budget and door."""
    session = room.session
    cells = await asyncio.to_thread(store.progress, session.id)
    settled, furthest, scored = await settle(store, queue, session.id, cells, judging_of(room))
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
        budget=ClassBudget(in_flight=await in_flight(store, queue, session.id), limit=limits.budget),
        joins=joins_public(room.door, limits),
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
