"""Time a kernel on the device from profiler trace events, with host dispatch reported apart.

Timing around calls with `time.perf_counter` counts the host's dispatch of each call (~0.1 ms
on a v5e host) as kernel time. TPU kernel libraries time from the profiler instead, and so does
this module: `profile` runs the call `warmup` times untraced, then `repeats` times inside
`jax.profiler.start_trace(..., create_perfetto_trace=True)`, each call wrapped in a
`jax.profiler.TraceAnnotation` named `CALL_PREFIX + index` that ends after `block_until_ready`.
The trace (Chrome trace-event JSON, `plugins/profile/<run>/perfetto_trace.json.gz`) is then read
by `call_times`:

- a call's wall time is its annotation event's duration (on the host's Python thread);
- its device time is the union of the complete ("X") events that lie inside the annotation on
  the device's tracks: on a TPU host the processes named `/device:TPU:<n>` (XLA ops and the Pallas
  kernels' custom calls); on a CPU, for testing, the threads that execute XLA programs
  (`tf_XLA...`);
- host dispatch is the wall time less the device time.

Everything but running on a TPU is tested on a CPU with traces `jax.profiler` writes there
(tests/unit/test_devicetime.py). On a TPU host the device tracks' names follow the profiler's
documented XPlane → trace conversion; that path has not been run on a TPU here.
"""

from __future__ import annotations

import gzip
import json
import statistics
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CALL_PREFIX = "playground_call_"
TRACE_NAME = "perfetto_trace.json.gz"


@dataclass(frozen=True)
class CallTime:
    wall_seconds: float
    device_seconds: float

    @property
    def host_seconds(self) -> float:
        return max(self.wall_seconds - self.device_seconds, 0.0)


@dataclass(frozen=True)
class DeviceTiming:
    """Medians over the traced calls; `calls` keeps every one."""

    device_seconds: float
    host_seconds: float
    wall_seconds: float
    calls: tuple[CallTime, ...]
    warmup: int
    source: str  # which tracks counted as the device


def profile(
    run: Callable[[], Any], *, repeats: int = 10, warmup: int = 2, workdir: str | None = None
) -> DeviceTiming:
    """Run `run()` (which must block until its results are ready) under the profiler; see above."""
    import jax

    for _ in range(warmup):
        run()
    with tempfile.TemporaryDirectory(dir=workdir) as logdir:
        jax.profiler.start_trace(logdir, create_perfetto_trace=True)
        try:
            for i in range(repeats):
                with jax.profiler.TraceAnnotation(f"{CALL_PREFIX}{i}"):
                    run()
        finally:
            jax.profiler.stop_trace()
        events = read_trace(find_trace(Path(logdir)))
    return summarize(events, warmup=warmup)


WALL_BUDGET_SECONDS = 0.5  # wall-clock repeats when a trace has no device events


def device_or_wall(run: Callable[[], Any], repeats: int, warmup: int) -> tuple[float, float | None]:
    """(device seconds, host dispatch seconds) per call from profiler traces; a trace without device
    events falls back to wall-clock repeats (`checks.timing`), whose host share is then unknown."""
    from sandbox.harness.checks import timing

    try:
        found = profile(run, repeats=repeats, warmup=warmup)
    except (OSError, ValueError, RuntimeError):
        found = None
    if found is not None and found.device_seconds > 0:
        return found.device_seconds, found.host_seconds
    return timing.measure(run, WALL_BUDGET_SECONDS).median, None


def find_trace(logdir: Path) -> Path:
    found = sorted(logdir.glob(f"plugins/profile/*/{TRACE_NAME}"))
    if not found:
        raise FileNotFoundError(f"the profiler wrote no {TRACE_NAME} under {logdir}")
    return found[-1]


def read_trace(path: Path) -> list[dict[str, Any]]:
    """The trace's events (a `{"traceEvents": [...]}` object or a bare list, gzipped or not)."""
    raw = path.read_bytes()
    data = json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
    events = data.get("traceEvents", []) if isinstance(data, dict) else data
    return [e for e in events if isinstance(e, dict)]


def summarize(events: Sequence[dict[str, Any]], *, warmup: int = 0) -> DeviceTiming:
    times, source = call_times(events)
    if not times:
        raise ValueError(f"no {CALL_PREFIX}* annotations in the trace")
    return DeviceTiming(
        device_seconds=statistics.median(t.device_seconds for t in times),
        host_seconds=statistics.median(t.host_seconds for t in times),
        wall_seconds=statistics.median(t.wall_seconds for t in times),
        calls=tuple(times),
        warmup=warmup,
        source=source,
    )


def call_times(events: Sequence[dict[str, Any]]) -> tuple[list[CallTime], str]:
    """Per annotated call (in order): its wall time and the device time inside it."""
    processes, threads = _names(events)
    tpu = {pid for pid, name in processes.items() if name.startswith("/device:TPU")}
    if tpu:
        on_device = lambda e: e.get("pid") in tpu  # noqa: E731
        source = "TPU device tracks (" + ", ".join(sorted(processes[p] for p in tpu)) + ")"
    else:
        xla = {key for key, name in threads.items() if name.startswith("tf_XLA")}
        on_device = lambda e: (e.get("pid"), e.get("tid")) in xla  # noqa: E731
        source = "the host's XLA execution threads (no TPU in this trace)"
    complete = [e for e in events if e.get("ph") == "X" and "dur" in e]
    calls = sorted(
        (e for e in complete if str(e.get("name", "")).startswith(CALL_PREFIX)),
        key=lambda e: int(str(e["name"])[len(CALL_PREFIX) :] or 0),
    )
    device = [(float(e["ts"]), float(e["ts"]) + float(e["dur"])) for e in complete if on_device(e)]
    found = []
    for call in calls:
        start, end = float(call["ts"]), float(call["ts"]) + float(call["dur"])
        inside = [(max(a, start), min(b, end)) for a, b in device if b > start and a < end]
        found.append(CallTime(wall_seconds=(end - start) * 1e-6, device_seconds=union(inside) * 1e-6))
    return found, source


def union(intervals: Iterable[tuple[float, float]]) -> float:
    """Total length covered by the intervals (overlapping events count once)."""
    total, reach = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if b <= reach:
            continue
        total += b - max(a, reach)
        reach = b
    return total


def _names(events: Sequence[dict[str, Any]]) -> tuple[dict[Any, str], dict[tuple[Any, Any], str]]:
    processes: dict[Any, str] = {}
    threads: dict[tuple[Any, Any], str] = {}
    for e in events:
        if e.get("ph") != "M":
            continue
        name = str((e.get("args") or {}).get("name", ""))
        if e.get("name") == "process_name":
            processes[e.get("pid")] = name
        elif e.get("name") == "thread_name":
            threads[(e.get("pid"), e.get("tid"))] = name
    return processes, threads
