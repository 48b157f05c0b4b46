"""Simulating a `cost.Program` (a pl.kernel's, or a self-synchronising pallas_call's, events per core).

Each core's events run in order: work advances the core's clock; a DMA costs the scalar core its
issue and then goes to the core's DMA engine (`dma_engine`: ready the chip's DMA latency after its
issue, a write's own where the chip has one, then moved one at a time in the order the copies became
ready: HBM traffic at HBM bandwidth, a remote copy over ICI; where the chip's reads and writes were
measured moving side by side, each direction in its own lane, `dma_engine.SharedEngine`, and a read's
latency partly after its bytes move, `_tail`) and signals its semaphore(s) when landed;
a wait blocks until the DMAs it waits for have landed; a step marker costs the
step's fixed cost (a grid step's with MXU work, the MXU's fill and drain; without, the chip's loop step,
or a grid's dotless step where it has none, and the cross-lane unit's latency added where the step uses
that unit, as `grid_time.step_overhead` has it); cross-core semaphore signals and waits
(a core barrier) are resolved by re-simulating until the arrival times settle. Long runs of
identical steps are added up once steady (`steady.Tracker`).
"""

from __future__ import annotations

import collections
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from sandbox.harness.model.cost import MAX_PASSES, Event, Program, Rates, Steps, crosses_lanes
from sandbox.harness.model.dma_engine import READ, WRITE, Engine, SharedEngine
from sandbox.harness.model.ops import useful
from sandbox.harness.model.steady import Tracker


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
    overhead: float = 0.0  # the step's fixed cost, DMA issues and scalar work

    def shifted(self, label: str, seconds: float) -> _Row:
        """The same step `seconds` later (a repeat in a steady run, `steady`)."""
        return _Row(
            label, self.start + seconds, self.compute, self.copy, self.copy_in, self.copy_out,
            self.flops, self.vector, self.end + seconds, self.overhead,
        )  # fmt: skip


@dataclass
class _Core:
    """One core's state during a simulation pass."""

    t: float = 0.0
    engine: Engine | SharedEngine = field(default_factory=Engine)
    pending: dict[Hashable, collections.deque[list[float]]] = field(
        default_factory=lambda: collections.defaultdict(collections.deque)
    )
    consumed: collections.Counter[Hashable] = field(default_factory=collections.Counter)
    rows: list[_Row] = field(default_factory=list)
    fill: float | None = None
    mxu: collections.Counter[str] = field(default_factory=collections.Counter)
    moved: float = 0.0
    # Step markers (event indices) whose step has no MXU work, each with whether it uses the cross-lane unit
    dotless: Mapping[int, bool] = field(default_factory=dict)


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
    # A long pipeline repeats the same event objects (one walk per iteration class, `iteration_classes`): the cost
    # of a piece of work is worked out once per object, and MXU totals are added up at the end.
    work: dict[int, tuple[float, float, float]] = {}
    for c, events in enumerate(program.events):
        state = _Core(t=rates.launch, engine=_engine(rates), dotless=_dotless_steps(events))
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
                _apply(event, c, state, rates, arrivals, sent, i - 1)
                continue
            key = id(event)
            found = work.get(key)
            if found is None:
                scalar = (event[3] if len(event) > 3 else 0.0) * rates.scalar
                after, units = event[4] if len(event) > 4 else (), event[5] if len(event) > 5 else None
                reduced = event[6] if len(event) > 6 else None
                compute = float(rates.compute(event[1], float(event[2]), after, units, reduced))
                found = work[key] = (compute, useful(event[1]), scalar)
            done[key] += 1
            state.t += found[0] + found[2]
            if state.rows:
                row = state.rows[-1]
                row.compute += found[0]
                row.overhead += found[2]
                row.flops += found[1]
                row.vector += event[2]
        state.engine.settle_all()  # copies never waited for: the engine still moves them
        _count_mxu(state, events, done)
        if state.rows:
            state.rows[-1].end = state.t
        cores.append(state)
    return cores, {k: sorted(v) for k, v in sent.items()}


def _dotless_steps(events: Sequence[Event]) -> dict[int, bool]:
    """The step markers (event indices) whose step, up to the next marker, does no MXU work, each with
    whether its work uses the cross-lane unit (a lane reduction, a transpose)."""
    found: dict[int, bool] = {}
    mark, dots, crosses = -1, False, False
    for i, event in enumerate(events):
        if event[0] == "step":
            if mark >= 0 and not dots:
                found[mark] = crosses
            mark, dots, crosses = i, False, False
        elif event[0] == "work":
            dots = dots or any(event[1].values())
            crosses = crosses or bool(crosses_lanes(event[5] if len(event) > 5 else None, 0.0))
    if mark >= 0 and not dots:
        found[mark] = crosses
    return found


