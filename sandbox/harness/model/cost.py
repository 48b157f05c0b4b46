"""The arithmetic of the TPU time model: pure (numpy only, no JAX), so it is unit-tested by hand.

A kernel reaches it in one of two shapes, built from the traced kernel by `grid` and `program`:

- `Grid`: the automatic pipeline of a `pallas_call`. Per step: the bytes that must be in VMEM for
  it (copied during the previous step, or before the first), the bytes it writes back (during the
  next step), its MXU flops per dot kind and its vector element ops. Closed form, per core:

      fill  = copy_in[0] / bw
      step  = max(compute[i], (copy_in[i+1] + copy_out[i-1]) / bw) + step_seconds
      drain = copy_out[-1] / bw
      time  = launch + max over cores (fill + sum(step) + drain)

  with compute = max(MXU time, vector time): the MXU and the VPU issue from the same VLIW bundles,
  so within a step the larger of the two is what the step waits for.
- `Program`: what `pl.kernel` bodies (and kernels that start their own DMAs) do, as a list of
  events per core, simulated in order: work advances the core's clock; a DMA queues on the core's
  DMA engine (one at a time, at HBM bandwidth) and signals its semaphore when done; a wait blocks
  until the DMAs it waits for are done; a step marker (a loop iteration that talks to the DMA
  engine) costs `step_seconds`; cross-core semaphore signals and waits (a core barrier) are
  resolved by re-simulating until the arrival times settle.

Both give `Steps`, one row per step, which `summary.summarize` turns into an `Estimate`.
"""

from __future__ import annotations

import collections
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sandbox.harness.model.steady import Tracker
from sandbox.protocol.chips import ChipInfo

DOT_KINDS = ("bf16", "f32", "f32_3pass", "int8", "fp8")
MAX_PASSES = 6  # re-simulations for cross-core semaphores; a barrier settles in two


@dataclass(frozen=True)
class Rates:
    """Per-TensorCore rates of one chip, in the units the model adds up."""

    bandwidth: float  # HBM bytes per second
    mxu: Mapping[str, float]  # ops per second, per dot kind
    vector: float  # element ops per second
    step: float  # seconds per pipeline step
    launch: float  # seconds per kernel launch
    cores: int  # TensorCores on the chip

    @classmethod
    def of(cls, chip: ChipInfo) -> Rates:
        return cls(
            bandwidth=chip.hbm_bandwidth,
            mxu={kind: chip.mxu_rate(kind) for kind in DOT_KINDS},
            vector=chip.vector_ops,
            step=chip.step_seconds,
            launch=chip.launch_seconds,
            cores=chip.tensor_cores,
        )

    def compute(self, mxu: Mapping[str, Any], vector: Any) -> Any:
        """Seconds of MXU work and of vector work overlap: the larger counts (arrays or floats)."""
        mxu_seconds = sum((flops / self.mxu[kind] for kind, flops in mxu.items()), start=0.0 * vector)
        return np.maximum(mxu_seconds, vector / self.vector)


@dataclass
class Steps:
    """One kernel's steps on the estimated clock (arrays, one entry per step) and its totals."""

    kernel: str
    kind: str
    cores: int
    core: np.ndarray
    start: np.ndarray
    seconds: np.ndarray
    compute: np.ndarray  # compute seconds of the step
    copy: np.ndarray  # DMA seconds that overlap the step
    stall: np.ndarray  # seconds the step waited for DMAs beyond its compute
    overhead: np.ndarray
    copy_in: np.ndarray  # bytes
    copy_out: np.ndarray
    flops: np.ndarray
    vector: np.ndarray
    labels: list[str]
    points: list[tuple[int, ...] | None]
    total: float  # launch + the slowest core
    fill: float  # on the slowest core: copies before its first step
    drain: float  # on the slowest core: write-backs after its last step
    critical: int  # the slowest core
    mxu_flops: dict[str, float] = field(default_factory=dict)  # whole kernel, per dot kind
    family: str = ""
    min_bytes: float = 0.0
    hbm_bytes: float = 0.0  # every byte the DMAs move, including copies outside any step
    notes: list[str] = field(default_factory=list)


