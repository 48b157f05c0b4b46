"""What the separate checker costs a run: the reference's job, against the whole run.

Usage: .venv/bin/python bench/checker_cost.py [--repeats 3] [--sandbox local|hardened|auto]

Since issue 22 a run that checks outputs is two jobs (`sandbox.backends.checking`): the reference's
job and the kernel's job, compared outside both. With no second slot free they run one after the
other in the run's slot ("serial", as before pairing); with one free the reference's job borrows it
and runs beside the kernel's job ("paired", `sandbox.backends.pairing`). Measured in one run,
interleaved, through `sandbox.backends.execute` on one backend (as a server runs them):
- catalog `tiled_matmul`, reference not yet kept (the first run of an entry on a server process),
  serial and paired;
- catalog `tiled_matmul`, reference kept (every later run: no reference job at all);
- a scratch file with its own `reference` (every run has a reference's job), serial and paired.
Reported: median wall of the whole run, of the reference's job, what the verdict added to the run
(the whole run minus the kernel's job), and the share of the run that is.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sandbox.backends import create_backend, default_backend_name, kept_references
from sandbox.backends.execute import execute
from sandbox.backends.pairing import RunSlots
from sandbox.catalog.entries import load_catalog
from sandbox.jobs.build import make_job

SCRATCH = """
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl

def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (256, 256)),)

def reference(x):
    return jnp.tanh(x) * 2

def body(x_ref, o_ref):
    o_ref[...] = jnp.tanh(x_ref[...]) * 2

def kernel(x):
    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
"""


class Timed:
    """A backend that records each job's wall time by its role."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.walls: dict[str, float] = {}

    def run(self, job, on_event, cancel):
        started = time.monotonic()
        try:
            return self.inner.run(job, on_event, cancel)
        finally:
            self.walls[job.role] = time.monotonic() - started


def one(backend: Timed, job, *, keep: bool, paired: bool) -> tuple[float, float, float, str]:
    """(whole run, reference's job, kernel's job) seconds and the status."""
    if not keep:
        kept_references.CACHES.clear()
    backend.walls = {}
    slots = RunSlots(2) if paired else None  # a second slot free (paired), or none (serial)
    started = time.monotonic()
    finished = execute(backend, job, threading.Event(), lambda kind, data: None, slots)
    walls = backend.walls
    total = time.monotonic() - started
    return total, walls.get("reference", 0.0), walls.get("kernel", 0.0), finished.result.status.value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sandbox", default="auto")
    args = parser.parse_args()
    name = default_backend_name() if args.sandbox == "auto" else args.sandbox
    backend = Timed(create_backend(name))
    entry = load_catalog().get("tiled_matmul")
    catalog = make_job(entry.solution_source, entry=entry, trace=False)
    scratch = make_job(SCRATCH, trace=False)
    rows = {
        "catalog, reference not kept, serial": (catalog, False, False),
        "catalog, reference not kept, paired": (catalog, False, True),
        "catalog, reference kept": (catalog, True, False),
        "scratch with its own reference, serial": (scratch, False, False),
        "scratch with its own reference, paired": (scratch, False, True),
    }
    one(backend, catalog, keep=False, paired=False)  # warm the pool and the kept reference
    samples: dict[str, list[tuple[float, float, float]]] = {k: [] for k in rows}
    for _ in range(args.repeats):
        for label, (job, keep, paired) in rows.items():
            total, ref, kernel, status = one(backend, job, keep=keep, paired=paired)
            if status != "passed":  # e.g. a timeout on an overloaded machine: said, not averaged in
                print(f"{label}: {status} after {total:.1f} s; sample left out")
                continue
            samples[label].append((total, ref, kernel))
    # What the verdict adds: the whole run minus the same kernel's job alone (from the serial rows:
    # a paired kernel's job shares the CPU with its reference's job, so its own wall is no baseline).
    alone = {
        id(job): statistics.median(k for _, _, k in samples[label])
        for label, (job, _, paired) in rows.items()
        if not paired and samples[label]
    }
    print(f"backend {name}, {args.repeats} interleaved repeats, medians")
    print(f"{'run':40} {'whole run':>10} {'reference job':>14} {'added':>7} {'share':>6}")
    for label, got in samples.items():
        if not got or id(rows[label][0]) not in alone:
            print(f"{label:40} no passing sample")
            continue
        total = statistics.median(t for t, _, _ in got)
        ref = statistics.median(r for _, r, _ in got)
        added = max(0.0, total - alone[id(rows[label][0])])
        print(f"{label:40} {total:9.2f}s {ref:13.2f}s {added:6.2f}s {added / total:6.0%}")
    backend.inner.close()


if __name__ == "__main__":
    main()
