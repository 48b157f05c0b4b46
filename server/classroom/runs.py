"""A class run's admission (`server.submit.Admission`): a run with a `class_token` is counted against
the student and their class instead of the address, checked against its lesson step
(`lesson_check`), recorded on the teacher's grid when it is queued, and watched to its end so the grid
hears of it (`room`); and a removed student's runs, cancelled."""

from __future__ import annotations

import asyncio

from sandbox.protocol import Job
from server.classroom.judging import Judging
from server.classroom.lesson_check import lesson_checked
from server.classroom.progress import class_member, first_status
from server.classroom.room import Classroom, class_judging
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
            # A result at once (a cache hit) is read as the grid reads any: `judging`.
            judged = await class_judging(classes, student.class_id) if run.state == "done" else Judging()
            await asyncio.to_thread(classes.record, student, step, *first_status(run, step, judged), run.id)
            if room is not None:
                room.watch(classes, queue, student, step, run.id)  # the teacher's grid hears of its end

        # Counted against the student, the class's budget and the address it came from (with its own
        # runs: `server.queue.admission.caps`).
        member = in_class_session(student.class_id, student.id, owner, member=client.address)
        return Admitted(checked, member, queued)

    return admit


async def cancel_student_runs(classes: ClassStore, queue: RunQueue, class_id: str, student_id: str) -> None:
    """Cancel every class run of the student still queued or running, each step's and not only its
    latest (a removed student's runs no longer hold the class's budget)."""
    owner = await asyncio.to_thread(classes.owner_of, class_id)
    student = in_class_session(class_id, student_id, owner)
    for run_id in await queue.runs_in_flight(student.address, student.browser):
        await queue.cancel(run_id)
