"""On a TPU VM: where a class run's rerun spends its time (bench/tpu/v5e/rerun-steps-2026-12-06.txt).

`python3.12 bench/tpu/rerun_steps.py FORGE WALL`: the catalog kernel of tests/tpu/test_web_on_chip.py,
with its FORGED program swap (FORGE: `_own_inputs`, `_xla_only`; `none`: no swap), as a class run
through `sandbox.backends.execute` on the local backend, the rerun's wall limit set to WALL seconds;
every event of each job is printed with its time, the rerun's log lines (its steps) too.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from sandbox.backends import rerun
from sandbox.backends.execute import execute
from sandbox.backends.local import LocalBackend
from sandbox.catalog.entries import load_catalog
from sandbox.jobs.build import make_job
from tests.tpu.conftest import ENTRY, KERNEL
from tests.tpu.test_web_on_chip import FORGED


def main(forge: str, wall: float) -> None:
    backend = LocalBackend()
    run = backend.run

    def timed_run(job, sink, cancel):  # type: ignore[no-untyped-def]
        t0 = time.monotonic()

        def seen(event):  # type: ignore[no-untyped-def]
            text = event.data.get("text", "")[:200] if event.kind == "log" else ""
            print(f"  [{job.role}] +{time.monotonic() - t0:6.2f}s {event.kind} {text}", flush=True)
            sink(event)

        ended = run(job, seen, cancel)
        print(
            f"[{job.role}] ended after {time.monotonic() - t0:.1f}s timed_out={ended.timed_out}", flush=True
        )
        return ended

    backend.run = timed_run  # type: ignore[method-assign]
    made = rerun.rerun_job
    rerun.rerun_job = lambda job, sent, seed: dataclasses.replace(  # type: ignore[assignment]
        made(job, sent, seed), limits=dataclasses.replace(made(job, sent, seed).limits, wall_seconds=wall)
    )
    source = KERNEL.read_text() + (FORGED.replace("FORGE", forge) if forge != "none" else "")
    job = dataclasses.replace(
        make_job(source, entry=load_catalog().get(ENTRY), chip="v5e", mode="tpu"), rerun=True
    )
    result = execute(backend, job, threading.Event(), lambda kind, data: None).result
    host = dataclasses.asdict(result.host_timing) if result.host_timing else None
    print(result.status, json.dumps(host), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]))
