"""Run the differential corpus in one process, natively on a TPU or in Pallas TPU interpret mode.

Usage (from the repository root):
    python3.12 bench/tpu/corpus/run.py --mode tpu --out DIR
    python3.12 bench/tpu/corpus/run.py --mode interpret --out DIR [--only NAME ...]

Writes DIR/outputs.npz (key `<kernel>/<output index>`; bf16 outputs stored as float32, which is exact)
and DIR/verdicts.jsonl (one line per kernel: name, status passed|mismatch|error, the largest absolute
and relative error against the float64 reference, the error text, seconds, JAX version, device kind).
Each kernel runs in its own try/except; after `--budget` seconds the rest are recorded as errors
("skipped: time budget") so the run always ends and always writes both files.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np


def all_cases():
    """Every case, the DMA ones last (a halted core would fail everything after it)."""
    import corpus_dots as dots
    import corpus_memory as memory
    import corpus_vector as vector

    cases = [*dots.CASES, *vector.CASES, *memory.CASES]
    names = [c.name for c in cases]
    if len(set(names)) != len(names):
        raise ValueError(f"duplicate case names: {sorted(n for n in names if names.count(n) > 1)}")
    return sorted(cases, key=lambda c: c.name.startswith(("dma_", "catalog_hbm")))


def setup(mode: str) -> str:
    """Select the mode before any kernel is built; return the device kind recorded in the verdicts."""
    import jax
    from jax.experimental.pallas import tpu as pltpu

    if mode in ("interpret", "simulator"):
        jax.config.update("jax_platforms", "cpu")
        pltpu.set_tpu_interpret_mode(pltpu.InterpretParams())
        if mode == "interpret":
            return "cpu (Pallas TPU interpret mode)"
        # The playground's simulator: interpret mode with the harness's fixes, the MXU's bf16 pass among them.
        sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
        from sandbox.harness.jaxapi import interpret_fixes

        fixes = interpret_fixes.install(device_kind="TPU v5 lite")
        return f"cpu (the playground's simulator: {len(fixes)} fixes)"
    device = jax.devices()[0]
    if device.platform != "tpu":
        raise SystemExit(f"--mode tpu needs a TPU, found {device.platform}: {device.device_kind}")
    jax.block_until_ready(jax.numpy.ones(8) + 1)  # open the chip (~13 s) before the first kernel's clock
    return device.device_kind


def run_case(case) -> tuple[dict, tuple[np.ndarray, ...]]:
    import jax
    from corpus_case import as_tuple, judge, storable

    inputs = case.make_inputs()
    expected = case.expected(inputs)
    outputs = as_tuple(jax.block_until_ready(case.run(*inputs)))
    host = tuple(np.asarray(o) for o in outputs)
    return judge(case, host, expected), tuple(storable(o) for o in host)


def verdict_of(case, jax_version: str, kind: str, mode: str, skip: str | None, arrays: dict) -> dict:
    """Run one case (unless `skip` says why not) and return its verdict line; its outputs go to `arrays`."""
    t0 = time.perf_counter()
    record = {"name": case.name, "seed": case.seed, "rtol": case.rtol, "atol": case.atol}
    empty = {"status": "error", "max_abs_err": None, "max_rel_err": None}
    if skip:
        record |= empty | {"error": skip}
    else:
        try:
            verdict, outputs = run_case(case)
            record |= verdict | {"error": None}
            arrays |= {f"{case.name}/{i}": o for i, o in enumerate(outputs)}
        except Exception as exc:  # one kernel's failure never stops the rest
            record |= empty | {"error": "".join(traceback.format_exception_only(exc)).strip()[:2000]}
    seconds = round(time.perf_counter() - t0, 3)
    return record | {"seconds": seconds, "jax": jax_version, "device_kind": kind, "mode": mode}


def stop_on_sigterm(signum, frame):
    raise SystemExit(f"stopped by signal {signum}")  # `timeout` lands here: outputs.npz is still written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mode", choices=["tpu", "interpret", "simulator"], required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--only", nargs="*", help="run only these kernels")
    parser.add_argument("--budget", type=float, default=50.0, help="seconds; later kernels are skipped")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    start = time.perf_counter()
    import jax

    kind = setup(args.mode)
    cases = [c for c in all_cases() if not args.only or c.name in args.only]
    print(f"{len(cases)} kernels, mode {args.mode}, JAX {jax.__version__}, {kind}", flush=True)
    arrays: dict[str, np.ndarray] = {}
    try:
        with open(args.out / "verdicts.jsonl", "w") as verdicts:
            for n, case in enumerate(cases, 1):
                over = time.perf_counter() - start > args.budget
                skip = f"skipped: time budget of {args.budget} s spent" if over else None
                record = verdict_of(case, jax.__version__, kind, args.mode, skip, arrays)
                verdicts.write(json.dumps(record) + "\n")
                verdicts.flush()
                print(
                    f"[{n}/{len(cases)}] {case.name}: {record['status']} abs={record['max_abs_err']} "
                    f"{record['seconds']} s {(record['error'] or '')[:200]}",
                    flush=True,
                )
    finally:
        np.savez_compressed(args.out / "outputs.npz", **arrays)
        print(f"done in {time.perf_counter() - start:.1f} s -> {args.out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
