"""Where XLA's own attention spends its time on a TPU: `jax.nn.dot_product_attention` at a few shapes,
its device time per call and its eight longest XLA ops from a profiler trace, and the compiled HLO.

Written for one question (2026-12-07): why the op took ~112 ms at (1, 8192, 4, 128) on the v5e where it
took ~4 ms at (1, 4096, 8, 128). Its record: `v5e/xla-attention-2026-12-07.json`.

    python3.12 bench/tpu/xla_attention_profile.py OUT      (on a TPU host; writes OUT/xla-attention.json)
"""

from __future__ import annotations

import glob
import json
import sys
import time
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp

SHAPES = (((1, 8192, 4, 128), False), ((1, 8192, 8, 128), False), ((1, 4096, 8, 128), False),
          ((1, 8192, 2, 128), False), ((1, 16384, 2, 128), True))  # fmt: skip


def profile(shape: tuple[int, int, int, int], causal: bool, out: Path) -> dict[str, Any]:
    keys = jax.random.split(jax.random.key(0), 3)
    q, k, v = (jax.random.normal(key, shape, jnp.float32).astype(jnp.bfloat16) for key in keys)
    attend = jax.jit(lambda q, k, v: jax.nn.dot_product_attention(q, k, v, is_causal=causal))
    attend(q, k, v).block_until_ready()
    started = time.perf_counter()
    attend(q, k, v).block_until_ready()
    wall = time.perf_counter() - started
    name = "-".join(map(str, shape)) + ("-causal" if causal else "")
    with jax.profiler.trace(str(out / f"trace-{name}")):
        attend(q, k, v).block_until_ready()
    (found,) = glob.glob(str(out / f"trace-{name}" / "**" / "*.xplane.pb"), recursive=True)
    ops: dict[str, int] = {}
    module = 0
    for plane in jax.profiler.ProfileData.from_file(found).planes:
        if plane.name != "/device:TPU:0":
            continue
        for line in plane.lines:
            for event in line.events:
                if line.name == "XLA Ops":
                    ops[event.name] = ops.get(event.name, 0) + event.duration_ns
                elif line.name == "XLA Modules":
                    module += event.duration_ns
    hlo = attend.lower(q, k, v).compile().as_text()
    (out / f"hlo-{name}.txt").write_text(hlo)
    longest = sorted(ops.items(), key=lambda item: -item[1])[:8]
    return {
        "shape": list(shape),
        "causal": causal,
        "wall_ms": wall * 1e3,
        "module_ms": module / 1e6,
        "top_ops_ms": [[op, ns / 1e6] for op, ns in longest],
        "hlo_chars": len(hlo),
    }


def main(out: Path) -> None:
    records = []
    for shape, causal in SHAPES:
        records.append(profile(shape, causal, out))
        print(json.dumps(records[-1])[:400], flush=True)
    (out / "xla-attention.json").write_text(json.dumps(records, indent=1))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
