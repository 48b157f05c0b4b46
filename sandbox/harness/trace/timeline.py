"""Raw interpreter records (from `sandbox.harness.trace.capture`) → the protocol's `Trace`: steps, DMA links, grid view.

Pure functions on plain dicts, so every rule here is unit-tested without JAX. A record is a dict with
`kind`, `t`, `dur`, `thread`, `device`, `core` and, by kind, the fields of `TraceEvent` plus: `*_range`
(a `sandbox.harness.trace.regions` region), `*_operand` (the kernel operand a buffer is: `(device, launch, name)`),
`send_semaphore`. The builder adds `step`, `dma` and the links between DMAs and their waits.

Steps:
- pallas_call: one step per grid point, reported by the interpreter's `grid_point_recorder` with
  its core (not its device: that is taken from the next record of the same host thread, which is
  the thread that runs that device's program).
- emit_pipeline: nothing reports its steps, so they are rebuilt from its DMAs. emit_pipeline wraps
  every copy and wait in a named scope (`ep_initialize_*`, `ep_copy_in`, `ep_wait_in`,
  `ep_copy_out`, `ep_wait_out`, `ep_finalize_*`) and each loop step issues them in that order, so a
  step boundary shows where a DMA cannot belong to the current step (see `_advance`).
"""

from __future__ import annotations

import collections
import dataclasses
from typing import Any

from sandbox.harness.trace.regions import Range, block_of, region_text
from sandbox.protocol.trace import (
    BlockVisit,
    GridView,
    OperandBlocks,
    Trace,
    TraceEvent,
    TraceLane,
    TraceStep,
)

Record = dict[str, Any]

# An event is about 0.4 kB of JSON, so a full trace adds about 0.8 MB to a RunResult.
MAX_EVENTS = 2000
# Dropped first when a trace is over the cap: the timeline is about DMAs, semaphores and steps.
LOW_PRIORITY = frozenset({"load", "store"})

# emit_pipeline's named scopes (trailing step numbers removed) → our phase names, in loop order.
PIPELINE_SCOPES = {
    "ep_initialize": "prologue",
    "ep_copy_in": "copy_in",
    "ep_wait_in": "wait_in",
    "ep_run_kernel": "body",
    "ep_copy_out": "copy_out",
    "ep_wait_out": "wait_out",
    "ep_finalize": "epilogue",
}
RANKS = {name: rank for rank, name in enumerate(PIPELINE_SCOPES.values())}
EPILOGUE = RANKS["epilogue"]
PIPELINE_DMA_PHASES = frozenset(RANKS) - {"body"}

GRID_NOTE = (
    "pallas_call (and a SparseCore mesh, which the interpreter runs as a grid): a step is one grid "
    "point, numbered in the order the interpreter ran it on its core "
    "(grid_point gives its coordinates; from InterpretParams.grid_point_recorder). The pallas_call "
    "pipeline copies a block only when its block index changes, so a block kept for several steps "
    "shows once, at the first of them (reads) or the last (writes)."
)
PIPELINE_NOTE = (
    "emit_pipeline: nothing reports its steps, so they are rebuilt from the order of its DMAs "
    "(copy in, wait in, copy out, wait out): a new step begins where that order starts over, where an "
    "operand is copied or waited for again, or where a wait collects a copy started in the same step. "
    "Steps are numbered from 0 per pipeline and core; the prologue's copies belong to step 0, the "
    "epilogue's wait to the last step. A read belongs to the step that waited for it (the step that "
    "computes on it; its DMA was started a step earlier), a write to the step that started it. Steps "
    "that move no data cannot be seen and merge with a neighbour."
)
NO_STEPS_NOTE = "No grid or pipeline steps were seen: blocks are listed in the order the kernel moved them."


# -- devices, DMA links, steps ---------------------------------------------------------------


def assign_devices(records: list[Record]) -> None:
    """Give device-less records (grid steps) the device of the next record on their host thread.

    Failing that, the device of the previous record on it, or the only device there is.
    """
    for ordered in (reversed(records), records):
        seen: dict[Any, int] = {}
        for record in ordered:
            if record["device"] is None and record["kind"] == "grid_step":
                record["device"] = seen.get(record["thread"])
            elif record["device"] is not None:
                seen[record["thread"]] = record["device"]
    devices = {r["device"] for r in records if r["device"] is not None}
    if len(devices) == 1:
        (only,) = devices
        for record in records:
            if record["kind"] == "grid_step" and record["device"] is None:
                record["device"] = only


