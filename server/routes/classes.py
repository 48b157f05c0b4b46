"""`/api/classes`: class sessions. A teacher starts one from a lesson (the answer carries the join code
and the teacher token, once); students join with the code and a nickname (each gets a student token,
once); the teacher reads everyone's progress with `Authorization: Bearer <teacher token>`, as JSON or
CSV, and may rename or remove a student.

Store calls block, so the async handlers (those that also ask the queue) move them to a thread.
"""

from __future__ import annotations

import asyncio
import math

from fastapi import APIRouter, Header, Response

from server.classroom.access import teacher_session
from server.classroom.progress import class_progress, load_room, progress_csv
from server.deps import ClassesDep, ClassroomDep, ClientDep, LessonsDep, QueueDep, QuotaDep, SettingsDep
from server.problems import ProblemError, problem_responses
from server.queue.engine import class_cap
from server.queue.problems import queue_problems
from server.store.classes import (
    ClassFullError,
    UnknownClassError,
)
from server.wire.classes import (
    ClassCreate,
    ClassCreated,
    ClassJoin,
    ClassJoined,
    ClassProgress,
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
    "/{code}/join", status_code=201, response_model=ClassJoined, responses=problem_responses(409, 429)
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
        session, student, token = await asyncio.to_thread(store.join, code, name, settings.class_students)
    except UnknownClassError:
        raise ProblemError(
            404, "Unknown class", f"no class has the code {code!r}; check it with your teacher"
        ) from None
    except ClassFullError as full:
        raise ProblemError(
            409, "Class full", f"this class has {full.limit} students, as many as a class may have"
        ) from None
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
        return await class_progress(store, queue, grid, class_cap(settings.class_queue, settings.queue_size))


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


@router.delete("/{class_id}/students/{student_id}", status_code=204, responses=TEACHER)
async def remove_student(
    class_id: str,
    student_id: str,
    store: ClassesDep,
    room: ClassroomDep,
    authorization: str = Header("", max_length=200),
) -> Response:
    await asyncio.to_thread(teacher_session, store, class_id, authorization)
    if not await asyncio.to_thread(store.remove, class_id, student_id):
        raise _unknown_student(class_id, student_id)
    await room.live.forget_student(class_id, student_id)
    await room.live.publish(class_id, "students")
    return Response(status_code=204)


def _unknown_student(class_id: str, student_id: str) -> ProblemError:
    return ProblemError(404, "Unknown student", f"class {class_id!r} has no student {student_id!r}")
