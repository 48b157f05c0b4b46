"""`/api/classes`: class sessions. A teacher starts one from a lesson (the answer carries the join code
and the teacher token, once); students join with the code and a nickname (each gets a student token,
once); the teacher reads everyone's progress with `Authorization: Bearer <teacher token>`, as JSON or
CSV, and may rename or remove a student.

Store calls block, so the async handlers (those that also ask the queue) move them to a thread.
"""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Header, Response

from server.classes import class_progress, progress_csv
from server.deps import ClassesDep, LessonsDep, QueueDep, SettingsDep
from server.problems import ProblemError, problem_responses
from server.queue.problems import queue_problems
from server.store.classes import ClassSession, ClassStore, ClassTokenError, UnknownClassError
from server.wire.classes import ClassCreate, ClassCreated, ClassJoin, ClassJoined, ClassProgress

router = APIRouter(prefix="/api/classes", tags=["classes"], responses=problem_responses(400, 404, 422))
TEACHER = problem_responses(401, 403)


@router.post("", status_code=201, response_model=ClassCreated)
def create_class(
    body: ClassCreate, store: ClassesDep, lessons: LessonsDep, response: Response
) -> ClassCreated:
    lesson = lessons.get(body.lesson, body.revision)
    if lesson is None:
        raise ProblemError(
            404,
            "Unknown lesson",
            f"no lesson {body.lesson!r} (revision {body.revision or 'latest'})",
            field="lesson",
        )
    session, token = store.create(lesson.lesson, lesson.number, len(lesson.record.steps))
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


@router.post("/{code}/join", status_code=201, response_model=ClassJoined)
def join_class(code: str, body: ClassJoin, store: ClassesDep) -> ClassJoined:
    try:
        session, student, token = store.join(code, body.name.strip() or "student")
    except UnknownClassError:
        raise ProblemError(
            404, "Unknown class", f"no class has the code {code!r}; check it with your teacher"
        ) from None
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
    authorization: str = Header("", max_length=200),
) -> ClassProgress:
    session = await asyncio.to_thread(teacher_session, store, class_id, authorization)
    with queue_problems():
        return await class_progress(store, queue, session, settings.class_queue)


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
    authorization: str = Header("", max_length=200),
) -> Response:
    progress = await get_progress(class_id, store, queue, settings, authorization)
    return Response(
        progress_csv(progress),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="class-{progress.code}.csv"'},
    )


@router.delete("/{class_id}/students/{student_id}", status_code=204, responses=TEACHER)
def remove_student(
    class_id: str, student_id: str, store: ClassesDep, authorization: str = Header("", max_length=200)
) -> Response:
    teacher_session(store, class_id, authorization)
    if not store.remove(class_id, student_id):
        raise ProblemError(404, "Unknown student", f"class {class_id!r} has no student {student_id!r}")
    return Response(status_code=204)


def teacher_session(store: ClassStore, class_id: str, authorization: str) -> ClassSession:
    """The class, if `authorization` is `Bearer <its teacher token>`: else 401, 403 or 404."""
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise ProblemError(
            401,
            "Teacher token needed",
            "send the class's teacher token as `Authorization: Bearer <token>` (from the teacher link)",
            headers={"WWW-Authenticate": 'Bearer realm="class"'},
        )
    try:
        return store.check_teacher(class_id, token.strip())
    except UnknownClassError:
        raise ProblemError(404, "Unknown class", f"no class {class_id!r}") from None
    except ClassTokenError:
        raise ProblemError(
            403, "Not your class", f"the token is not class {class_id!r}'s teacher token"
        ) from None
