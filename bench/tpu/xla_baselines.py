"""XLA's own op at every timed sweep's size, on the chip: what a user would run instead of the kernel.

For each sweep in the Tune records (its file and target size), the baseline the sweep's job shows
(a catalog entry's plain-jnp reference, or a scratch file's `xla_baseline`, else its reference) is
jitted, run on inputs made as the sweep makes them, and timed from profiler traces like a config
(`sandbox.harness.devicetime`, 10 traced calls after 2 warm-up ones), in one process: one line per
sweep to OUT. `tpu_records.py` reads them back beside the model's estimate of the same op and the
sweep's best config ("the best config 0.98x XLA's op").

    python3.12 bench/tpu/xla_baselines.py --records bench/tpu/v5e/tune.jsonl OUT/tune.jsonl --out OUT/xla.jsonl
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path
from typing import Any

import jax
import reestimate

from sandbox.harness import devicetime
from sandbox.harness.given import made_inputs
from sandbox.results.measured import playground_commit

REPEATS, WARMUP = 10, 2


def sweeps(paths: list[Path]) -> list[dict[str, Any]]:
    """One record per timed sweep (file and size), in the order first seen."""
    found: dict[str, dict[str, Any]] = {}
    for path in paths:
        if not path.exists():
            continue
        for line in path.read_text().splitlines():
            row = json.loads(line) if line.strip() else None
            if row and row.get("measured_device_seconds"):
                found.setdefault(json.dumps([row["file"], row["size"]], sort_keys=True), row)
    return list(found.values())


def time_baseline(estimator: reestimate.Estimator, row: dict[str, Any]) -> dict[str, Any]:
    timed = estimator.plan(row)
    out: dict[str, Any] = {"file": row["file"], "entry": row.get("entry"), "size": row["size"]}
    if timed.baseline is None:
        return {**out, "error": "no reference or xla_baseline"}
    t0 = time.perf_counter()
    try:
        inputs = made_inputs(lambda: timed.make_inputs(timed.spec.size), native=True)
        jitted = jax.jit(timed.baseline)
        jax.block_until_ready(jitted(*inputs))
        device, host = devicetime.device_or_wall(
            lambda: jax.block_until_ready(jitted(*inputs)), REPEATS, WARMUP
        )
    except Exception as exc:  # one sweep's baseline failing must not stop the others
        return {**out, "error": f"{type(exc).__name__}: {str(exc).splitlines()[0][:300] if str(exc) else ''}"}
    return {
        **out,
        "baseline": getattr(timed.baseline, "__name__", "reference"),
        "measured_device_seconds": device,
        "measured_host_seconds": host,
        "wall_seconds": round(time.perf_counter() - t0, 2),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--records", type=Path, nargs="+", required=True)
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    device = jax.devices()[0]
    stamp = {
        "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "device": device.device_kind,
        "jax": jax.__version__,
        "commit": playground_commit(),
    }
    estimator = reestimate.Estimator()
    with args.out.open("a") as out:
        for row in sweeps(args.records):
            found = {**stamp, **time_baseline(estimator, row)}
            print(json.dumps(found), flush=True)
            out.write(json.dumps(found, sort_keys=True) + "\n")
            out.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
