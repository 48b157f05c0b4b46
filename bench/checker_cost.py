"""What the separate checker costs a run: the reference's job, against the whole run.

Usage: .venv/bin/python bench/checker_cost.py [--repeats 3] [--sandbox local|hardened|auto]

Since issue 22 a run that checks outputs is two jobs (`sandbox.backends.checking`): the
reference's job, then the kernel's job, compared outside both. Measured in one run, interleaved,
through `sandbox.backends.execute` on one backend (as a server runs them):
- catalog `tiled_matmul`, reference not yet kept (the first run of an entry on a server process);
- catalog `tiled_matmul`, reference kept (every later run: no reference job at all);
- a scratch file with its own `reference` (every run pays its reference's job).
Reported: median wall of the whole run, of the reference's job, and the share of the run it is.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sandbox.backends import checking, create_backend, default_backend_name
from sandbox.backends.execute import execute
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


def one(backend: Timed, job, *, keep: bool) -> tuple[float, float, str]:
    if not keep:
        checking.CACHES.clear()
    backend.walls = {}
    started = time.monotonic()
    finished = execute(backend, job, threading.Event(), lambda kind, data: None)
    return time.monotonic() - started, backend.walls.get("reference", 0.0), finished.result.status.value


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sandbox", default="auto")
    args = parser.parse_args()
    name = default_backend_name() if args.sandbox == "auto" else args.sandbox
    backend = Timed(create_backend(name))
    entry = load_catalog().get("tiled_matmul")
    rows = {
        "catalog, reference not kept": (make_job(entry.solution_source, entry=entry, trace=False), False),
        "catalog, reference kept": (make_job(entry.solution_source, entry=entry, trace=False), True),
        "scratch with its own reference": (make_job(SCRATCH, trace=False), False),
    }
    one(backend, rows["catalog, reference kept"][0], keep=False)  # warm the pool and the kept reference
    samples: dict[str, list[tuple[float, float]]] = {k: [] for k in rows}
    for _ in range(args.repeats):
        for label, (job, keep) in rows.items():
            total, ref, status = one(backend, job, keep=keep)
            assert status == "passed", (label, status)
            samples[label].append((total, ref))
    print(f"backend {name}, {args.repeats} interleaved repeats, medians")
    print(f"{'run':34} {'whole run':>10} {'reference job':>14} {'share':>6}")
    for label, got in samples.items():
        total = statistics.median(t for t, _ in got)
        ref = statistics.median(r for _, r in got)
        print(f"{label:34} {total:9.2f}s {ref:13.2f}s {ref / total:6.0%}")
    backend.inner.close()


if __name__ == "__main__":
    main()
