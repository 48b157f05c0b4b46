"""What the hardened sandbox costs, in one run (root, after scripts/install-job-runtime).

Usage: .venv/bin/python bench/sandbox_overhead.py [--trials 15] [--runs 5]

(a) Sandbox overhead per job: inside the real pool environment (`sandbox.jail.poolbench`), a trivial job
    through the harness, from set-up to nothing-left, with every layer (job cgroups, scratch tmpfs,
    namespaces, rlimits, Landlock, uid drop, seccomp, teardown) against a bare fork from the same
    warm process. Target: all layers add at most 50 ms.
(b) End-to-end latency of a small Pallas kernel (an 8x128 `pallas_call` add, TPU interpret mode) as
    a caller of `Backend.run` sees it: the hardened backend's warm pool against the local backend's
    fresh `python -m sandbox.harness` process. Target: warm <= 0.5 x fresh.
Medians of interleaved trials; prints one table and the ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import sandbox
from sandbox.backends.hardened import UID_BASE, HardenedBackend
from sandbox.backends.local import LocalBackend
from sandbox.host.jobenv import base_environment
from sandbox.jail import outer
from sandbox.jail.runtime import Runtime
from sandbox.jobs.build import make_job
from sandbox.protocol import RunStatus
from sandbox.results.classify import classify

ADD_KERNEL = """
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl

def add_kernel(x_ref, y_ref, o_ref):
    o_ref[...] = x_ref[...] + y_ref[...]

def make_inputs(seed):
    kx, ky = jax.random.split(jax.random.key(seed))
    return jax.random.normal(kx, (8, 128)), jax.random.normal(ky, (8, 128))

def reference(x, y):
    return x + y

def kernel(x, y):
    return pl.pallas_call(add_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x, y)
"""


def overhead(trials: int) -> dict[str, list[float]]:
    runtime = Runtime()
    config = {
        "trials": trials,
        "token": "bench" + uuid.uuid4().hex[:8],
        "uid_base": UID_BASE + 90,
        "runtime_prefix": str(runtime.prefix),
        "env": base_environment(os.environ, home="/tmp"),
    }
    info_r, info_w = os.pipe()
    argv = outer.command(runtime, Path(sandbox.__file__).parent, info_w, "sandbox.jail.poolbench", config)
    done = subprocess.run(argv, pass_fds=(info_w,), capture_output=True, env={}, timeout=600, check=False)
    os.close(info_w)
    os.close(info_r)
    if done.returncode != 0:
        sys.exit(f"poolbench failed:\n{done.stderr.decode()[-3000:]}")
    return json.loads(done.stdout.decode().strip().splitlines()[-1])


def latency(runs: int) -> dict[str, list[float]]:
    job = make_job(ADD_KERNEL, timing_budget_seconds=0.05)
    warm, fresh = HardenedBackend(slots=1, uid_base=UID_BASE + 95), LocalBackend()
    seconds: dict[str, list[float]] = {"warm pool (hardened)": [], "fresh process (local)": []}
    try:
        if warm.wait_ready(120) is None:
            sys.exit("the hardened backend's pool did not start")
        for trial in range(runs + 1):  # the first round warms caches and is not counted
            for name, backend in (("warm pool (hardened)", warm), ("fresh process (local)", fresh)):
                t0 = time.perf_counter()
                result = classify(job, backend.run(job, lambda event: None, threading.Event()))
                elapsed = time.perf_counter() - t0
                if result.status != RunStatus.PASSED:
                    sys.exit(f"{name}: {result.summary}")
                if trial:
                    seconds[name].append(elapsed)
    finally:
        warm.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=15, help="trivial jobs per mode for (a)")
    parser.add_argument("--runs", type=int, default=5, help="Pallas runs per backend for (b)")
    args = parser.parse_args()
    if os.geteuid() != 0 or Runtime().problem():
        sys.exit("needs root and the job runtime (scripts/install-job-runtime)")
    a = overhead(args.trials)
    b = latency(args.runs)
    med = {k: statistics.median(v) for k, v in {**a, **b}.items()}
    print(f"{'measure':46} {'median':>10} {'min':>10} {'max':>10} {'n':>4}")
    for name, values in {
        "(a) trivial job, bare fork from the pool": a["bare"],
        "(a) trivial job, all layers": a["jailed"],
        "(b) Pallas add, warm pool (hardened)": b["warm pool (hardened)"],
        "(b) Pallas add, fresh process (local)": b["fresh process (local)"],
    }.items():
        print(
            f"{name:46} {_ms(statistics.median(values))} {_ms(min(values))} {_ms(max(values))} {len(values):4}"
        )
    layers = med["jailed"] - med["bare"]
    ratio = med["warm pool (hardened)"] / med["fresh process (local)"]
    print(
        f"\nall layers add {layers * 1000:.1f} ms per job (target <= 50 ms: {'met' if layers <= 0.05 else 'MISSED'})"
    )
    print(f"warm pool / fresh process = {ratio:.2f} (target <= 0.50: {'met' if ratio <= 0.5 else 'MISSED'})")
    print(f"load average during the run: {os.getloadavg()[0]:.2f} (2 cores, shared)")


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:8.1f}ms"


if __name__ == "__main__":
    main()
