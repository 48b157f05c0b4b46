"""Wire types of `/api/sweeps` (a sweep, "Tune": kernel parameters × values, judged at a target size)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from server.wire.schemas import ChipName, RunOptions, Wire

ParamValue = bool | int | float | str


class SweepRequest(Wire):
    source: str = Field(..., description="The kernel file.")
    entry: str | None = Field(None, description="Catalog entry slug; null for scratch mode.")
    chip: ChipName = Field("v5e", description="The chip to estimate for, lower for and simulate.")
    mode: Literal["auto", "interpret", "tpu"] = "auto"
    options: RunOptions = Field(default_factory=RunOptions)
    params: dict[str, list[ParamValue]] | None = Field(
        None, description="Keyword arguments of the kernel and their values; null: the entry's [tune] values."
    )
    size: dict[str, int] | None = Field(None, description="Target problem size; null: the entry's.")
    check_size: dict[str, int] | None = Field(None, description="Correctness size before fitting blocks.")
    bind: dict[str, str] | None = Field(None, description="Parameter → the size dimension its block tiles.")
    lower_chips: list[ChipName] = Field(default_factory=list, description="Also lower for these chips.")
    fresh: bool = Field(False, description="Run again even if an identical sweep's result is cached.")


class SweepCreated(Wire):
    id: str
    state: Literal["queued", "running", "done"]
    total: int = Field(..., description="Configs in the sweep.")
    shards: int = Field(..., description="Jobs it was split into (each runs in its own sandbox slot).")
    events_url: str
    url: str


class SweepState(Wire):
    id: str
    state: Literal["queued", "running", "done"]
    total: int
    judged: int = Field(..., description="Configs judged so far.")
    result: dict[str, Any] | None = Field(
        None, description="Once done: {status, summary, sweep (SweepResult), shards}."
    )
