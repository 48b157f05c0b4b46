"""`/api/classes/{id}/…` while a class runs: the teacher's live grid and a student's live page as
Server-Sent Events, what a student's page reports (the step being edited, a raised hand), and what
the teacher sets (the step to follow, the hand queue, each step's kind: exercise, assignment with a
deadline, or challenge with a class board).

Both streams authenticate like the rest of the class API, with `Authorization: Bearer` (the teacher's
token, or the student's), so the pages read them with `fetch`, not `EventSource` (which cannot send
that header, and a token in the URL would end up in logs).
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Header, Request, Response
from fastapi.responses import StreamingResponse

from server.classroom import stream
from server.classroom.access import student_of, teacher_session
from server.classroom.live import STUDENT_KINDS
from server.classroom.progress import ClassLimits, boards, class_progress, load_room, setup_public
from server.classroom.room import Classroom
from server.deps import ClassesDep, ClassroomDep, ClientDep, QueueDep, SettingsDep, StreamsDep
from server.problems import ProblemError, problem_responses
from server.queue.problems import queue_problems
from server.store import class_steps
from server.store.class_steps import StepSetup
from server.store.classes import ClassSession, ClassStore, Student
from server.wire.classes import (
    EditingReport,
    FollowChange,
    HandChange,
    StepSetupChange,
    StepSetupPublic,
    StudentLive,
)

router = APIRouter(
    prefix="/api/classes", tags=["classes"], responses=problem_responses(400, 401, 403, 404, 422)
)
SSE: dict[int | str, dict[str, Any]] = {
    200: {"content": {"text/event-stream": {}}, "description": "Server-Sent Events"}
}
Auth = Header("", max_length=200)


@router.get("/{class_id}/events", response_class=StreamingResponse, responses=SSE)
async def teacher_events(
    class_id: str,
    request: Request,
    store: ClassesDep,
    queue: QueueDep,
    settings: SettingsDep,
    room: ClassroomDep,
    client: ClientDep,
    streams: StreamsDep,
    authorization: str = Auth,
) -> StreamingResponse:
    """`progress` events: the whole grid (as `GET …/progress`), now and after every change."""
    session = await asyncio.to_thread(teacher_session, store, class_id, authorization)

    async def grid() -> str:
        with queue_problems():
            loaded = await load_room(store, session, await room.live.state(class_id))
            return stream.as_json(await class_progress(store, queue, loaded, ClassLimits.of(settings)))

    views = stream.views(room.live, class_id, None, grid, request.is_disconnected, "progress")
    return StreamingResponse(
        streams.opened(client.address, views), media_type="text/event-stream", headers=stream.HEADERS
    )


@router.get("/{class_id}/live", response_class=StreamingResponse, responses=SSE)
async def student_events(
    class_id: str,
    request: Request,
    store: ClassesDep,
    room: ClassroomDep,
    client: ClientDep,
    streams: StreamsDep,
    authorization: str = Auth,
) -> StreamingResponse:
    """`class` events for a student's page: the step to follow, their hand, their name, the boards."""
    student = await asyncio.to_thread(student_of, store, class_id, authorization)
    session = await asyncio.to_thread(store.get, class_id)
    assert session is not None  # the student's class exists: student_of found them in it

    async def page() -> str:
        return stream.as_json(await student_view(store, session, student, room))

    views = stream.views(room.live, class_id, STUDENT_KINDS, page, request.is_disconnected, "class")
    return StreamingResponse(
        streams.opened(client.address, views), media_type="text/event-stream", headers=stream.HEADERS
    )


async def student_view(
    store: ClassStore, session: ClassSession, student: Student, room: Classroom
) -> StudentLive:
    """What one student's page shows live (`removed`: the teacher removed them while it was open)."""
    loaded = await load_room(store, session, await room.live.state(session.id))
    me = next((s for s in loaded.students if s.id == student.id), None)
    if me is None:
        return StudentLive(name=student.name, follow=None, hand=None, steps=[], boards=[], removed=True)
    place = next((i for i, (sid, _) in enumerate(loaded.live.hands, start=1) if sid == student.id), None)
    return StudentLive(
        name=me.name,
        follow=loaded.live.follow,
        hand=place,
        steps=[setup_public(loaded.setup(k)) for k in range(1, session.steps + 1)],
        boards=[b for b in boards(loaded) if not b.hidden],
    )


