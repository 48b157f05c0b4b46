"""`/api/lessons`: save a titled, ordered list of editor states with notes under one short id.

A step may name an existing share instead of carrying its own state; the share's content is copied
in when the lesson is saved, so a lesson never changes meaning. Every step is checked like a share
(source size, catalog entry), and errors name the step. Handlers are plain `def`: the SQLite store
blocks, so FastAPI runs them in its thread pool.
"""

from __future__ import annotations

from fastapi import APIRouter, Response

from sandbox.catalog import Catalog
from server import versions
from server.deps import CatalogDep, LessonsDep, SettingsDep, SharesDep, VersionsDep
from server.editor_state import check_editor_state, iso_utc
from server.lessons import NOTE_BYTES, Lesson, LessonRecord, LessonStep
from server.problems import ProblemError, problem_responses
from server.schemas import (
    LessonCreate,
    LessonCreated,
    LessonPublic,
    LessonStepCreate,
    LessonStepPublic,
    RunOptions,
)
from server.settings import Settings
from server.shares import ShareStore

router = APIRouter(prefix="/api/lessons", tags=["lessons"], responses=problem_responses(400, 404, 413, 422))


def lesson_url(lesson_id: str) -> str:
    return f"/l/{lesson_id}"


@router.post(
    "",
    status_code=201,
    response_model=LessonCreated,
    responses={200: {"model": LessonCreated, "description": "Saved before: the same id"}},
)
def create_lesson(
    body: LessonCreate,
    store: LessonsDep,
    shares: SharesDep,
    catalog: CatalogDep,
    settings: SettingsDep,
    running: VersionsDep,
    response: Response,
) -> LessonCreated:
    steps = tuple(
        resolve_step(index, step, shares, settings, catalog) for index, step in enumerate(body.steps)
    )
    record = LessonRecord(title=body.title, steps=steps, versions=versions.recorded(running))
    lesson, new = store.put(record)
    if not new:
        response.status_code = 200
    response.headers["Location"] = f"/api/lessons/{lesson.id}"
    return LessonCreated(id=lesson.id, url=lesson_url(lesson.id))


def resolve_step(
    index: int, step: LessonStepCreate, shares: ShareStore, settings: Settings, catalog: Catalog
) -> LessonStep:
    """Step `index` with its full content (copied from its share, if it names one), checked."""
    where, field = f"step {index + 1}: ", f"steps.{index}."
    note_bytes = len(step.note.encode())
    if note_bytes > NOTE_BYTES:
        raise ProblemError(
            422,
            "Note too long",
            f"{where}the note is {note_bytes:,} bytes; the limit is {NOTE_BYTES:,} bytes",
            field=f"{field}note",
        )
    if step.share is not None:
        share = shares.get(step.share)
        if share is None:
            raise ProblemError(422, "Unknown share", f"{where}no share {step.share!r}", field=f"{field}share")
        state = share.record
        source, entry, chip, options = state.source, state.entry, state.chip, state.options
    else:
        assert step.source is not None  # the schema requires `source` when there is no `share`
        source, entry, chip, options = step.source, step.entry, step.chip, step.options.model_dump()
    check_editor_state(source, entry, settings, catalog, where=where, field=field)
    return LessonStep(source=source, entry=entry, chip=chip, options=options, note=step.note)


@router.get("/{lesson_id}", response_model=LessonPublic)
def get_lesson(lesson_id: str, store: LessonsDep) -> LessonPublic:
    lesson = store.get(lesson_id)
    if lesson is None:
        raise ProblemError(404, "Unknown lesson", f"no lesson {lesson_id!r}; check the link")
    return public(lesson)


def public(lesson: Lesson) -> LessonPublic:
    record = lesson.record
    steps = [
        LessonStepPublic(
            source=step.source,
            entry=step.entry,
            chip=step.chip,  # type: ignore[arg-type]  # validated as a ChipName when it was stored
            options=RunOptions(**step.options),
            note=step.note,
        )
        for step in record.steps
    ]
    return LessonPublic(
        id=lesson.id,
        url=lesson_url(lesson.id),
        title=record.title,
        steps=steps,
        versions=record.versions,
        created=iso_utc(lesson.created),
    )