@dataclass
class Grid:
    """A pallas_call pipeline: per step (in execution order within each core) what it moves and does."""

    kernel: str
    core: np.ndarray
    points: np.ndarray  # (steps, grid rank): each step's grid coordinates
    copy_in: np.ndarray
    copy_out: np.ndarray
    mxu: dict[str, np.ndarray]
    vector: np.ndarray
    min_bytes: float
    prologue_bytes: float = 0.0  # e.g. scalar-prefetch tables, copied before the grid starts
    cores: int = 1
    notes: list[str] = field(default_factory=list)
    family: str = ""  # `families`: what kind of kernel, for how far its estimate is validated


def grid_steps(grid: Grid, rates: Rates) -> Steps:
    """The closed form above, vectorised over the steps of each core."""
    n = len(grid.core)
    start, seconds = np.zeros(n), np.zeros(n)
    copy, stall = np.zeros(n), np.zeros(n)
    compute = rates.compute(grid.mxu, grid.vector.astype(float))
    core_end, fills, drains = {}, {}, {}
    for c in range(int(grid.core.max()) + 1 if n else 0):
        idx = np.nonzero(grid.core == c)[0] if grid.cores > 1 else np.arange(n)
        if not len(idx):
            continue
        cin = grid.copy_in[idx] / rates.bandwidth
        cout = grid.copy_out[idx] / rates.bandwidth
        during = np.concatenate([cin[1:], [0.0]]) + np.concatenate([[0.0], cout[:-1]])
        step = np.maximum(compute[idx], during) + rates.step
        fill = cin[0] + grid.prologue_bytes / rates.bandwidth
        start[idx] = rates.launch + fill + np.concatenate([[0.0], np.cumsum(step)[:-1]])
        seconds[idx], copy[idx] = step, during
        stall[idx] = np.maximum(during - compute[idx], 0.0)
        fills[int(c)], drains[int(c)] = fill, float(cout[-1])
        core_end[int(c)] = fill + float(step.sum()) + float(cout[-1])
    critical = max(core_end, key=lambda c: core_end[c])
    flops = sum((grid.mxu[k] for k in grid.mxu), start=np.zeros(n))
    return Steps(
        kernel=grid.kernel,
        kind="pallas_call",
        family=grid.family,
        cores=grid.cores,
        core=grid.core,
        start=start,
        seconds=seconds,
        compute=compute,
        copy=copy,
        stall=stall,
        overhead=np.full(n, rates.step),
        copy_in=grid.copy_in,
        copy_out=grid.copy_out,
        flops=flops,
        vector=grid.vector,
        labels=[],
        points=[tuple(int(v) for v in p) for p in grid.points] if n <= 4096 else [],
        total=rates.launch + core_end[critical],
        fill=fills[critical],
        drain=drains[critical],
        critical=critical,
        mxu_flops={k: float(v.sum()) for k, v in grid.mxu.items()},
        min_bytes=grid.min_bytes,
        hbm_bytes=float(grid.copy_in.sum() + grid.copy_out.sum() + grid.prologue_bytes),
        notes=list(grid.notes),
    )


# -- programs: events per core, simulated ------------------------------------------------------
#
# Events are tuples, first item the kind:
#   ("step", label)                     a pipeline step begins (costs rates.step)
#   ("work", {kind: flops}, vector_ops) compute between two synchronisation points
#   ("dma", bytes, semaphore, way)      a DMA starts; way "in" (HBM→VMEM), "out" (VMEM→HBM), "hbm"
#                                       (HBM→HBM), or "" (on-chip: assumed free)
#   ("wait", semaphore, bytes)          wait until `bytes` of DMAs on `semaphore` have landed
#   ("signal", core, semaphore, inc)    add `inc` to `semaphore` on another core (e.g. a barrier)
#   ("sem_wait", semaphore, value)      wait until `value` has arrived on this core's `semaphore`
Event = tuple[Any, ...]


