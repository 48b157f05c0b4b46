"""Wire types of a share's measurements: the line a share's notebook prints (`MeasurementLine`), the
request that brings it back (`MeasurementCreate`), and how a share lists them (`MeasurementsOut`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import Field, field_validator

from sandbox.protocol.result import RunStatus
from server.wire.classes import plain_line
from server.wire.schemas import ChipName, Wire

LINE_CHARS = 2048  # a notebook's line is ~500 characters
# The verdicts a notebook's check can reach (it runs no compiler and no limits): `RunStatus` values.
MEASURED_VERDICTS = (RunStatus.PASSED, RunStatus.MISMATCH, RunStatus.RAN)
if TYPE_CHECKING:
    Verdict = str
else:
    Verdict = Literal[tuple(status.value for status in MEASURED_VERDICTS)]


class MeasurementCreate(Wire):
    line: str = Field(
        ...,
        description=f"The one JSON line the share's notebook printed (at most {LINE_CHARS:,} characters).",
    )


class MeasurementLine(Wire):
    """What the notebook's last cell prints, field by field (`server/notebook/cells/measure.py.txt`)."""

    pallas_playground_measurement: Literal[1]
    share: str = Field(..., max_length=16)
    chip: ChipName = Field(..., description="The chip it ran on (from the device kind).")
    device_kind: str = Field(..., max_length=80)
    interpret: bool = Field(..., description="True when it ran in interpret mode on a CPU (not taken).")
    jax: str = Field(..., max_length=40, pattern=r"^[0-9A-Za-z.+-]+$")
    jaxlib: str = Field(..., max_length=40, pattern=r"^[0-9A-Za-z.+-]+$")
    kernel_sha256: str = Field(..., pattern=r"^[0-9a-f]{64}$", description="SHA-256 of the kernel's source.")
    case: str = Field(..., max_length=200, description="The case that was timed.")
    verdict: Verdict
    # No infinity or NaN (a line's 1e400 reads as inf, which no JSON can store): a 422, never a 500.
    device_seconds: float | None = Field(
        ..., description="The kernel's time on the device (profiler).", allow_inf_nan=False
    )
    wall_seconds: float | None = Field(None, ge=0, allow_inf_nan=False)
    method: Literal["profiler", "wall_clock"]

    # A case's name is one line of plain text, as the notebook prints it (issue 41: the list shows it).
    @field_validator("case")
    @classmethod
    def _plain(cls, case: str) -> str:
        if not case or plain_line(case) != case:
            raise ValueError("a case's name is one line of plain text (no control or format characters)")
        return case


class MeasurementOut(Wire):
    id: str
    chip: ChipName
    device_kind: str
    jax: str
    case: str
    verdict: str
    device_seconds: float
    method: str
    created: str = Field(..., description="When it was added (ISO 8601, UTC).")
    label: Literal["user-reported"] = "user-reported"
    text: str = Field(
        ..., description='E.g. "measured on a TPU v5e (user-reported): 1.92 ms; estimated 1.80 ms".'
    )


class MeasurementsOut(Wire):
    share: str
    estimate_seconds: float | None = Field(None, description="The estimate kept with the share, if any.")
    estimate_chip: ChipName | None = None
    measurements: list[MeasurementOut] = Field(
        ..., description="At most 20: each adder's newest first, then each one's second newest, and so on."
    )
    total: int = Field(0, description="How many the share keeps.")
    next_offset: int | None = Field(None, description="The `offset` of the next page; null on the last.")
