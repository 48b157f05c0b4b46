"""A class run is checked against its lesson step, not against whatever the student's file says.

A step that is a catalog exercise takes runs of that exercise only (422 otherwise): their verdict is
the entry's reference. A scratch step whose file defines a reference has every class run on it
checked by that file's `make_inputs` and `reference` (`Job.reference_source`): a student's own
`reference` in their file is not what judges them, so a file with an unrelated op and a reference to
match it is a mismatch, not a pass, and the class board ranks only runs the lesson's reference
checked (`server.classroom.board`).
"""

from __future__ import annotations

from dataclasses import replace

from sandbox.protocol import Job
from server.classroom.lesson_facts import lesson_facts
from server.problems import ProblemError
from server.store.classes import ClassStore, Student
from server.store.lessons import lesson_store


def lesson_checked(store: ClassStore, student: Student, step: int, job: Job) -> Job:
    """`job` as a class run on `step` runs: checked against the lesson step (see the module doc)."""
    session = store.get(student.class_id)
    lesson = lesson_store(store.database).get(session.lesson, session.revision) if session else None
    if session is None or lesson is None or not 1 <= step <= len(lesson.record.steps):
        return job
    given = lesson.record.steps[step - 1]
    ran = job.entry.slug if job.entry is not None else None
    if ran != given.entry:
        wanted = (
            f"the catalog exercise {given.entry!r}" if given.entry else "a scratch file (no catalog entry)"
        )
        raise ProblemError(
            422,
            "Not this step's exercise",
            f"step {step} of this lesson is {wanted}: run it as that",
            field="entry",
        )
    # Checked by the lesson: on a chip the host also times its program itself (`sandbox.backends.rerun`).
    if given.entry is not None:
        return replace(job, rerun=True)
    facts = lesson_facts(store, session)  # parsed once per lesson revision, not once per run
    if step not in facts.reference_steps:
        return job
    return replace(job, reference_source=given.source, rerun=True, expects_kernel=step in facts.kernel_steps)
