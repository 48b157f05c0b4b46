"""`/api/classes`: class sessions. A teacher starts one from a lesson (the answer carries the join code
and the teacher token, once); students join with the code and a nickname (each gets a student token,
once); the teacher reads everyone's progress with `Authorization: Bearer <teacher token>`, as JSON or
CSV, may rename or remove a student (their runs in flight are cancelled), and decides who may join
(closed or open, students per address: `server.store.class_joins`).

Store calls block, so the async handlers (those that also ask the queue) move them to a thread.
"""

from __future__ import annotations

import asyncio
import math

from fastapi import APIRouter, Header, Response

from server.classroom.access import teacher_session
from server.classroom.export import progress_csv
from server.classroom.progress import ClassLimits, class_progress, joins_public, load_room
from server.classroom.runs import cancel_student_runs
from server.deps import ClassesDep, ClassroomDep, ClientDep, LessonsDep, QueueDep, QuotaDep, SettingsDep
from server.problems import ProblemError, problem_responses
from server.queue.problems import queue_problems
from server.store import class_joins
from server.store.class_joins import ClassClosedError, Door, JoinsPerAddressError, RejoinRefusedError
from server.store.classes import (
    ClassFullError,
    UnknownClassError,
)
from server.wire.classes import (
    ClassCreate,
    ClassCreated,
    ClassJoin,
    ClassJoined,
    ClassJoins,
    ClassProgress,
    JoinsChange,
    StudentRename,
    nickname,
)

router = APIRouter(prefix="/api/classes", tags=["classes"], responses=problem_responses(400, 404, 422))
TEACHER = problem_responses(401, 403)


@router.post("", status_code=201, response_model=ClassCreated, responses=problem_responses(429))
def create_class(
    body: ClassCreate,
    store: ClassesDep,
    lessons: LessonsDep,
    quota: QuotaDep,
    client: ClientDep,
    response: Response,
) -> ClassCreated:
    quota.admit(client.address)  # a class is a save: the address's save rate bounds how many it makes
    lesson = lessons.get(body.lesson, body.revision)
    if lesson is None:
        raise ProblemError(
            404,
            "Unknown lesson",
            f"no lesson {body.lesson!r} (revision {body.revision or 'latest'})",
            field="lesson",
        )
    session, token = store.create(lesson.lesson, lesson.number, len(lesson.record.steps), client.address)
    response.headers["Location"] = f"/api/classes/{session.id}/progress"
    return ClassCreated(
        id=session.id,
        code=session.code,
        teacher_token=token,
        lesson=session.lesson,
        revision=session.revision,
        steps=session.steps,
        join_url=f"/c/{session.code}",
        teacher_url=f"/t/{session.id}",
    )


@router.post(
    "/{code}/join",
    status_code=201,
    response_model=ClassJoined,
    responses=problem_responses(403, 409, 429),
)
async def join_class(
    code: str,
    body: ClassJoin,
    store: ClassesDep,
    room: ClassroomDep,
    client: ClientDep,
    settings: SettingsDep,
) -> ClassJoined:
    wait = await room.live.admit_join(client.address, settings.class_joins_per_minute)
    if wait:
        raise ProblemError(
            429,
            "Too many joins",
            f"this network address joined classes too often; try again in {math.ceil(wait)} s",
            headers={"Retry-After": str(math.ceil(wait))},
        )
    name = nickname(body.name)
    try:
        session, student, token = await asyncio.to_thread(
            store.join, code, name, settings.class_students, client.address, client.browser
        )
    except (
        UnknownClassError,
        ClassFullError,
        ClassClosedError,
        JoinsPerAddressError,
        RejoinRefusedError,
    ) as no:
        raise _join_refused(code, no) from None
    await room.live.publish(session.id, "students")
    return ClassJoined(
        student_token=token,
        student_id=student.id,
        name=student.name,
        class_id=session.id,
        lesson=session.lesson,
        revision=session.revision,
        steps=session.steps,
        lesson_url=f"/l/{session.lesson}?rev={session.revision}",
    )