def assign_core_kinds(records: list[Record]) -> None:
    """Give every record the kind of core (`tensor_core`, `sparse_core`) of the kernel its device runs.

    A device runs its kernels one after another, each begun by a `kernel_start` that says the kind.
    """
    kinds: dict[Any, str] = {}
    for record in records:
        if record["kind"] == "kernel_start":
            kinds[record["device"]] = record.get("core_kind") or "tensor_core"
        elif record["device"] is not None:
            record["core_kind"] = kinds.get(record["device"], "tensor_core")


def link_dmas(records: list[Record]) -> None:
    """Number the DMAs and tell each wait which DMAs it waited for.

    A DMA adds its byte count to its destination semaphore (and to its send semaphore, if any) on the
    core it lands on; a wait on a semaphore takes `bytes` back. So, per (device, core, semaphore), a
    wait completes the oldest outstanding DMAs until its bytes are covered. Waits are matched when they
    returned: a receiver may start waiting before the sender starts the DMA.
    """
    starts = [(r["t"], 0, r) for r in records if r["kind"] == "dma_start"]
    waits = [(r["t"] + r["dur"], 1, r) for r in records if r["kind"] == "dma_wait"]
    queues: dict[tuple[Any, ...], collections.deque[list[Any]]] = collections.defaultdict(collections.deque)
    for number, (_, _, start) in enumerate(sorted(starts, key=lambda x: x[0])):
        start["dma"] = (number,)
    for _, _, record in sorted(starts + waits, key=lambda x: (x[0], x[1])):
        if record["kind"] == "dma_start":
            dst = (record["dst_device"], record["dst_core"], record["semaphore"])
            queues[dst].append([record, record["bytes"], "recv"])
            if record.get("send_semaphore") is not None:
                src = (record["device"], record["core"], record["send_semaphore"])
                queues[src].append([record, record["bytes"], "send"])
        else:
            _complete(record, queues[(record["device"], record["core"], record["semaphore"])])


def _complete(wait: Record, queue: collections.deque[list[Any]]) -> None:
    need, done = wait["bytes"], []
    while queue and need > 0:
        entry = queue[0]
        start, remaining, side = entry
        done.append(start)
        if side == "recv":
            start.setdefault("recv_wait", wait)
        if remaining is None or remaining <= need:
            need -= remaining if remaining is not None else need
            queue.popleft()
        else:
            entry[1] = remaining - need
            need = 0
    wait["dma"] = tuple(dict.fromkeys(s["dma"][0] for s in done))
    wait["path"] = (done[0]["src"], done[0]["dst"]) if done else ("semaphore", wait["semaphore"])
    wait["origin"] = done[0] if done else None


@dataclasses.dataclass
class _Lane:
    """Where one core is: its grid step, its pipeline step, and the last pipeline phase it issued."""

    grid: int | None = None
    grids: int = 0
    pipe: int | None = None
    pipelines: int = 0
    number: int = 0
    rank: int = -1
    seen: set[Any] = dataclasses.field(default_factory=set)
    kernel: str = ""


def derive_steps(records: list[Record]) -> list[Record]:
    """Steps (as dicts of `TraceStep` fields) in time order; sets each record's `step`."""
    steps: list[Record] = []
    lanes: dict[tuple[Any, Any], _Lane] = {}
    kernels: dict[Any, str] = {}  # device → the kernel it runs
    for record in records:
        if record["kind"] == "kernel_start":  # a new launch on this device: every core starts afresh
            for key in [k for k in lanes if k[0] == record["device"]]:
                del lanes[key]
            kernels[record["device"]] = record.get("label", "")
            record["step"] = None
            continue
        lane = lanes.setdefault(
            (record["device"], record["core"]), _Lane(kernel=kernels.get(record["device"], ""))
        )
        if record["kind"] == "grid_step":
            lane.grid = _open(steps, record, lane, "grid", lane.grids, grid_point=record.get("grid_point"))
            lane.grids += 1
            lane.pipe, lane.pipelines, lane.rank = None, 0, -1
        elif record["kind"] in ("dma_start", "dma_wait") and record.get("phase") in PIPELINE_DMA_PHASES:
            _advance(lane, record, steps)
        in_pipeline = lane.pipe is not None and (lane.rank != EPILOGUE or record.get("phase") == "epilogue")
        record["step"] = lane.pipe if in_pipeline else lane.grid
        if record["step"] is not None:
            step = steps[record["step"]]
            step["t_end"] = max(step["t_end"], record["t"] + record["dur"])
    return steps


