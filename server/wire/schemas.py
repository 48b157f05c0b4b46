"""Wire types: the JSON the HTTP API accepts and returns (pydantic, strict about unknown fields).

Converted explicitly to and from the sandbox's domain types in `server.convert`.
"""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from sandbox.protocol.chips import Chip

# A lesson's size limits: checked here where a lesson enters, so the store holds only what fits.
MAX_STEPS = 30
NOTE_BYTES = 8 * 1024
TITLE_CHARS = 200

# The chip list has one source, the chip table (`sandbox.protocol.chips`).
ChipName = Chip


class Wire(BaseModel):
    # Strict: JSON types as declared (no "fresh": 0 for false, no "random_seed": false for 0).
    model_config = ConfigDict(extra="forbid", strict=True)

    @model_validator(mode="before")
    @classmethod
    def _valid_unicode(cls, data: Any) -> Any:
        # JSON may carry lone surrogates ("\\ud800"), which no UTF-8 store or response can hold.
        where = _unencodable(data, "")
        if where is not None:
            raise ValueError(f"{where or 'text'}: not valid Unicode text (a lone surrogate such as \\ud800)")
        return data


class RunOptions(Wire):
    detect_races: bool | None = Field(None, description="Run the interpret-mode race detector.")
    uninitialized_memory: Literal["nan", "zero"] | None = Field(None, description="Fill of fresh buffers.")
    dma_execution_mode: Literal["on_wait", "eager"] | None = Field(None, description="When DMAs move data.")
    random_seed: int | None = Field(
        None,
        ge=0,
        lt=2**32,
        description="Randomise the order of parallel grid steps (a 32-bit seed, as numpy's).",
    )
    out_of_bounds_reads: Literal["raise", "uninitialized"] | None = Field(
        None, description="A read past a buffer: raise, or return the uninitialised fill."
    )
    buffer_bounds: Literal["logical", "padded"] | None = Field(
        None, description="Bounds of a buffer: its shape, or its shape padded to the chip's tiles."
    )


