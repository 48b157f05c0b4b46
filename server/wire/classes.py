"""Wire types of class sessions (`/api/classes`): create a class, join one, read its progress."""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from sandbox.protocol.chips import Chip
from sandbox.protocol.result import RunStatus
from server.wire.schemas import Wire

# A student's name as the wire takes it; the store clips to the same length.
NAME_CHARS = 40


def nickname(name: str) -> str:
    """A nickname as the grid, the board and the CSV show it: its compatibility forms folded (NFKC:
    "ｃａｌｃ" is "calc", "＝1+1" is "=1+1", which the CSV then escapes), no control or format
    characters (a bidi override that reorders what the teacher reads, zero-width characters that make
    two names look alike or a name look empty), blanks collapsed; "student" when nothing is left."""
    return plain_line(unicodedata.normalize("NFKC", name))[:NAME_CHARS] or "student"


def plain_line(text: str) -> str:
    """`text` as one line of what it reads: control and format characters (line breaks, bidi
    overrides, zero-width characters) as blanks, blanks collapsed."""
    return " ".join("".join(" " if unicodedata.category(ch).startswith("C") else ch for ch in text).split())


# What a cell of the teacher's grid can say: how far its run got, a run's status (`RunStatus`, the one
# list), the run forgotten before it was read, or the student editing the step since.
CELL_PROGRESS = ("queued", "running")
CELL_AFTER = ("lost", "editing")
if TYPE_CHECKING:
    CellStatus = str
else:
    CellStatus = Literal[(*CELL_PROGRESS, *(status.value for status in RunStatus), *CELL_AFTER)]
StepKind = Literal["exercise", "assignment", "challenge"]


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
    status: CellStatus = Field(
        ..., description="The latest run's status; `editing` when the student edited the step after it."
    )
    headline: str = Field("", description="The run's one-line summary (for an error: the error's headline).")
    updated: float = Field(..., description="When this status was reached (seconds since the epoch).")
    last_status: CellStatus | None = Field(
        None, description="For `editing`: the status of the latest run before the edits (null: none)."
    )
    late: bool = Field(False, description="The latest run was submitted after the assignment's deadline.")


class StudentProgress(Wire):
    id: str
    name: str
    hand: int | None = Field(
        None, description="The student's place in the raised-hand queue (1: first); null: down."
    )
    steps: dict[str, CellPublic] = Field(
        ..., description="Latest status per step (keys '1', '2', ...); a step not started is absent."
    )


class CommonError(Wire):
    step: int
    headline: str
    students: list[str] = Field(..., description="Nicknames of the students whose latest run says this.")


class ClassBudget(Wire):
    in_flight: int = Field(
        ...,
        description="Runs queued or running now against the class's budget, as the queue counts them: "
        "every run of every class its owner started, and the owner's own.",
    )
    limit: int = Field(..., description="How many it may have at once (PLAYGROUND_CLASS_QUEUE).")


class JoinsChange(Wire):
    open: bool = Field(..., description="Whether new students may join (false: closed; joins get 403).")
    per_address: int | None = Field(
        None,
        ge=1,
        description="Students one network address may have in the class (null: the default); raise it "
        "for a room behind one school address.",
    )


class ClassJoins(Wire):
    open: bool = Field(..., description="Whether new students may join.")
    per_address: int = Field(..., description="Students one network address may have in the class now.")
    per_address_default: int = Field(..., description="What `per_address` is unless the teacher sets it.")


class StepSetupPublic(Wire):
    step: int
    kind: StepKind = Field(
        "exercise", description="An exercise, an assignment (a deadline) or a challenge (a board)."
    )
    deadline: float | None = Field(
        None, description="Assignments: runs submitted after this (seconds since the epoch) are late."
    )
    chip: str = Field("", description="Challenges: the chip the board ranks on ('': the lesson step's chip).")
    board_hidden: bool = Field(False, description="Challenges: the teacher hid the board from the students.")


class StepSetupChange(Wire):
    kind: StepKind = "exercise"
    deadline: float | None = Field(
        None, description="Seconds since the epoch; only for an assignment.", allow_inf_nan=False
    )
    chip: Chip | Literal[""] = Field(
        "", description="Only for a challenge: the chip to rank on ('': the step's)."
    )
    board_hidden: bool = False


class BoardRow(Wire):
    rank: int
    name: str = Field(..., description="The student's nickname (nothing else about them is shown).")
    seconds: float = Field(..., description="The best correct kernel's time on the board's chip.")
    basis: Literal["estimate", "measured"] = Field(
        ...,
        description="`estimate`: the TPU time model's estimate, reported by the kernel's process; "
        "`measured`: timed on a TPU by the host, outside the kernel's process.",
    )
    verdict: str = Field(..., description="What is checked: the verdict, by the trusted checker.")
    reported: str = Field(..., description="Where the time comes from, in words.")


class Board(Wire):
    step: int
    chip: str
    hidden: bool = Field(..., description="Hidden from the students (the teacher still sees it).")
    rows: list[BoardRow]


class Hand(Wire):
    student_id: str
    name: str
    since: float = Field(..., description="When the hand went up (seconds since the epoch).")


class StudentRename(Wire):
    name: str = Field(..., min_length=1, max_length=NAME_CHARS)


class FollowChange(Wire):
    step: int | None = Field(
        ..., ge=1, description="The step the students' pages move to; null: stop following."
    )


class HandChange(Wire):
    raised: bool


class EditingReport(Wire):
    step: int = Field(..., ge=1, description="The step the student is editing now.")


class StudentLive(Wire):
    """What a student's page needs live: the teacher's follow step, their hand, their name, boards."""

    name: str
    follow: int | None
    hand: int | None
    steps: list[StepSetupPublic]
    boards: list[Board] = Field(..., description="The challenge steps' boards the teacher has not hidden.")
    removed: bool = Field(
        False, description="The teacher removed this student (their token no longer works)."
    )


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
    joins: ClassJoins = Field(..., description="Who may join: open or closed, students per address.")
    furthest_in_queue: int = Field(
        ..., description="The queue position of the class's last waiting run (0: none waiting): a long queue."
    )
    hands: list[Hand] = Field([], description="Raised hands, first raised first.")
    follow: int | None = Field(None, description="The step the teacher asks the students' pages to show.")
    setup: list[StepSetupPublic] = Field(
        [], description="Each step's kind (exercise, assignment, challenge)."
    )
    boards: list[Board] = Field([], description="The challenge steps' class boards.")