def _join_refused(code: str, refused: Exception) -> ProblemError:
    """Why a join is refused, as the student's page shows it."""
    if isinstance(refused, UnknownClassError):
        return ProblemError(
            404, "Unknown class", f"no class has the code {code!r}; check it with your teacher"
        )
    if isinstance(refused, ClassFullError):
        return ProblemError(
            409, "Class full", f"this class has {refused.limit} students, as many as a class may have"
        )
    if isinstance(refused, ClassClosedError):
        return ProblemError(
            403, "Class closed", "the teacher closed this class to new students; ask them to open it again"
        )
    if isinstance(refused, JoinsPerAddressError):
        return ProblemError(
            429,
            "Too many students from this address",
            f"{refused.limit} students of this class joined from your network address, as many as one "
            "address may have; the teacher can allow more (a room behind one school address)",
        )
    assert isinstance(refused, RejoinRefusedError)
    minutes = max(1, math.ceil(refused.retry_after / 60))
    return ProblemError(
        403,
        "Removed from this class",
        f"the teacher removed the student who joined from this browser; it can join again in {minutes} min",
        headers={"Retry-After": str(math.ceil(refused.retry_after))},
    )


@router.put("/{class_id}/joins", response_model=ClassJoins, responses=TEACHER)
async def set_joins(
    class_id: str,
    body: JoinsChange,
    store: ClassesDep,
    room: ClassroomDep,
    settings: SettingsDep,
    authorization: str = Header("", max_length=200),
) -> ClassJoins:
    """Close the class to new students or open it again, and set how many one address may have."""
    await asyncio.to_thread(teacher_session, store, class_id, authorization)
    if body.per_address is not None and body.per_address > settings.class_students:
        raise ProblemError(
            422,
            "Too many per address",
            f"`per_address` is at most {settings.class_students}, the students a class may have",
            field="per_address",
        )
    door = Door(closed=not body.open, per_address=body.per_address)
    await asyncio.to_thread(class_joins.set_door, store.database, class_id, door)
    await room.live.publish(class_id, "joins")
    return joins_public(door, ClassLimits.of(settings))


@router.get("/{class_id}/progress", response_model=ClassProgress, responses=TEACHER)
async def get_progress(
    class_id: str,
    store: ClassesDep,
    queue: QueueDep,
    settings: SettingsDep,
    room: ClassroomDep,
    authorization: str = Header("", max_length=200),
) -> ClassProgress:
    session = await asyncio.to_thread(teacher_session, store, class_id, authorization)
    with queue_problems():
        grid = await load_room(store, session, await room.live.state(session.id))
        return await class_progress(store, queue, grid, ClassLimits.of(settings))


@router.get(
    "/{class_id}/progress.csv",
    response_class=Response,
    responses={200: {"content": {"text/csv": {}}, "description": "The grid as CSV"}, **TEACHER},
)
async def get_progress_csv(
    class_id: str,
    store: ClassesDep,
    queue: QueueDep,
    settings: SettingsDep,
    room: ClassroomDep,
    authorization: str = Header("", max_length=200),
) -> Response:
    progress = await get_progress(class_id, store, queue, settings, room, authorization)
    return Response(
        progress_csv(progress),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="class-{progress.code}.csv"'},
    )


@router.patch("/{class_id}/students/{student_id}", status_code=204, responses=TEACHER)
async def rename_student(
    class_id: str,
    student_id: str,
    body: StudentRename,
    store: ClassesDep,
    room: ClassroomDep,
    authorization: str = Header("", max_length=200),
) -> Response:
    """Give a student another nickname (the grid, the CSV and the board show it; their page too)."""
    await asyncio.to_thread(teacher_session, store, class_id, authorization)
    if not await asyncio.to_thread(store.rename, class_id, student_id, nickname(body.name)):
        raise _unknown_student(class_id, student_id)
    await room.live.publish(class_id, "students")
    return Response(status_code=204)


@router.delete(
    "/{class_id}/students/{student_id}", status_code=204, responses={**TEACHER, **problem_responses(503)}
)
async def remove_student(
    class_id: str,
    student_id: str,
    store: ClassesDep,
    queue: QueueDep,
    room: ClassroomDep,
    authorization: str = Header("", max_length=200),
) -> Response:
    """Remove a student: their token stops working, every class run of theirs still queued or running
    is cancelled (the class's budget frees at once), and their browser cannot join again for a while."""
    await asyncio.to_thread(teacher_session, store, class_id, authorization)
    if not await asyncio.to_thread(store.remove, class_id, student_id):
        raise _unknown_student(class_id, student_id)
    await room.live.forget_student(class_id, student_id)
    with queue_problems():
        await cancel_student_runs(store, queue, class_id, student_id)
    await room.live.publish(class_id, "students")
    return Response(status_code=204)


def _unknown_student(class_id: str, student_id: str) -> ProblemError:
    return ProblemError(404, "Unknown student", f"class {class_id!r} has no student {student_id!r}")
