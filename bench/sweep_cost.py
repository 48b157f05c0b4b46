"""What a sweep ("Tune") costs per config on this machine, and what the TPU time model alone costs.

Usage: .venv/bin/python bench/sweep_cost.py [--repeats 5] [--no-sweep]

1. The model alone, in this process (no child): for each of the 27 configs of a 3x3x3 block-size
   sweep of `tiled_matmul_pallas_call` at 4096^3 and at 8192^3 on a v5e, the time to trace the
   kernel abstractly and the time of the model's arithmetic (best of `--repeats`); and the same for
   the `pl.kernel` entries at their TPU-sized cases, which the model simulates step by step.
2. The whole sweep at 4096^3 as one sandbox job through the local backend (a fresh child): its
   wall time, and per config the median of each phase the child reports (trace at the target
   size, model, lowering for the chip, correctness check at the small size in the simulator).
Host times on a shared machine: the load average is printed with them.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import os
import statistics
import threading
import time
from typing import Any

import jax
import jax.numpy as jnp

from sandbox.backends import create_backend
from sandbox.backends.execute import execute
from sandbox.catalog.entries import load_catalog
from sandbox.harness import usercode
from sandbox.harness.model.estimate import chip_context, estimate_jaxpr, known_values, trace
from sandbox.jobs import sweeps
from sandbox.jobs.build import make_sweep_job
from sandbox.protocol import chip_info

BLOCKS = {"bm": [128, 512, 4096], "bk": [64, 256, 1024], "bn": [128, 512, 4096]}
CHIP = chip_info("v5e")


def best_of(repeats: int, fn: Any) -> tuple[float, Any]:
    times, value = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - t0)
    return min(times), value


def model_alone(source: str, entry_point: str, size: int, repeats: int) -> None:
    kernel = getattr(usercode.load_module("bench_kernel", source, usercode.USER_FILE), entry_point)
    args = (jax.ShapeDtypeStruct((size, size), jnp.bfloat16),) * 2
    traced, modelled, steps = [], [], []
    for bm, bk, bn in itertools.product(*BLOCKS.values()):
        fn = functools.partial(kernel, bm=bm, bk=bk, bn=bn)
        t_trace, closed = best_of(repeats, lambda fn=fn: trace(fn, args, chip_context(CHIP)))
        t_model, estimate = best_of(
            repeats, lambda c=closed: estimate_jaxpr(c, known_values(args), CHIP, timeline=False)
        )
        traced.append(t_trace)
        modelled.append(t_model)
        steps.append(sum(k.steps for k in estimate.kernels))
    print(
        f"  {size}^3, 27 configs ({min(steps):,}..{max(steps):,} grid steps): trace median {statistics.median(traced) * 1e3:.1f} ms "
        f"(max {max(traced) * 1e3:.1f}), model median {statistics.median(modelled) * 1e3:.1f} ms (max {max(modelled) * 1e3:.1f}; "
        f"{max(modelled) * 1e3:.1f} ms at {steps[modelled.index(max(modelled))]:,} steps)"
    )


def programs(repeats: int) -> None:
    catalog = load_catalog()
    for slug in ("inplace_chunked_matmul", "megacore_matmul"):
        entry = catalog.get(slug)
        assert entry is not None
        case = next(c for c in entry.cases if c.tpu_only)
        reference = usercode.load_module(f"ref_{slug}", entry.reference_source, usercode.REFERENCE_FILE)
        module = usercode.load_module(f"k_{slug}", entry.solution_source, usercode.USER_FILE)
        args = jax.eval_shape(functools.partial(_inputs, reference, case))
        fn = getattr(module, entry.entry_point)
        if entry.mutable_inputs:
            fn = functools.partial(_with_ref, fn)
        chip = chip_info(entry.chips[0] if "v5p" not in entry.chips else "v5p")
        t_trace, closed = best_of(1, lambda fn=fn, args=args, chip=chip: trace(fn, args, chip_context(chip)))
        t_model, estimate = best_of(
            repeats,
            lambda c=closed, a=args, chip=chip: estimate_jaxpr(c, known_values(a), chip, timeline=False),
        )
        steps = sum(k.steps for k in estimate.kernels)
        print(
            f"  {slug} ({case.name}, {chip.name}): {steps:,} steps; trace {t_trace * 1e3:.0f} ms, model {t_model * 1e3:.0f} ms ({t_model / steps * 1e6:.0f} us per step)"
        )


def _inputs(reference: Any, case: Any) -> tuple[Any, ...]:
    return tuple(reference.make_inputs(case))


def _with_ref(fn: Any, x: Any, w: Any) -> Any:
    ref = jax.new_ref(x)
    fn(ref, w)
    return ref[...]


def whole_sweep() -> None:
    entry = load_catalog().get("tiled_matmul_pallas_call")
    assert entry is not None
    spec = sweeps.make_spec(entry, params=BLOCKS)
    job = make_sweep_job(entry.solution_source, spec, entry=entry, chip="v5e")
    backend = create_backend("local")
    t0 = time.perf_counter()
    try:
        # Through `execute`, as the server runs it: the reference's job, then the checker makes each
        # config's row (a sweep's own process sends outputs only, since the checker moved out of it).
        result = execute(backend, job, threading.Event(), lambda kind, data: None).result
    finally:
        backend.close()
    wall = time.perf_counter() - t0
    assert result.sweep is not None, result.summary
    configs = result.sweep.configs
    print(f"  {result.summary}")
    print(f"  one job, {len(configs)} configs: {wall:.1f} s wall, {wall / len(configs):.2f} s per config")
    for phase in ("trace", "model", "lower", "check"):
        spent = [c.host_seconds[phase] for c in configs if phase in c.host_seconds]
        print(
            f"    {phase:6}: {len(spent):2} configs, median {statistics.median(spent) * 1e3:7.1f} ms, max {max(spent) * 1e3:7.1f} ms, total {sum(spent):6.1f} s"
        )
    judged = sum(sum(c.host_seconds.values()) for c in configs)
    print(f"    outside the configs (child start, JAX import, inputs): {wall - judged:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--no-sweep", action="store_true", help="only the model, in this process")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    entry = load_catalog().get("tiled_matmul_pallas_call")
    assert entry is not None
    print("The model alone (pallas_call, closed form over the grid):")
    for size in (4096, 8192):
        model_alone(entry.solution_source, entry.entry_point, size, args.repeats)
    print("The model alone (pl.kernel + emit_pipeline, simulated step by step):")
    programs(max(1, args.repeats // 2))
    if not args.no_sweep:
        print("A whole sweep in one sandbox job (tiled_matmul_pallas_call, 4096^3, v5e):")
        whole_sweep()
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
