"""What recording the kernel trace costs, in one run.

Usage: .venv/bin/python bench/trace_cost.py [--runs 3] [--budget 0.5]

Runs the worked solutions of `tiled_matmul` (pl.kernel + emit_pipeline) and `tiled_matmul_pallas_call`
(pallas_call grid) through the local backend (fresh child processes) with `Job.trace` on and off,
interleaved, and prints medians and on/off ratios of:
- first call: the traced call itself (trace + compile + run, with every callback recorded);
- to compiled: harness time from "user code imported" to "first case compiled", which with tracing
  also covers assembling the trace and writing it to the parent;
- kernel median: the timing repeats, where the wrappers are disarmed but a pallas_call still makes
  one grid-point-recorder callback per grid point;
- job wall: the whole child process, as the caller sees it.
Times are host times of the CPU simulation and move with machine load, which is printed too.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import threading

from sandbox.backends import create_backend
from sandbox.catalog.entries import load_catalog
from sandbox.jobs.build import make_job
from sandbox.protocol import Execution, RunStatus, to_json_dict
from sandbox.results.classify import classify

ENTRIES = ("tiled_matmul", "tiled_matmul_pallas_call")
METRICS = ("first call", "to compiled", "kernel median", "job wall")


def once(slug: str, trace: bool, budget: float) -> dict[str, float]:
    entry = load_catalog().get(slug)
    assert entry is not None, slug
    job = make_job(entry.solution_source, entry=entry, chip="v5p", timing_budget_seconds=budget, trace=trace)
    backend = create_backend("local")
    try:
        execution = backend.run(job, lambda event: None, threading.Event())
    finally:
        backend.close()
    result = classify(job, execution)
    if result.status is not RunStatus.PASSED or result.timing is None or result.timing.kernel is None:
        raise SystemExit(f"{slug} (trace={trace}) did not pass: {result.summary}")
    if trace and (result.trace is None or not result.trace.available):
        raise SystemExit(f"{slug}: no trace: {result.trace}")
    return {
        "first call": result.timing.first_call_seconds,
        "to compiled": _between(execution, "imported", "compiled"),
        "kernel median": result.timing.kernel.median,
        "job wall": result.wall_seconds,
        "trace bytes": len(json.dumps(to_json_dict(result.trace))) if result.trace else 0,
    }


def _between(execution: Execution, first: str, then: str) -> float:
    times = {event.kind: event.t for event in execution.events}
    return times[then] - times[first]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=3, help="runs per entry and setting")
    parser.add_argument("--budget", type=float, default=0.5, help="timing budget per job, seconds")
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {os.cpu_count()} CPUs")
    for slug in ENTRIES:
        samples: dict[bool, list[dict[str, float]]] = {True: [], False: []}
        for i in range(args.runs):
            for trace in (True, False) if i % 2 == 0 else (False, True):
                samples[trace].append(once(slug, trace, args.budget))
        print(f"\n{slug} (v5p, first case traced; medians of {args.runs} runs each)")
        print(f"    {'':14} {'trace on':>10} {'trace off':>10} {'on/off':>8}")
        for metric in METRICS:
            on = statistics.median(s[metric] for s in samples[True])
            off = statistics.median(s[metric] for s in samples[False])
            print(f"    {metric:14} {on:9.3f}s {off:9.3f}s {on / off:7.2f}x")
        size = statistics.median(s["trace bytes"] for s in samples[True])
        print(f"    trace in the RunResult: {size / 1024:.1f} KiB of JSON")
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
