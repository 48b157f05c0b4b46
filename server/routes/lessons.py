"""`/api/lessons`: lessons as documents. Create one (the answer carries its edit token, once), save a
new revision with that token, read the latest or any revision, list the revisions.

A step may name an existing share instead of carrying its own state; the share's content is copied
in when the revision is saved, so a revision never changes meaning. Every step is checked like a
share (source size, catalog entry), and errors name the step. The edit token travels in the
`X-Lesson-Token` header (the page keeps it in the edit link's fragment, which no server sees).
Handlers are plain `def`: the SQLite store blocks, so FastAPI runs them in its thread pool.
"""

from __future__ import annotations

from dataclasses import asdict

from fastapi import APIRouter, Header, Response

from sandbox.catalog.entries import Catalog
from server import versions
from server.deps import (
    CatalogDep,
    ClientDep,
    DatabaseDep,
    LessonsDep,
    QuotaDep,
    SettingsDep,
    SharesDep,
    VersionsDep,
)
from server.problems import ProblemError, problem_responses
from server.settings import Settings
from server.store.editor_state import check_editor_state, iso_utc, reopened
from server.store.lessons import (
    LessonRecord,
    LessonRevision,
    LessonStep,
    LessonTokenError,
    UnknownLessonError,
    new_token,
)
from server.store.shares import ShareStore
from server.store.sqlite import canonical_json
from server.wire.schemas import (
    NOTE_BYTES,
    LessonCreate,
    LessonCreated,
    LessonPublic,
    LessonRevisionSummary,
    LessonStepCreate,
    LessonStepPublic,
    RunOptions,
    VersionInfo,
)

router = APIRouter(
    prefix="/api/lessons", tags=["lessons"], responses=problem_responses(400, 404, 413, 422, 429, 507)
)
TOKEN_HEADER = "X-Lesson-Token"


def lesson_url(lesson_id: str) -> str:
    return f"/l/{lesson_id}"


def revision_url(lesson_id: str, number: int) -> str:
    return f"/l/{lesson_id}?rev={number}"


@router.post("", status_code=201, response_model=LessonCreated)
def create_lesson(
    body: LessonCreate,
    store: LessonsDep,
    shares: SharesDep,
    catalog: CatalogDep,
    settings: SettingsDep,
    running: VersionsDep,
    quota: QuotaDep,
    database: DatabaseDep,
    client: ClientDep,
    response: Response,
) -> LessonCreated:
    quota.admit(client.address)
    token = new_token()
    record = record_of(body, shares, settings, catalog, running)
    quota.charge(database, client.address, "lessons", canonical_json(asdict(record)))
    lesson = store.create(record, token)
    response.headers["Location"] = f"/api/lessons/{lesson.lesson}"
    return _created(lesson, token)


@router.put(
    "/{lesson_id}",
    status_code=201,
    response_model=LessonCreated,
    responses={
        200: {"model": LessonCreated, "description": "The latest revision already holds this: no new one"},
        **problem_responses(403),
    },
)
def revise_lesson(
    lesson_id: str,
    body: LessonCreate,
    store: LessonsDep,
    shares: SharesDep,
    catalog: CatalogDep,
    settings: SettingsDep,
    running: VersionsDep,
    quota: QuotaDep,
    database: DatabaseDep,
    client: ClientDep,
    response: Response,
    token: str = Header("", alias=TOKEN_HEADER, max_length=128),
) -> LessonCreated:
    """Save `body` as the lesson's next revision (200 and the same revision if nothing changed)."""
    quota.admit(client.address)
    record = record_of(body, shares, settings, catalog, running)
    quota.charge(database, client.address, "lessons", canonical_json(asdict(record)))
    try:
        lesson, new = store.revise(lesson_id, record, token)
    except UnknownLessonError:
        raise _unknown(lesson_id) from None
    except LessonTokenError:
        raise ProblemError(
            403, "Not your lesson", f"the edit token does not open lesson {lesson_id!r}; use its edit link"
        ) from None
    response.status_code = 201 if new else 200
    return _created(lesson)


@router.get("/{lesson_id}", response_model=LessonPublic)
def get_lesson(lesson_id: str, store: LessonsDep) -> LessonPublic:
    lesson = store.get(lesson_id)
    if lesson is None:
        raise _unknown(lesson_id)
    return public(lesson)


@router.get("/{lesson_id}/revisions", response_model=list[LessonRevisionSummary])
def list_revisions(lesson_id: str, store: LessonsDep) -> list[LessonRevisionSummary]:
    found = store.revisions(lesson_id)
    if found is None:
        raise _unknown(lesson_id)
    return [
        LessonRevisionSummary(
            revision=r.number,
            revised=iso_utc(r.revised),
            title=r.title,
            steps=r.steps,
            revision_url=revision_url(lesson_id, r.number),
        )
        for r in found
    ]


@router.get("/{lesson_id}/revisions/{number}", response_model=LessonPublic)
def get_revision(lesson_id: str, number: int, store: LessonsDep) -> LessonPublic:
    lesson = store.get(lesson_id, number)
    if lesson is None:
        if store.get(lesson_id) is None:
            raise _unknown(lesson_id)
        raise ProblemError(404, "Unknown revision", f"lesson {lesson_id!r} has no revision {number}")
    return public(lesson)


def _unknown(lesson_id: str) -> ProblemError:
    return ProblemError(404, "Unknown lesson", f"no lesson {lesson_id!r}; check the link")


def _created(lesson: LessonRevision, token: str | None = None) -> LessonCreated:
    """The links to a saved revision; with `token` (only when the lesson is created), the edit link."""
    url = lesson_url(lesson.lesson)
    return LessonCreated(
        id=lesson.lesson,
        url=url,
        revision=lesson.number,
        revision_url=revision_url(lesson.lesson, lesson.number),
        token=token,
        edit_url=f"{url}#edit={token}" if token else None,
    )


def record_of(
    body: LessonCreate, shares: ShareStore, settings: Settings, catalog: Catalog, running: VersionInfo
) -> LessonRecord:
    steps = tuple(resolve_step(i, step, shares, settings, catalog) for i, step in enumerate(body.steps))
    return LessonRecord(title=body.title, steps=steps, versions=versions.recorded(running))


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
        known = reopened(state.chip, state.options)
        source, entry, chip, options = state.source, state.entry, known.chip, known.options
    else:
        assert step.source is not None  # the schema requires `source` when there is no `share`
        source, entry, chip, options = step.source, step.entry, step.chip, step.options.model_dump()
    check_editor_state(source, entry, settings, catalog, where=where, field=field)
    return LessonStep(source=source, entry=entry, chip=chip, options=options, note=step.note)


def public(lesson: LessonRevision) -> LessonPublic:
    record = lesson.record
    steps = [_step_public(step) for step in record.steps]
    return LessonPublic(
        id=lesson.lesson,
        url=lesson_url(lesson.lesson),
        title=record.title,
        steps=steps,
        versions=record.versions,
        created=iso_utc(lesson.created),
        revision=lesson.number,
        latest_revision=lesson.latest,
        revision_url=revision_url(lesson.lesson, lesson.number),
        revised=iso_utc(lesson.revised),
        editable=lesson.editable,
    )


def _step_public(step: LessonStep) -> LessonStepPublic:
    state = reopened(step.chip, step.options)  # saved perhaps with chips or options since removed
    return LessonStepPublic(
        source=step.source,
        entry=step.entry,
        chip=state.chip,
        options=RunOptions(**state.options),
        note=step.note,
    )
