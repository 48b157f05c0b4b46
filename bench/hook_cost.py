"""What the harness's hooks add to a kernel's first call: the interpret fixes, the interpreter monitor
(with its deadlock watchdog and progress threads), the trace recorder installed, and recording.

Usage: .venv/bin/python bench/hook_cost.py [--repeats 5]

Each configuration is a fresh interpreter that sets the hooks up as the harness does, then times the
first call of `tiled_matmul`'s solution (f32 256³, inputs made beforehand): wall seconds and the
process's CPU seconds (all threads). Configurations are interleaved, `--repeats` rounds, and medians
printed with the load; on a shared machine the CPU time moves less than the wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = """
import contextlib, json, sys, time
fixes, monitor, capture, record = (a == "1" for a in sys.argv[1:5])
import jax, jax.numpy as jnp
from jax.experimental.pallas import tpu as pltpu
from sandbox.protocol import InterpretOptions, chip_info
if fixes:
    from sandbox.harness.target import configure
    configure("v5p", "interpret", InterpretOptions())
else:
    pltpu.set_tpu_interpret_mode(pltpu.InterpretParams())
if monitor:
    from sandbox.harness.monitor import hooks
    from sandbox.harness.monitor.progress import Progress
    watched = hooks.install(("kernel.py",), chip_info("v5p"))
    Progress(watched, type("Quiet", (), {"emit": lambda self, *a, **k: None})())
recording = contextlib.nullcontext
if capture:
    from sandbox.harness.trace import capture as trace
    installed = trace.install()
    recording = installed.recording if record else contextlib.nullcontext
ns = {}
exec(compile(open(sys.argv[5]).read(), "kernel.py", "exec"), ns)
x = jax.random.normal(jax.random.key(0), (256, 256), jnp.float32)
y = jax.random.normal(jax.random.key(1), (256, 256), jnp.float32)
dev = jax.sharding.AbstractDevice("TPU v5p", 1, "tpu")
with jax.sharding.use_abstract_mesh(jax.sharding.AbstractMesh((), (), abstract_device=dev)):
    jax.block_until_ready(x + y)
    wall, cpu = time.perf_counter(), time.process_time()
    with recording():
        jax.block_until_ready(ns["matmul"](x, y))
    print(json.dumps([time.perf_counter() - wall, time.process_time() - cpu]))
"""
# The kernel's job as the harness runs it (target, monitor, trace, the code imported, the inputs given
# by the host, the first call, its kernel count and encoded outputs), from the session's start to case
# 1's outputs, in this process: what the job does before the first verdict, besides the fork.
SESSION = """
import json, os, sys, time
from sandbox.jail.pool import preload
preload()
from sandbox.catalog.entries import load_catalog
from sandbox.jobs.build import make_job
from sandbox.protocol import CaseInputs, EventWriter
from sandbox.verdict import arrays
from sandbox.harness import session
entry = load_catalog().get("tiled_matmul")
sys.path.insert(0, os.path.dirname(sys.argv[1]))
import numpy as np
import subprocess
given = json.loads(subprocess.run([sys.executable, "-c", INPUTS], capture_output=True, text=True, check=True).stdout)
job = make_job(entry.solution_source, entry=entry, chip="v5p")
from sandbox.protocol import from_json_dict
job = job.__class__(**{**job.__dict__, "inputs": tuple(from_json_dict(CaseInputs, g) for g in given)})

class Stop(Exception):
    pass

class Events(EventWriter):
    def emit(self, kind, **data):
        if kind == "case_outputs":
            raise Stop

wall, cpu = time.perf_counter(), time.process_time()
try:
    session.Session(job, Events(os.open(os.devnull, os.O_WRONLY))).run()
except Stop:
    pass
print(json.dumps([time.perf_counter() - wall, time.process_time() - cpu]))
"""
# The inputs, made in another process (as the reference's job does), so none of their compiles count.
INPUTS = """
import json
import numpy as np
from sandbox.catalog.entries import load_catalog
from sandbox.harness import usercode
from sandbox.harness.reference import given_inputs
from sandbox.protocol import to_json_dict
entry = load_catalog().get("tiled_matmul")
ref = usercode.load_module("reference", entry.spec().reference_source, usercode.REFERENCE_FILE)
cases = [c for c in entry.spec().cases if not c.tpu_only]
print(json.dumps([{"index": i, "arrays": [to_json_dict(a) for a in given_inputs(tuple(ref.make_inputs(c)))]} for i, c in enumerate(cases)]))
"""
CONFIGS = {
    "plain (a notebook)": "0 0 0 0",
    "+ the harness's interpret fixes": "1 0 0 0",
    "+ the monitor, watchdog and progress threads": "1 1 0 0",
    "+ the trace recorder installed": "1 1 1 0",
    "+ recording the trace (the first call)": "1 1 1 1",
    "the kernel's job: session start → case 1's outputs": "session",
}


def once(flags: str) -> tuple[float, float]:
    kernel = ROOT / "kernels_catalog" / "tiled_matmul" / "kernel.py"
    code = SESSION.replace("INPUTS", repr(INPUTS)) if flags == "session" else SCRIPT
    out = subprocess.run(
        [sys.executable, "-c", code, *flags.split(), str(kernel)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    wall, cpu = json.loads(out.stdout.strip().splitlines()[-1])
    return wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    before = os.getloadavg()[0]
    seen: dict[str, list[tuple[float, float]]] = {name: [] for name in CONFIGS}
    for _ in range(args.repeats):
        for name, flags in CONFIGS.items():
            seen[name].append(once(flags))
    print(f"tiled_matmul f32 256³ first call, median of {args.repeats} interleaved rounds")
    print(f"{'configuration':46} {'wall s':>8} {'CPU s':>8} {'CPU vs plain':>13}")
    plain_cpu = statistics.median(c for _, c in seen["plain (a notebook)"])
    for name, values in seen.items():
        wall = statistics.median(w for w, _ in values)
        cpu = statistics.median(c for _, c in values)
        print(f"{name:46} {wall:8.3f} {cpu:8.3f} {cpu / plain_cpu:12.2f}x")
    print(f"load average (1 min): {before:.2f} before, {os.getloadavg()[0]:.2f} after (2 cores, shared)")


if __name__ == "__main__":
    main()
