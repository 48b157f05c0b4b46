"""Wire types of class sessions (`/api/classes`): create a class, join one, read its progress."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from server.store.classes import NAME_CHARS
from server.wire.schemas import Wire

# What a cell of the teacher's grid can say (a run's status, or how far it got).
CellStatus = Literal[
    "queued",
    "running",
    "passed",
    "mismatch",
    "error",
    "timeout",
    "resource_limit",
    "ran",
    "cancelled",
    "lost",
]


class ClassCreate(Wire):
    lesson: str = Field(..., description="The lesson the class works through (its id, as in /l/{id}).")
    revision: int | None = Field(None, description="The lesson's revision; null: the latest.", ge=1)


class ClassCreated(Wire):
    id: str = Field(..., description="The class's id: its progress and the teacher's page /t/{id}.")
    code: str = Field(..., description="The short join code the students type.")
    teacher_token: str = Field(
        ..., description="Secret: send as `Authorization: Bearer` to read progress. Shown only now."
    )
    lesson: str
    revision: int
    steps: int
    join_url: str = Field(..., description="The students' page, with the code in it.")
    teacher_url: str = Field(..., description="The teacher's page; the token goes after `#token=`.")


class ClassJoin(Wire):
    name: str = Field(
        ...,
        description="The student's nickname, as the teacher's grid shows it.",
        min_length=1,
        max_length=NAME_CHARS,
    )


class ClassJoined(Wire):
    student_token: str = Field(
        ..., description="Secret: send as `class_token` with each run. Shown only now."
    )
    student_id: str
    name: str
    class_id: str
    lesson: str
    revision: int
    steps: int
    lesson_url: str


class ClassInfo(Wire):
    code: str
    lesson: str
    revision: int
    steps: int


class CellPublic(Wire):
    status: CellStatus
    headline: str = Field("", description="The run's one-line summary (for an error: the error's headline).")
    updated: float = Field(..., description="When this status was reached (seconds since the epoch).")


class StudentProgress(Wire):
    id: str
    name: str
    steps: dict[str, CellPublic] = Field(
        ..., description="Latest status per step (keys '1', '2', ...); a step not started is absent."
    )


class CommonError(Wire):
    step: int
    headline: str
    students: list[str] = Field(..., description="Nicknames of the students whose latest run says this.")


class ClassBudget(Wire):
    in_flight: int = Field(..., description="The class's runs queued or running now.")
    limit: int = Field(..., description="How many it may have at once (PLAYGROUND_CLASS_QUEUE).")


class ClassProgress(Wire):
    id: str
    code: str
    lesson: str
    revision: int
    steps: int
    students: list[StudentProgress]
    common_errors: list[CommonError] = Field(
        ..., description="The room's failing headlines, most students first (two or more students each)."
    )
    budget: ClassBudget
    furthest_in_queue: int = Field(
        ..., description="The queue position of the class's last waiting run (0: none waiting): a long queue."
    )
