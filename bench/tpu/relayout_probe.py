"""On the chip: what XLA's relayout copies around a Pallas kernel cost (`sandbox/harness/model/layouts.py`).

A Pallas kernel doubling a (4, 16, 2048, d) bf16 array, at d = 64 (the TPU keeps such an array with
its 2048 in lanes: XLA copies it to row-major before the kernel and back after it) and at d = 128
(no copies). Prints the program's copies and each function's time: the median over 7 runs of the
wall clock of 50 back-to-back calls, divided by 50 (each call moves tens of MB, so device time
dominates). Run on a TPU VM (`v5e/relayout-probe-2026-12-06.json`):

    python bench/tpu/relayout_probe.py
"""

import json
import statistics
import time

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def copy_kernel(x):
    b, h, s, d = x.shape

    def body(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2

    spec = pl.BlockSpec((1, 1, s, d), lambda i, j: (i, j, 0, 0))
    return pl.pallas_call(
        body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(b, h), in_specs=[spec], out_specs=spec
    )(x)


def main() -> None:
    out: dict[str, object] = {"jax": jax.__version__, "device": jax.devices()[0].device_kind}
    for d in (64, 128):
        x = jax.random.normal(jax.random.key(0), (4, 16, 2048, d), jnp.float32).astype(jnp.bfloat16)
        f = jax.jit(copy_kernel)
        f(x).block_until_ready()
        text = f.lower(x).compile().as_text()
        copies = sum(1 for line in text.splitlines() if " copy(" in line and "bf16[4,16,2048" in line)
        runs = []
        for _ in range(7):
            t0 = time.perf_counter()
            for _ in range(50):
                y = f(x)
            y.block_until_ready()
            runs.append((time.perf_counter() - t0) / 50)
        out[f"d{d}"] = {"seconds": statistics.median(runs), "copies_in_program": copies, "bytes": x.nbytes}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