def _advance(lane: _Lane, record: Record, steps: list[Record]) -> None:
    """Move `lane` to a new pipeline or step if `record` cannot belong to the current one.

    A step cannot hold: a phase earlier in the loop order than one already seen; a second copy or
    wait of the same operand; or a wait (not the epilogue's) for a DMA started in this very step,
    since copies in a step fetch for later steps and waits in a step collect earlier copies.
    """
    phase = record["phase"]
    rank = RANKS[phase]
    mark = (phase, record.get("path") or (record.get("src"), record.get("dst")))
    origin = record.get("origin")
    own_copy = (
        phase in ("wait_in", "wait_out")
        and origin is not None
        and origin.get("phase") != "prologue"  # the prologue's copies are counted to step 0
        and origin.get("step") == lane.pipe
    )
    restart = lane.pipe is None or (phase == "prologue" and lane.rank != 0)
    if restart or (lane.rank == EPILOGUE and rank != EPILOGUE):
        lane.number = 0
        lane.pipelines += 1
    elif rank < lane.rank or own_copy or (phase not in ("prologue", "epilogue") and mark in lane.seen):
        lane.number += 1
    else:
        lane.rank = rank
        lane.seen.add(mark)
        return
    lane.pipe = _open(
        steps, record, lane, "pipeline", lane.number, pipeline=lane.pipelines - 1, parent=lane.grid
    )
    lane.rank, lane.seen = rank, {mark}


def _open(steps: list[Record], record: Record, lane: _Lane, kind: str, number: int, **more: Any) -> int:
    t = record["t"]
    steps.append(
        {"index": len(steps), "kind": kind, "device": record["device"], "core": record["core"],
         "number": number, "t": t, "t_end": t, "kernel": lane.kernel,
         "core_kind": record.get("core_kind", ""), **more}
    )  # fmt: skip
    return len(steps) - 1


# -- the grid view ---------------------------------------------------------------------------


def grid_visits(records: list[Record], steps: list[Record]) -> dict[tuple[int, int, str], list[BlockVisit]]:
    """Per kernel operand `(device, launch, name)`: the blocks moved, in time order, revisits marked."""
    visits: dict[tuple[int, int, str], list[BlockVisit]] = collections.defaultdict(list)
    for record in records:
        kind = record["kind"]
        if kind in ("block_read", "dma_start") and record.get("src_operand"):
            waited = record.get("recv_wait")
            step = waited["step"] if kind == "dma_start" and waited is not None else record["step"]
            visits[record["src_operand"]].append(_visit("read", record, record["src_range"], step, steps))
        if kind in ("block_write", "dma_start") and record.get("dst_operand"):
            visits[record["dst_operand"]].append(
                _visit("write", record, record["dst_range"], record["step"], steps)
            )
    for key, found in visits.items():
        visits[key] = _mark_revisits(sorted(found, key=lambda v: v.t))
    return visits


def _visit(
    access: str, record: Record, rng: Range | None, step: int | None, steps: list[Record]
) -> BlockVisit:
    grid_point, outer = record.get("grid_point"), step
    while grid_point is None and outer is not None:  # a pipeline step inside a grid step: the grid's
        grid_point, outer = steps[outer].get("grid_point"), steps[outer].get("parent")
    return BlockVisit(
        access="read" if access == "read" else "write",
        region=region_text(rng),
        t=round(record["t"], 6),
        device=record["device"],
        core=record["core"],
        step=step,
        grid_point=grid_point,
        block=record.get("block") or block_of(rng),
    )


def _mark_revisits(visits: list[BlockVisit]) -> list[BlockVisit]:
    seen: set[tuple[str, str]] = set()
    marked = []
    for visit in visits:
        key = (visit.access, visit.region)
        marked.append(dataclasses.replace(visit, revisit=key in seen))
        seen.add(key)
    return marked


def grid_view(operands: list[Record], visits: dict[Any, list[BlockVisit]], steps: list[Record]) -> GridView:
    blocks = []
    for operand in operands:
        key = (operand["device"], operand["launch"], operand["name"])
        moved = tuple(visits.get(key, ()))
        blocks.append(OperandBlocks(**operand, visits=moved, revisits=sum(v.revisit for v in moved)))
    kinds = {s["kind"] for s in steps}
    notes = [GRID_NOTE] * ("grid" in kinds) + [PIPELINE_NOTE] * ("pipeline" in kinds)
    return GridView(operands=tuple(blocks), note=" ".join(notes) or NO_STEPS_NOTE)