@dataclass
class Program:
    kernel: str
    events: list[list[Event]]  # per core
    min_bytes: float = 0.0
    notes: list[str] = field(default_factory=list)
    family: str = ""


@dataclass(slots=True)
class _Row:
    label: str
    start: float
    compute: float = 0.0
    copy: float = 0.0
    copy_in: float = 0.0
    copy_out: float = 0.0
    flops: float = 0.0
    vector: float = 0.0
    end: float = 0.0

    def shifted(self, label: str, seconds: float) -> _Row:
        """The same step `seconds` later (a repeat in a steady run, `steady`)."""
        return _Row(
            label, self.start + seconds, self.compute, self.copy, self.copy_in, self.copy_out,
            self.flops, self.vector, self.end + seconds,
        )  # fmt: skip


@dataclass
class _Core:
    """One core's state during a simulation pass."""

    t: float = 0.0
    engine: float = 0.0  # when the DMA engine is free
    pending: dict[Hashable, collections.deque[list[float]]] = field(
        default_factory=lambda: collections.defaultdict(collections.deque)
    )
    consumed: collections.Counter[Hashable] = field(default_factory=collections.Counter)
    rows: list[_Row] = field(default_factory=list)
    fill: float | None = None
    mxu: collections.Counter[str] = field(default_factory=collections.Counter)
    moved: float = 0.0


def program_steps(program: Program, rates: Rates) -> Steps:
    """Simulate every core; re-run while cross-core signal times still move (a barrier: twice)."""
    arrivals: dict[tuple[int, Hashable], list[tuple[float, float]]] = {}
    for _ in range(MAX_PASSES):
        cores, sent = _simulate(program, rates, arrivals)
        if sent == arrivals:
            break
        arrivals = sent
    return _as_steps(program, rates, cores)


def _simulate(
    program: Program, rates: Rates, arrivals: dict[tuple[int, Hashable], list[tuple[float, float]]]
) -> tuple[list[_Core], dict[tuple[int, Hashable], list[tuple[float, float]]]]:
    sent: dict[tuple[int, Hashable], list[tuple[float, float]]] = collections.defaultdict(list)
    cores = []
    # A long pipeline repeats the same event objects (one walk per step class, `classes`): the cost
    # of a piece of work is worked out once per object, and MXU totals are added up at the end.
    work: dict[int, tuple[float, float]] = {}
    for c, events in enumerate(program.events):
        state = _Core(t=rates.launch, engine=rates.launch)
        done: collections.Counter[int] = collections.Counter()
        steady = Tracker(events)
        i = 0
        while i < len(events):
            event = events[i]
            if event[0] == "step":
                skip_to = steady.forward(state, i, done)
                if skip_to != i:
                    i = skip_to
                    continue
            i += 1
            if event[0] != "work":
                _apply(event, c, state, rates, arrivals, sent)
                continue
            key = id(event)
            found = work.get(key)
            if found is None:
                found = work[key] = (float(rates.compute(event[1], float(event[2]))), sum(event[1].values()))
            done[key] += 1
            state.t += found[0]
            if state.rows:
                row = state.rows[-1]
                row.compute += found[0]
                row.flops += found[1]
                row.vector += event[2]
        _count_mxu(state, events, done)
        if state.rows:
            state.rows[-1].end = state.t
        cores.append(state)
    return cores, {k: sorted(v) for k, v in sent.items()}


def _count_mxu(state: _Core, events: Sequence[Event], done: Mapping[int, int]) -> None:
    seen: set[int] = set()
    for event in events:
        if event[0] == "work" and id(event) not in seen:
            seen.add(id(event))
            for kind, flops in event[1].items():
                state.mxu[kind] += flops * done[id(event)]