class RunRequest(Wire):
    source: str = Field(..., description="The kernel file.")
    entry: str | None = Field(None, description="Catalog entry slug; null for scratch mode.")
    chip: ChipName = "v5p"
    mode: Literal["auto", "interpret", "tpu", "both"] = Field(
        "auto",
        description="auto: natively on this server's chip, simulated on any other; interpret: simulated; "
        "tpu: natively; both (a TPU server, its chip): natively and simulated, the result the chip's "
        "with the simulator's verdict, the largest difference between their outputs and the estimate "
        "beside the measured time (`both`).",
    )
    options: RunOptions = Field(default_factory=RunOptions)
    fresh: bool = Field(False, description="Run again even if an identical run's result is cached.")
    lower_chips: list[ChipName] = Field(
        default_factory=list,
        description='Also check the TPU lowering for these chips ("check on all chips").',
    )
    runtime: str | None = Field(
        None, description="The JAX version to run on (GET /api/runtimes); null: the newest."
    )
    class_token: str | None = Field(
        None,
        description="A student token (POST /api/classes/{code}/join): the run counts against this student "
        "and their class's budget, not the network address, and shows on the teacher's grid.",
        max_length=100,
    )
    step: int | None = Field(
        None, description="The lesson step (1-based) a class run is for; needs `class_token`.", ge=1
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
    options: RunOptions = Field(..., description="The interpret options this entry runs with by default.")
    wrong: list[WrongKernelOut]
    tune: dict[str, Any] | None = Field(
        None, description="The entry's tunables for a sweep: {bind, values, size, check} (see /api/sweeps)."
    )


class SandboxHealth(Wire):
    backend: str
    ok: bool
    detail: str
    restarts: int = Field(..., description="Times the sandbox replaced a broken part of itself (its pool).")
    quarantined_slots: int = Field(..., description="Slots out of service: a job there could not be stopped.")


class PoolHealthOut(Wire):
    name: str = Field(
        ..., description="Where jobs run: `interpret` (any CPU) or a TPU chip kind (`tpu-v5e`)."
    )
    workers: int = Field(..., description="Live runner workers serving the pool.")
    slots: int
    busy: int
    queued: int
    oldest_wait_seconds: float


class Health(Wire):
    status: Literal["ok", "degraded", "unhealthy"] = Field(
        ..., description="unhealthy (HTTP 503): runs cannot complete; degraded: they can, with less capacity."
    )
    problems: list[str]
    queued: int
    running: int
    slots: int
    slots_alive: int
    worker_restarts: int
    oldest_wait_seconds: float = Field(
        ..., description="How long the oldest queued run has waited with a slot free."
    )
    sandbox: SandboxHealth
    queue: Literal["in-process", "redis"] = Field(
        "in-process", description="The run queue: this process's, or Redis shared by several servers."
    )
    pools: list[PoolHealthOut] = Field(
        default_factory=list, description="With the Redis queue: live workers and queue depth per pool."
    )


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
    run: str | None = Field(
        None,
        max_length=64,
        description="A finished run of exactly this state: its result is kept with the share (trimmed: no "
        "trace, no IR texts, short output).",
    )
    runtime: str | None = Field(
        None, description="The JAX version it ran on (GET /api/runtimes); null: the newest."
    )


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
    versions: dict[str, str | None] = Field(
        ..., description="The versions it was shared with (its runtime's)."
    )
    created: str = Field(..., description="When it was first shared (ISO 8601, UTC).")
    result: dict[str, Any] | None = Field(None, description="The RunResult kept with the share, if any.")
    result_at: str | None = Field(None, description="When that result was computed (ISO 8601, UTC).")
    runtime: str | None = Field(None, description="The JAX version it was made on (`versions.jax`).")
    run_on: str = Field(
        "", description="The installed runtime to open it on: its own while installed, else the nearest."
    )
    runtime_note: str = Field(
        "",
        description="Why it opens on another runtime than its own, or without a chip or options this "
        "server no longer has, if it does.",
    )


class SparseCoreOut(Wire):
    cores: int
    subcores: int
    lanes: int
    vmem_bytes: int
    dma_granule_bytes: int


class ChipOut(Wire):
    """One TPU generation a run can target; capacities and rates are per TensorCore."""

    name: ChipName
    title: str
    device_kind: str
    tensor_cores: int
    vmem_bytes: int
    smem_bytes: int
    hbm_bytes: int
    hbm_bandwidth: float = Field(..., description="Bytes per second.")
    bf16_flops: float = Field(..., description="bf16 operations per second at peak.")
    sparse_core: SparseCoreOut | None
    megacore: bool = Field(..., description="A JAX device spans the chip's TensorCores (parallel splits).")
    # The TPU time model's rates (sources in sandbox/protocol/chips.py).
    int8_ops: float = Field(..., description="MXU int8 operations per second (0: not supported).")
    fp8_ops: float = Field(..., description="MXU fp8 operations per second (0: not supported).")
    vector_ops: float = Field(..., description="Vector-unit element operations per second.")
    step_seconds: float = Field(..., description="Fixed cost of one pipeline (grid) step.")
    launch_seconds: float = Field(..., description="Fixed cost of one kernel launch.")
    clock_hz: float = Field(..., description="TensorCore clock the model assumes or cites.")
    mxu_size: int = Field(..., description="MXU width: dots pad their K and N to it.")
    sublanes: int = Field(..., description="Vreg sublanes (lanes are 128).")
    dma_issue_seconds: float = Field(..., description="Cost of starting (and waiting for) one DMA.")
    dma_latency_cycles: float = Field(..., description="A DMA's latency in cycles, overlapping other copies;")
    dma_write_latency_cycles: float | None = Field(..., description="a write's if it differs (None: same).")
    loop_step_cycles: float | None = Field(..., description="A program's dotless loop step (None: a grid's).")
    scalar_seconds: float = Field(..., description="Cost of one scalar operation.")
    ici_bandwidth: float = Field(..., description="Bytes per second over one ICI link, one way.")
    ici_hop_seconds: float = Field(..., description="Latency of one ICI hop.")
    host_dispatch_seconds: float | None = Field(..., description="One call's host dispatch, where known.")
    mxu_efficiency: float = Field(..., description="Share of the MXU peak a pipelined dot reaches.")
    hbm_write_efficiency: float = Field(..., description="HBM peak's share writes reach (reads: the peak).")
    dma_read_efficiency: float = Field(..., description="A program's DMA reads alone: share of the HBM peak;")
    dma_write_efficiency: float = Field(..., description="its writes alone; while both move, reads keep")
    dma_read_share: float = Field(..., description="this share of their rate (0: not measured, one queue),")
    dma_write_share: float = Field(..., description="writes this share of theirs; a copy starting beside")
    dma_switch_cycles: float = Field(..., description="the other direction's pays these cycles of moving.")
    dma_read_tail_cycles: float = Field(..., description="Of a read's latency, cycles after its last byte.")
    vector_units: tuple[tuple[str, float], ...] = Field(
        ...,
        description="Vector units' issue rates in vregs per cycle (alu, eup, xlu, load, store): a step's vector "
        "work lasts as long as its busiest unit's; empty where not measured (the units' work adds up).",
    )
    reduction_chain_cycles: float = Field(
        ..., description="With vector_units: the least cycles of a step with a dot and a lane reduction."
    )
    reduction_serial_share: float = Field(..., description="Shorter of MXU and vector time not overlapped,")
    reduction_serial_growth: float = Field(..., description="more per doubling of the largest value reduced")
    reduction_serial_pivot: float = Field(..., description="over its elements at this pivot.")
    dotless_step_cycles: float = Field(..., description="Cycles of a grid step without MXU work (0: a dot's)")
    dotless_step_hidden: float = Field(..., description="Share of its copies' cycles beyond")
    dotless_step_unhidden_cycles: float = Field(..., description="these its fixed cost hides under,")
    dotless_step_floor_cycles: float = Field(..., description="leaving at least these cycles of it.")
    dma_pair_share: float = Field(..., description="Its copy in beside its write-back: + this of the shorter")
    dotless_xlu_cycles: float = Field(..., description="Added to it where the step uses the cross-lane unit.")
    scoped_vmem_bytes: int | None = Field(
        ...,
        description="VMEM a kernel gets without vmem_limit_bytes (the compiler's default), where published.",
    )
    transcendental_bands: tuple[tuple[str, float], ...] = Field(
        ...,
        description="The chip's largest relative error of each transcendental in a kernel (f32), measured on "
        "the chip; empty where not measured. The simulator computes them exactly.",
    )
    dot_operand_copies: tuple[tuple[str, float], ...] = Field(
        ...,
        description="VMEM the TPU compiler keeps for itself per dot, in copies of the dot's left-operand block, "
        'by operand kind ("bf16", "f32_highest"), measured on the chip; counted against the scoped limit. '
        "Empty where not measured.",
    )
    dot_operand_row_bytes: tuple[tuple[str, float], ...] = Field(
        ...,
        description="Besides those copies, bytes per row of the dot's left operand the compiler keeps, by "
        'operand kind ("f32_highest"), measured on the chip. Empty where not measured.',
    )


class LessonStepCreate(Wire):
    """A step with its own editor state (`source`, ...), or one copied from an existing `share`."""

    share: str | None = Field(None, description="An existing share's id; its content is copied in.")
    source: str | None = Field(None, description="The kernel file (unless `share` is given).")
    entry: str | None = Field(None, description="Catalog entry slug; null for scratch mode.")
    chip: ChipName = "v5p"
    options: RunOptions = Field(default_factory=RunOptions)
    note: str = Field("", description=f"Markdown shown beside this step (at most {NOTE_BYTES:,} bytes).")

    @model_validator(mode="after")
    def _one_origin(self) -> Self:
        own = sorted(self.model_fields_set & {"source", "entry", "chip", "options"})
        if self.share is not None and own:
            raise ValueError(f"a step names a share or has its own state, not both (also: {', '.join(own)})")
        if self.share is None and self.source is None:
            raise ValueError("a step needs `source` (its own code) or `share` (an existing share's id)")
        return self


class LessonCreate(Wire):
    title: str = Field(..., min_length=1, max_length=TITLE_CHARS, description="The lesson's name.")
    steps: list[LessonStepCreate] = Field(..., min_length=1, max_length=MAX_STEPS, description="In order.")


class LessonCreated(Wire):
    id: str = Field(..., description="The lesson's stable 11-character id.")
    url: str = Field(..., description="The stable link: always the latest revision.")
    revision: int = Field(..., description="The revision this save made (or found unchanged).")
    revision_url: str = Field(..., description="The link to exactly this revision.")
    token: str | None = Field(None, description="The edit token (only when the lesson is created).")
    edit_url: str | None = Field(None, description="The author's edit link, token in its fragment.")


class LessonStepPublic(Wire):
    source: str
    entry: str | None
    chip: ChipName
    options: RunOptions
    note: str


class LessonPublic(Wire):
    id: str
    url: str
    title: str
    steps: list[LessonStepPublic]
    versions: dict[str, str | None] = Field(..., description="The server's versions when it was made.")
    created: str = Field(..., description="When the lesson was first saved (ISO 8601, UTC).")
    revision: int = Field(..., description="This revision's number (1, 2, ...).")
    latest_revision: int = Field(..., description="The newest revision's number.")
    revision_url: str = Field(..., description="The link to exactly this revision.")
    revised: str = Field(..., description="When this revision was saved (ISO 8601, UTC).")
    editable: bool = Field(..., description="False for lessons saved before they had revisions.")


class LessonRevisionSummary(Wire):
    revision: int
    revised: str
    title: str
    steps: int
    revision_url: str


def _unencodable(value: Any, path: str) -> str | None:
    """The path of the first string in `value` that UTF-8 cannot encode, or None."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return path
        return None
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        if isinstance(key, str) and _unencodable(key, path) is not None:
            return path or "a field name"
        found = _unencodable(item, f"{path}.{key}" if path else str(key))
        if found is not None:
            return found
    return None
