"""`/metrics` in the Prometheus text format: runs by status and pool, queue depth and wait, run
latency histograms, live workers, sandbox failures.

Both run queues fill one `MetricsSnapshot` (the in-process one from a `MetricsBook` in memory, the
Redis one from counters the workers and scripts keep in Redis, so every web server reports the
whole deployment), and one renderer turns it into the exposition format through prometheus-client.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.registry import Collector

from sandbox.protocol import Phases
from sandbox.protocol.result import PHASE_NAMES
from sandbox.queue.metrics import BUCKETS


@dataclass
class Histogram:
    """Cumulative counts per upper bound (BUCKETS, then +Inf), their sum and count."""

    counts: list[int] = field(default_factory=lambda: [0] * (len(BUCKETS) + 1))
    sum: float = 0.0

    def observe(self, value: float) -> None:
        for i, bound in enumerate(BUCKETS):
            if value <= bound:
                self.counts[i] += 1
        self.counts[-1] += 1
        self.sum += value

    @property
    def count(self) -> int:
        return self.counts[-1]


@dataclass
class MetricsSnapshot:
    runs: dict[tuple[str, str], int] = field(default_factory=dict)  # (pool, status) → runs ended
    failures: dict[str, int] = field(default_factory=dict)  # pool → runs the sandbox failed
    wait: dict[str, Histogram] = field(default_factory=dict)  # pool → queued until started
    run: dict[str, Histogram] = field(default_factory=dict)  # pool → started until done
    latency: dict[str, Histogram] = field(default_factory=dict)  # pool → submitted until done
    queued: dict[str, int] = field(default_factory=dict)
    oldest_wait: dict[str, float] = field(default_factory=dict)
    workers: dict[str, int] = field(default_factory=dict)
    slots: dict[str, int] = field(default_factory=dict)
    busy: dict[str, int] = field(default_factory=dict)
    # (pool, phase) → that phase's seconds (`RunResult.phases`); pool → submitted until the first verdict
    phases: dict[tuple[str, str], Histogram] = field(default_factory=dict)
    first_verdict: dict[str, Histogram] = field(default_factory=dict)


class MetricsBook:
    """The in-process queue's counters (the Redis queue keeps the same ones in Redis)."""

    def __init__(self) -> None:
        self.totals = MetricsSnapshot()

    def ended(
        self,
        pool: str,
        status: str,
        *,
        created: float,
        started: float | None,
        now: float,
        failure: bool,
        phases: Phases | None = None,
    ) -> None:
        t = self.totals
        t.runs[(pool, status)] = t.runs.get((pool, status), 0) + 1
        if failure:
            t.failures[pool] = t.failures.get(pool, 0) + 1
        t.latency.setdefault(pool, Histogram()).observe(now - created)
        if started is not None:
            t.wait.setdefault(pool, Histogram()).observe(started - created)
            t.run.setdefault(pool, Histogram()).observe(now - started)
        if phases is not None:
            observe_phases(t, pool, phases)


def observe_phases(snapshot: MetricsSnapshot, pool: str, phases: Phases) -> None:
    """Count each phase a run went through (the ones it never reached are not counted)."""
    for name in PHASE_NAMES:
        value = getattr(phases, name)
        if value is not None:
            snapshot.phases.setdefault((pool, name), Histogram()).observe(value)
    if phases.first_verdict_after is not None:
        snapshot.first_verdict.setdefault(pool, Histogram()).observe(phases.first_verdict_after)


def lua_number(bound: float) -> str:
    """A bound as Lua's tostring writes it (the Redis scripts' hash fields)."""
    return str(int(bound)) if float(bound).is_integer() else repr(bound)


class _SnapshotCollector(Collector):
    def __init__(self, snapshot: MetricsSnapshot) -> None:
        self.snapshot = snapshot

    def collect(self) -> Iterator[CounterMetricFamily | GaugeMetricFamily | HistogramMetricFamily]:
        s = self.snapshot
        runs = CounterMetricFamily(
            "playground_runs", "Runs ended, by pool and status", labels=["pool", "status"]
        )
        for (pool, status), n in sorted(s.runs.items()):
            runs.add_metric([pool, status], n)
        yield runs
        failures = CounterMetricFamily(
            "playground_sandbox_failures",
            "Runs the sandbox failed to run (infrastructure errors)",
            labels=["pool"],
        )
        for pool, n in sorted(s.failures.items()):
            failures.add_metric([pool], n)
        yield failures
        for name, what, values in (
            ("playground_queue_wait_seconds", "Time runs waited in the queue", s.wait),
            ("playground_run_seconds", "Time runs took once started", s.run),
            ("playground_run_latency_seconds", "Time from submission to result", s.latency),
        ):
            family = HistogramMetricFamily(name, what, labels=["pool"])
            for pool, h in sorted(values.items()):
                family.add_metric([pool], _buckets(h), h.sum)
            yield family
        phases = HistogramMetricFamily(
            "playground_run_phase_seconds",
            "Time runs spent in each phase (queued, reference, started, imported, compiled, "
            "first_verdict, done)",
            labels=["pool", "phase"],
        )
        for (pool, phase), h in sorted(s.phases.items()):
            phases.add_metric([pool, phase], _buckets(h), h.sum)
        yield phases
        first = HistogramMetricFamily(
            "playground_first_verdict_seconds",
            "Time from submission to the first case's verdict",
            labels=["pool"],
        )
        for pool, h in sorted(s.first_verdict.items()):
            first.add_metric([pool], _buckets(h), h.sum)
        yield first
        for name, what, gauges in (
            ("playground_queue_depth", "Runs waiting in the queue", s.queued),
            (
                "playground_queue_oldest_wait_seconds",
                "How long the oldest waiting run has waited",
                s.oldest_wait,
            ),
            ("playground_workers_live", "Live runner workers", s.workers),
            ("playground_slots", "Slots of the live workers", s.slots),
            ("playground_slots_busy", "Slots running a job", s.busy),
        ):
            gauge = GaugeMetricFamily(name, what, labels=["pool"])
            for pool, value in sorted(gauges.items()):
                gauge.add_metric([pool], value)
            yield gauge


def _buckets(h: Histogram) -> list[tuple[str, float]]:
    return [*((lua_number(b), c) for b, c in zip(BUCKETS, h.counts, strict=False)), ("+Inf", h.count)]


def render(snapshot: MetricsSnapshot) -> bytes:
    """The snapshot in the Prometheus text exposition format."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_SnapshotCollector(snapshot))
    return generate_latest(registry)