def _apply(
    event: Event,
    c: int,
    s: _Core,
    rates: Rates,
    arrivals: Mapping[tuple[int, Hashable], Sequence[tuple[float, float]]],
    sent: dict[tuple[int, Hashable], list[tuple[float, float]]],
) -> None:
    kind = event[0]
    row = s.rows[-1] if s.rows else None
    if kind == "step":
        if row is not None:
            row.end = s.t
        elif s.fill is None:
            s.fill = s.t - rates.launch
        s.rows.append(_Row(label=event[1], start=s.t))
        s.t += rates.step
    elif kind == "dma":
        size, semaphore, way = event[1], event[2], event[3]
        begin = max(s.t, s.engine)
        seconds = size / rates.bandwidth if way else 0.0
        s.engine = begin + seconds
        s.pending[semaphore].append([s.engine, size])
        s.moved += size if way else 0
        if row is not None:
            row.copy += seconds
            row.copy_in += size if way in ("in", "hbm") else 0
            row.copy_out += size if way in ("out", "hbm") else 0
    elif kind == "wait":
        s.t = max(s.t, _landed(s.pending[event[1]], event[2]))
    elif kind == "signal":
        sent[(event[1], event[2])].append((s.t, float(event[3])))
    elif kind == "sem_wait":
        key = (c, event[1])
        need = s.consumed[event[1]] + event[2]
        total = 0.0
        for when, inc in arrivals.get(key, ()):
            total += inc
            if total >= need:
                s.t = max(s.t, when)
                break
        s.consumed[event[1]] += event[2]


def _landed(queue: collections.deque[list[float]], size: float) -> float:
    """Take `size` bytes of finished DMAs off a semaphore, oldest first: when the last one lands."""
    done = 0.0
    while queue and size > 0:
        entry = queue[0]
        done = max(done, entry[0])
        if entry[1] <= size:
            size -= entry[1]
            queue.popleft()
        else:
            entry[1] -= size
            size = 0
    return done


def _as_steps(program: Program, rates: Rates, cores: list[_Core]) -> Steps:
    rows = [(c, r) for c, state in enumerate(cores) for r in state.rows]
    ends = [state.t - rates.launch for state in cores]
    critical = int(np.argmax(ends)) if ends else 0
    flat = (
        v
        for _, r in rows
        for v in (r.start, r.compute, r.copy, r.copy_in, r.copy_out, r.flops, r.vector, r.end)
    )
    table = np.fromiter(flat, dtype=float, count=8 * len(rows)).reshape(len(rows), 8)
    names = ("start", "compute", "copy", "copy_in", "copy_out", "flops", "vector", "end")
    col = {name: table[:, i] for i, name in enumerate(names)}
    seconds = col["end"] - col["start"]
    overhead = np.full(len(rows), rates.step)
    mxu: collections.Counter[str] = collections.Counter()
    for state in cores:
        mxu.update(state.mxu)
    last = cores[critical].rows[-1].end if cores and cores[critical].rows else rates.launch
    found = cores[critical].fill if cores else None
    fill = found if found is not None else 0.0
    return Steps(
        kernel=program.kernel,
        kind="pl.kernel",
        family=program.family,
        cores=len(cores),
        core=np.array([c for c, _ in rows], dtype=int),
        start=col["start"],
        seconds=seconds,
        compute=col["compute"],
        copy=col["copy"],
        stall=np.maximum(seconds - col["compute"] - overhead, 0.0),
        overhead=overhead,
        copy_in=col["copy_in"],
        copy_out=col["copy_out"],
        flops=col["flops"],
        vector=col["vector"],
        labels=[r.label for _, r in rows],
        points=[None] * len(rows),
        total=rates.launch + max(ends, default=0.0),
        fill=fill,
        drain=max(cores[critical].t - last, 0.0) if cores else 0.0,
        critical=critical,
        mxu_flops=dict(mxu),
        min_bytes=program.min_bytes,
        hbm_bytes=sum(state.moved for state in cores),
        notes=list(program.notes),
    )
