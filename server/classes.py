"""The teacher's view of a class: each student's latest status per step, settled against the queue,
the room's most common failing headlines, and the grid as CSV.

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
from typing import Any

from server.problems import ProblemError
from server.queue.interface import RunQueue, RunView
from server.store.classes import PENDING, ClassSession, ClassStore, StepStatus, Student
from server.wire.classes import (
    CellPublic,
    ClassBudget,
    ClassProgress,
    CommonError,
    StudentProgress,
)

# A headline shared by fewer students than this is one student's mistake, not the room's.
COMMON_AT_LEAST = 2
COMMON_SHOWN = 5
FAILING = frozenset({"mismatch", "error", "timeout", "resource_limit"})


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


async def settle(
    store: ClassStore, queue: RunQueue, class_id: str, cells: list[StepStatus]
) -> tuple[list[StepStatus], int]:
    """`cells` with every finished run's status filled in (and stored), and the furthest queue place."""
    out, furthest = [], 0
    for cell in cells:
        if cell.status not in PENDING:
            out.append(cell)
            continue
        view = await queue.view(cell.run_id)
        if view is not None and view.position:
            furthest = max(furthest, view.position)
        now = settled_status(view)
        if now is None:
            out.append(cell)
            continue
        (status, line), at = now, time.time()
        if status != "running":  # running is not final: the next read asks again
            await asyncio.to_thread(store.settle, class_id, cell.run_id, status, line, at)
        out.append(StepStatus(cell.student_id, cell.step, status, line, cell.run_id, at))
    return out, furthest


async def class_progress(
    store: ClassStore, queue: RunQueue, session: ClassSession, limit: int
) -> ClassProgress:
    """The teacher's grid of `session`, with the class's budget (`limit` runs at once)."""
    students = await asyncio.to_thread(store.students, session.id)
    cells = await asyncio.to_thread(store.progress, session.id)
    cells, furthest = await settle(store, queue, session.id, cells)
    by_student: dict[str, dict[str, CellPublic]] = collections.defaultdict(dict)
    for cell in cells:
        by_student[cell.student_id][str(cell.step)] = CellPublic(
            status=cell.status,  # type: ignore[arg-type]  # the store holds only CellStatus values
            headline=cell.headline,
            updated=cell.updated,
        )
    return ClassProgress(
        id=session.id,
        code=session.code,
        lesson=session.lesson,
        revision=session.revision,
        steps=session.steps,
        students=[StudentProgress(id=s.id, name=s.name, steps=by_student.get(s.id, {})) for s in students],
        common_errors=common_errors(students, cells),
        budget=ClassBudget(in_flight=sum(1 for c in cells if c.status in PENDING), limit=limit),
        furthest_in_queue=furthest,
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


def progress_csv(progress: ClassProgress) -> str:
    """The grid as CSV: one row per student, a status and a headline column per step."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    steps = range(1, progress.steps + 1)
    writer.writerow(["student", *(f"step {k} {what}" for k in steps for what in ("status", "headline"))])
    for student in progress.students:
        row = [student.name]
        for k in steps:
            cell = student.steps.get(str(k))
            row += [cell.status, cell.headline] if cell else ["not started", ""]
        writer.writerow(row)
    return out.getvalue()
