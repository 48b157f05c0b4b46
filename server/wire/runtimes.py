"""Wire types of the JAX runtimes API: the runtimes, a run on all of them (a matrix), and the diff of
two of its runs. Kept beside `server.wire.schemas` (same `Wire` base and rules) because they change together."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from server.wire.schemas import ChipName, RunOptions, Wire


class FeatureOut(Wire):
    available: bool
    detail: str = Field(..., description="How it works on this runtime, or why not.")


class RuntimeOut(Wire):
    name: str = Field(
        ..., description="The runtime's name: its jax version. A run's `runtime` field takes it."
    )
    jax: str
    jaxlib: str
    python: str
    libtpu: str | None
    default: bool = Field(..., description="Runs that name no runtime run here (the newest).")
    features: dict[str, FeatureOut] = Field(
        ...,
        description="interpret_mode, interpret_options, race_detection, core_meshes, sparsecore, "
        "lowering_check, ir_views, trace, monitor, interpret_fixes; empty if the runtime was never probed.",
    )
    available: bool = Field(
        True, description="Whether runs can start on it now (false: see `unavailable_reason`)."
    )
    unavailable_reason: str | None = Field(
        None, description="Why runs cannot start on it now, if they cannot."
    )


class MatrixRequest(Wire):
    source: str = Field(..., description="The kernel file.")
    entry: str | None = Field(None, description="Catalog entry slug; null for scratch mode.")
    chip: ChipName = "v5p"
    mode: Literal["auto", "interpret", "tpu"] = "auto"
    options: RunOptions = Field(default_factory=RunOptions)
    runtimes: list[str] | None = Field(
        None, description="The runtimes to run on (GET /api/runtimes); null: every installed one."
    )
    lower_chips: list[ChipName] | None = Field(
        None,
        description="Chips to check the TPU lowering for; null: every chip (the compiler verdict per chip).",
    )
    fresh: bool = Field(False, description="Run again even if identical runs' results are cached.")


class MatrixRowOut(Wire):
    runtime: str
    run_id: str
    url: str = Field(..., description="The run's own resource (GET it for the whole RunResult).")
    state: Literal["queued", "running", "done"]
    status: str | None
    summary: str
    error: str
    max_abs_error: float | None
    kernel_seconds: float | None
    simulated: bool
    peak_rss_bytes: int | None
    vmem_bytes: int | None
    smem_bytes: int | None
    compiler: dict[str, bool | None] = Field(
        ..., description="Chip → the TPU lowering's verdict (null: not checked)."
    )
    unavailable: list[str] = Field(..., description="Features this run went without on its JAX version.")


class ChangeOut(Wire):
    older: str
    newer: str
    text: str


class SkippedRuntimeOut(Wire):
    runtime: str
    reason: str = Field(..., description="Why runs cannot start on it now (GET /api/runtimes says so too).")


class MatrixOut(Wire):
    id: str
    url: str
    state: Literal["running", "done"]
    rows: list[MatrixRowOut] = Field(..., description="One per runtime, oldest first.")
    skipped: list[SkippedRuntimeOut] = Field(
        default_factory=list, description="Runtimes not run on, because their sandbox cannot start now."
    )
    changes: list[ChangeOut] = Field(..., description="Where the outcome differs from the runtime before.")
    verdict: str = Field(..., description='One sentence, e.g. "passes up to 0.11.2, fails from 0.12.0.1: …".')


class FieldDiffOut(Wire):
    name: str
    older: str
    newer: str
    changed: bool


class RunDiffOut(Wire):
    older: str = Field(..., description="The older runtime (e.g. the one a share was made on).")
    newer: str
    fields: list[FieldDiffOut]
    mosaic_diff: str = Field(..., description="A unified diff of the Mosaic IR for the run's chip.")
    mosaic_note: str
    mosaic_truncated: bool


class CatalogOutcomeOut(Wire):
    status: str
    summary: str = Field("", description="What a user reads when it does not pass.")
