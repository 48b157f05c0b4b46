"""Estimate the catalog's multi-device kernels (ring all-gather, the SparseCore all-gather beside a
TensorCore matmul) in a process with 4 CPU devices, as the harness does; print one JSON line each.

Run by tests/model/test_collectives.py in a child process (JAX fixes its device count at import):
`XLA_FLAGS=--xla_force_host_platform_device_count=4 python -m tests.model.collective_probe [CHIP ...]`.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from pathlib import Path

import jax
import jax.numpy as jnp

from sandbox.harness.model.estimate import estimate_jaxpr, trace
from sandbox.harness.target import Target
from sandbox.protocol import InterpretOptions, chip_info

CATALOG = Path(__file__).resolve().parents[2] / "kernels_catalog"


def _entry(slug: str):
    spec = importlib.util.spec_from_file_location(f"probe_{slug}", CATALOG / slug / "kernel.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _shapes(*shapes: tuple[int, ...], dtype=jnp.bfloat16) -> tuple[jax.ShapeDtypeStruct, ...]:
    return tuple(jax.ShapeDtypeStruct(s, dtype) for s in shapes)


def main(chips: list[str]) -> None:
    ring, overlap = _entry("ring_all_gather"), _entry("sc_all_gather_overlap")
    cases = [
        ("ring_all_gather", ring.all_gather, _shapes((4, 4096, 4096))),
        (
            "sc_all_gather_overlap",
            overlap.layer_step,
            _shapes((4, 2048, 4096), (4096, 4096), (4, 1024, 4096)),
        ),
    ]
    for chip in chips:
        target = Target(chip=chip, interpret=True, options=InterpretOptions(), devices=4)
        for name, fn, args in cases:
            e = estimate_jaxpr(trace(fn, args, target.chip_context()), [None] * len(args), chip_info(chip))
            record = {
                "entry": name,
                "chip": chip,
                **{k: getattr(e, k) for k in ("seconds", "bound", "family")},
            }
            record["validation"], record["notes"] = e.validation, list(e.notes)
            record["kernels"] = [dataclasses.asdict(k) for k in e.kernels]
            print(json.dumps(record), flush=True)


if __name__ == "__main__":
    import sys

    main(sys.argv[1:] or ["v5p", "v6e", "tpu7x"])