def _count_mxu(state: _Core, events: Sequence[Event], done: Mapping[int, int]) -> None:
    seen: set[int] = set()
    for event in events:
        if event[0] == "work" and id(event) not in seen:
            seen.add(id(event))
            for kind, flops in event[1].items():
                state.mxu[kind] += flops * done[id(event)]


def _engine(rates: Rates) -> Engine | SharedEngine:
    if rates.dma_read_share and rates.dma_write_share:
        shares = (rates.dma_read_share, rates.dma_write_share)
        return SharedEngine(shares=shares, switch=rates.dma_switch, free=rates.launch)
    return Engine(free=rates.launch)


_WRITES = ("out", "hbm")  # the copies whose writes to HBM set their pace


def _latency(way: str, rates: Rates) -> float:
    """From an HBM copy's issue to its landing, less its bytes' time: a write's (VMEM -> HBM) where the chip
    has its own."""
    if way == "out" and rates.write_latency is not None:
        return rates.write_latency
    return rates.latency if way in ("in", "out", "hbm") else 0.0


def _tail(way: str, rates: Rates) -> float:
    """Of that latency, the part after its last byte moves (a read's bytes still on their way to VMEM):
    the engine takes the copy that much sooner, and it lands that much after."""
    return min(rates.dma_read_tail, rates.latency) if way == "in" else 0.0


def _apply(
    event: Event,
    c: int,
    s: _Core,
    rates: Rates,
    arrivals: Mapping[tuple[int, Hashable], Sequence[tuple[float, float]]],
    sent: dict[tuple[int, Hashable], list[tuple[float, float]]],
    at: int,
) -> None:
    """Event number `at` of core `c`'s program, on its state `s`."""
    kind = event[0]
    row = s.rows[-1] if s.rows else None
    if kind == "step":
        if row is not None:
            row.end = s.t
        elif s.fill is None:
            s.fill = s.t - rates.launch
        fixed = rates.step
        loop_step = rates.loop_step if rates.loop_step is not None else rates.dotless_step
        if at in s.dotless and loop_step is not None:
            fixed = loop_step + (rates.dotless_xlu if s.dotless[at] else 0.0)
        s.rows.append(_Row(label=event[1], start=s.t, overhead=fixed))
        s.t += fixed
    elif kind == "dma":
        size, semaphore, way = event[1], event[2], event[3]
        s.t += rates.dma  # the scalar core builds and issues the descriptor
        if row is not None:
            row.overhead += rates.dma
        seconds = _dma_seconds(size, way, rates)
        tail = _tail(way, rates)
        signals = [([0.0, size], tail)]
        if len(event) > 4 and event[4] is not None:  # a remote copy's send semaphore
            signals.append(([0.0, size], 0.0))
            s.pending[event[4]].append(signals[1][0])
        s.pending[semaphore].append(signals[0][0])
        s.engine.issue(s.t + _latency(way, rates) - tail, seconds, signals, WRITE if way in _WRITES else READ)
        s.moved += size if way and way != "ici" else 0
        if row is not None:
            row.copy += seconds
            row.copy_in += size if way in ("in", "hbm", "ici") else 0
            row.copy_out += size if way in ("out", "hbm", "ici") else 0
    elif kind == "wait":
        queue = s.pending[event[1]]
        _settle(s.engine, queue, event[2])
        s.t = max(s.t, _landed(queue, event[2]))
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


def _dma_seconds(size: float, way: str, rates: Rates) -> float:
    """How long the engine is busy with one DMA: HBM traffic at the HBM bandwidth (a program's own rates
    for reads and writes moving alone where the chip has them measured); a remote DMA ("ici") at one
    ICI link's bandwidth plus a hop's latency; on-chip copies ("") are free."""
    if way == "ici":
        return rates.hop + size / rates.ici if rates.ici else size / rates.bandwidth
    if way in _WRITES:
        return size / (rates.dma_write or rates.write or rates.bandwidth)
    return size / (rates.dma_read or rates.bandwidth) if way else 0.0


def _least_bytes(refs: float, moved: float) -> float:
    """What a perfect program would move: its HBM refs once each, or the bytes its copies move where
    fewer (a kernel that reads a slice of an input, or none of it: its roofline, the floor a measured time
    cannot beat, counts those alone)."""
    return min(refs, moved) if moved > 0 else refs


def _settle(engine: Engine | SharedEngine, queue: collections.deque[list[float]], size: float) -> None:
    """Place on the engine the copies that the first `size` bytes of a semaphore's queue come from."""
    for entry in queue:
        if size <= 0:
            break
        engine.settle(entry)
        size -= entry[1]


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
    overhead = np.fromiter((r.overhead for _, r in rows), dtype=float, count=len(rows))
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
        min_bytes=_least_bytes(program.min_bytes, sum(state.moved for state in cores)),
        hbm_bytes=sum(state.moved for state in cores),
        notes=list(program.notes),
        overlaps=program.overlaps,
        unit=program.unit,
    )