@router.post("/{class_id}/editing", status_code=204)
async def report_editing(
    class_id: str, body: EditingReport, store: ClassesDep, room: ClassroomDep, authorization: str = Auth
) -> Response:
    """A student's page says they are editing `step` (it sends this at most every few seconds)."""
    student = await asyncio.to_thread(student_of, store, class_id, authorization)
    session = await asyncio.to_thread(store.get, class_id)
    if session is None or body.step > session.steps:
        raise ProblemError(
            422, "Unknown step", f"the class has steps 1 to {session.steps if session else 0}", field="step"
        )
    if await room.live.report_editing(class_id, student.id, body.step):
        await room.live.publish(class_id, "editing")
    return Response(status_code=204)


@router.put("/{class_id}/hand", status_code=204)
async def set_hand(
    class_id: str, body: HandChange, store: ClassesDep, room: ClassroomDep, authorization: str = Auth
) -> Response:
    """A student raises or lowers their hand (a raised hand keeps its place in the queue)."""
    student = await asyncio.to_thread(student_of, store, class_id, authorization)
    await room.live.set_hand(class_id, student.id, body.raised)
    await room.live.publish(class_id, "hands")
    return Response(status_code=204)


@router.delete("/{class_id}/hands", status_code=204)
async def clear_hands(
    class_id: str, store: ClassesDep, room: ClassroomDep, authorization: str = Auth
) -> Response:
    await asyncio.to_thread(teacher_session, store, class_id, authorization)
    await room.live.clear_hands(class_id)
    await room.live.publish(class_id, "hands")
    return Response(status_code=204)


@router.delete("/{class_id}/hands/{student_id}", status_code=204)
async def lower_hand(
    class_id: str, student_id: str, store: ClassesDep, room: ClassroomDep, authorization: str = Auth
) -> Response:
    """The teacher answered one student: their hand goes down."""
    await asyncio.to_thread(teacher_session, store, class_id, authorization)
    await room.live.set_hand(class_id, student_id, False)
    await room.live.publish(class_id, "hands")
    return Response(status_code=204)


@router.put("/{class_id}/follow", status_code=204)
async def set_follow(
    class_id: str, body: FollowChange, store: ClassesDep, room: ClassroomDep, authorization: str = Auth
) -> Response:
    """The students' pages move to `step` (each student may opt out on their page); null: stop."""
    session = await asyncio.to_thread(teacher_session, store, class_id, authorization)
    if body.step is not None and body.step > session.steps:
        raise ProblemError(422, "Unknown step", f"the class has steps 1 to {session.steps}", field="step")
    await room.live.set_follow(class_id, body.step)
    await room.live.publish(class_id, "follow")
    return Response(status_code=204)


@router.put("/{class_id}/steps/{step}", response_model=StepSetupPublic)
async def set_up_step(
    class_id: str,
    step: int,
    body: StepSetupChange,
    store: ClassesDep,
    room: ClassroomDep,
    authorization: str = Auth,
) -> StepSetupPublic:
    """Make step `step` an exercise, an assignment (with a deadline) or a challenge (with a board)."""
    session = await asyncio.to_thread(teacher_session, store, class_id, authorization)
    setup = checked_setup(session, step, body)
    await asyncio.to_thread(class_steps.set_up, store.database, class_id, setup)
    await room.live.publish(class_id, "steps")
    return setup_public(setup)


def checked_setup(session: ClassSession, step: int, body: StepSetupChange) -> StepSetup:
    if not 1 <= step <= session.steps:
        raise ProblemError(422, "Unknown step", f"the class has steps 1 to {session.steps}", field="step")
    if body.kind == "assignment" and body.deadline is None:
        raise ProblemError(422, "Deadline needed", "an assignment has a deadline", field="deadline")
    if body.kind != "assignment" and body.deadline is not None:
        raise ProblemError(
            422, "Deadline without assignment", "only an assignment has a deadline", field="deadline"
        )
    return StepSetup(
        step=step,
        kind=body.kind,
        deadline=body.deadline,
        chip=body.chip if body.kind == "challenge" else "",
        board_hidden=body.board_hidden and body.kind == "challenge",
    )
