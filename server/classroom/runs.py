"""A class run's admission (`server.submit.Admission`): a run with a `class_token` is counted against
the student and their class instead of the address, checked against its lesson step
(`lesson_check`), recorded on the teacher's grid when it is queued, and watched to its end so the grid
hears of it (`room`)."""

from __future__ import annotations

import asyncio

from sandbox.protocol import Job
from server.classroom.lesson_check import lesson_checked
from server.classroom.progress import class_member, first_status
from server.classroom.room import Classroom
from server.clients import Client, in_class_session
from server.queue.interface import RunQueue, RunView
from server.store.classes import ClassStore
from server.submit import Admission, Admitted
from server.wire.schemas import RunRequest


def class_admission(classes: ClassStore, queue: RunQueue, room: Classroom | None) -> Admission:
    """The admission `start_run` takes for a run that may be a class member's."""

    async def admit(body: RunRequest, job: Job, client: Client) -> Admitted:
        student = await asyncio.to_thread(class_member, classes, body.class_token, body.step)
        if student is None or body.step is None:  # class_member refuses a token without a step
            return Admitted(job, client)
        step = body.step
        owner = await asyncio.to_thread(classes.owner_of, student.class_id)
        checked = await asyncio.to_thread(lesson_checked, classes, student, step, job)

        async def queued(run: RunView) -> None:
            await asyncio.to_thread(classes.record, student, step, *first_status(run), run.id)
            if room is not None:
                room.watch(classes, queue, student, step, run.id)  # the teacher's grid hears of its end

        return Admitted(checked, in_class_session(student.class_id, student.id, owner), queued)

    return admit