# -- capping and assembly ----------------------------------------------------------------------


def cap(records: list[Record], limit: int) -> tuple[list[Record], float | None]:
    """At most `limit` records: loads and stores go first, then the latest records.

    Returns what is kept and, if the latest records had to go, the time of the last one kept.
    """
    if len(records) <= limit:
        return records, None
    kept = [r for r in records if r["kind"] not in LOW_PRIORITY]
    if len(kept) <= limit:
        return kept, None
    return kept[:limit], kept[limit - 1]["t"]


def lanes(records: list[Record]) -> tuple[TraceLane, ...]:
    """One lane per (device, kind of core, core), in that order: a device's SparseCores first."""
    counts: dict[tuple[Any, str, Any], collections.Counter[str]] = collections.defaultdict(
        collections.Counter
    )
    for record in records:
        counts[(record["device"], record.get("core_kind", ""), record["core"])][record["kind"]] += 1
    order = sorted(
        counts, key=lambda k: (k[0] is None, k[0] or 0, k[1] != "sparse_core", k[2] is None, k[2] or 0)
    )
    return tuple(
        TraceLane(device=d, core=c, core_kind=kind, counts=dict(counts[(d, kind, c)])) for d, kind, c in order
    )


def build(
    records: list[Record],
    *,
    operands: list[Record],
    counts: dict[str, int],
    seconds: float,
    case: str,
    hbm_bandwidth: float,
    failures: list[str],
    limit: int = MAX_EVENTS,
) -> Trace:
    """The `Trace` of one recorded call (`counts`: per kind, including records not kept in memory)."""
    records = sorted((dict(r) for r in records), key=lambda r: r["t"])  # the builder adds fields
    assign_devices(records)
    assign_core_kinds(records)
    link_dmas(records)
    steps = derive_steps(records)
    visits = grid_visits(records, steps)
    kept, cut = cap(records, limit)
    if cut is not None:
        steps = [s for s in steps if s["t"] <= cut]
        visits = {k: [v for v in found if v.t <= cut] for k, found in visits.items()}
    truncated = len(kept) < sum(counts.values())
    return Trace(
        available=True,
        case=case,
        seconds=round(seconds, 6),
        hbm_bandwidth=hbm_bandwidth,
        events=tuple(event(r) for r in kept),
        counts=dict(sorted(counts.items())),
        lanes=lanes(records),
        steps=tuple(TraceStep(**{**s, "t": round(s["t"], 6), "t_end": round(s["t_end"], 6)}) for s in steps),
        grid=grid_view(operands, visits, steps),
        truncated=truncated,
        note=_note(case, (len(records), len(kept), sum(counts.values()), limit), cut, failures),
    )


def event(record: Record) -> TraceEvent:
    """One record as a `TraceEvent`: regions as text, internal fields left out."""
    known = {f.name for f in dataclasses.fields(TraceEvent)}
    fields = {k: v for k, v in record.items() if k in known and v is not None}
    fields["t"], fields["dur"] = round(record["t"], 6), round(record["dur"], 6)
    for side in ("src", "dst"):
        if f"{side}_range" in record:
            fields[f"{side}_region"] = region_text(record[f"{side}_range"])
    return TraceEvent(**{"device": None, "core": None, **fields})


def _note(case: str, sizes: tuple[int, int, int, int], cut: float | None, failures: list[str]) -> str:
    recorded, kept, total, limit = sizes
    parts = [
        f"Host times of the CPU simulation (TPU interpret mode) during the first call of case {case!r}, "
        "not of the timing repeats; t counts from the start of that call, which includes tracing and "
        "compiling. In the default on_wait DMA mode a DMA's data moves inside its wait. For an "
        "estimated TPU view, let a DMA last bytes / hbm_bandwidth."
    ]
    if recorded < total:
        parts.append(f"Only the first {recorded:,} of {total:,} events were recorded.")
    if kept < recorded:
        cut_text = f", then the events after t = {cut:.3f} s" if cut is not None else ""
        parts.append(f"Over the cap of {limit:,} events: loads and stores are left out{cut_text}.")
    if recorded < total or kept < recorded:
        parts.append("The counts cover every event.")
    if failures:
        parts.append("Some callbacks could not be recorded: " + "; ".join(failures))
    return " ".join(parts)
