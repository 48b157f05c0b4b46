"""Wire types: the JSON the HTTP API accepts and returns (pydantic, strict about unknown fields).

Converted explicitly to and from the sandbox's domain types in `server.convert`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ChipName = Literal["v5e", "v5p", "v6e", "tpu7x"]


class Wire(BaseModel):
    model_config = ConfigDict(extra="forbid")


class RunOptions(Wire):
    detect_races: bool | None = Field(None, description="Run the interpret-mode race detector.")
    uninitialized_memory: Literal["nan", "zero"] | None = Field(None, description="Fill of fresh buffers.")
    dma_execution_mode: Literal["on_wait", "eager"] | None = Field(None, description="When DMAs move data.")
    random_seed: int | None = Field(None, description="Randomise the order of parallel grid steps.")


class RunRequest(Wire):
    source: str = Field(..., description="The kernel file.")
    entry: str | None = Field(None, description="Catalog entry slug; null for scratch mode.")
    chip: ChipName = "v5p"
    mode: Literal["auto", "interpret", "tpu"] = "auto"
    options: RunOptions = Field(default_factory=RunOptions)
    fresh: bool = Field(False, description="Run again even if an identical run's result is cached.")
    lower_chips: list[ChipName] = Field(
        default_factory=list,
        description='Also check the TPU lowering for these chips ("check on all chips").',
    )


class RunCreated(Wire):
    id: str
    state: Literal["queued", "running", "done"]
    position: int | None = None
    events_url: str
    url: str


class RunState(Wire):
    id: str
    state: Literal["queued", "running", "done"]
    position: int | None = None
    result: dict[str, Any] | None = Field(None, description="The RunResult, once done.")


class CatalogSummary(Wire):
    slug: str
    title: str
    summary: str
    level: str
    concepts: list[str]
    chips: list[ChipName]
    devices: int
    docs: str


class WrongKernelOut(Wire):
    name: str
    expect: str
    why: str
    source: str


class CatalogDetail(CatalogSummary):
    entry_point: str
    readme: str
    template: str
    solution: str
    reference: str
    cases: list[dict[str, Any]]
    tolerances: dict[str, dict[str, float]]
    mutable_inputs: list[int]
    interpret_notes: str
    wrong: list[WrongKernelOut]


class Health(Wire):
    status: Literal["ok", "degraded"]
    queued: int
    running: int
    slots: int


class VersionInfo(Wire):
    playground: str
    python: str
    jax: str | None
    jaxlib: str | None
    libtpu: str | None
    device_kind: str
    mode: Literal["tpu", "interpret"]
    sandbox: str
    sandbox_note: str = ""


class ShareCreate(Wire):
    source: str = Field(..., description="The kernel file.")
    entry: str | None = Field(None, description="Catalog entry slug; null for scratch mode.")
    chip: ChipName = "v5p"
    options: RunOptions = Field(default_factory=RunOptions)


class ShareCreated(Wire):
    id: str = Field(..., description="11-character content-addressed id.")
    url: str = Field(..., description="The page that reopens this share.")


class SharePublic(Wire):
    id: str
    url: str
    source: str
    entry: str | None
    chip: ChipName
    options: RunOptions
    versions: dict[str, str | None] = Field(..., description="The server's versions when it was shared.")
    created: str = Field(..., description="When it was first shared (ISO 8601, UTC).")
