"""Which layout libtpu gives a function's input array, against `sandbox.harness.model.layouts`'s rule.

For random shapes (rank 2-4) and dtypes (bf16, f32, int8, int32), compiles `x + 1` for a chip with
libtpu's compile-only client (no TPU needed) and reads the entry parameter's layout from the compiled
program: its minor dimension is the one the TPU keeps the array in lanes. One JSON line per shape to
`v5e/layouts.jsonl` (or `--out`): chip, shape, dtype, XLA's minor-to-major order, the rule's minor.

    JAX_PLATFORMS=cpu python bench/tpu/layouts.py [--chips v5e,v6e,tpu7x] [--count 120] [--seed 11]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import sys
from pathlib import Path

os.environ.setdefault("JAX_PLATFORMS", "cpu")
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

from sandbox.harness.jaxapi import offline  # noqa: E402
from sandbox.harness.model.estimate import chip_context  # noqa: E402
from sandbox.harness.model.layouts import default_minor  # noqa: E402
from sandbox.protocol.chips import chip_info  # noqa: E402

SIZES = (1, 2, 3, 7, 8, 15, 16, 24, 32, 48, 64, 96, 100, 128, 130, 192, 200, 256, 384, 500, 512, 1000, 1024, 2048, 2880)  # fmt: skip
DTYPES = (jnp.bfloat16, jnp.float32, jnp.int8, jnp.int32)
_PARAM = re.compile(r"\{([0-9,]+)(:|\})")


def entry_order(chip: str, shape: tuple[int, ...], dtype: object) -> tuple[int, ...]:
    """The minor-to-major order libtpu lays a function's input of `shape` out in, for `chip`."""
    arg = jax.ShapeDtypeStruct(shape, dtype)
    with chip_context(chip_info(chip)):  # type: ignore[arg-type]
        text = jax.jit(lambda x: x + 1).trace(*offline.placed(chip, [arg])).lower().compile().as_text()
    line = next(t for t in text.splitlines() if "parameter(0)" in t and "ENTRY" not in t)
    found = _PARAM.search(line.split("=", 1)[1])
    assert found is not None, line
    return tuple(int(d) for d in found.group(1).split(","))


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--chips", default="v5e,v6e,tpu7x")
    p.add_argument("--count", type=int, default=120, help="shapes per chip")
    p.add_argument("--seed", type=int, default=11)
    p.add_argument("--out", type=Path, default=HERE / "v5e" / "layouts.jsonl")
    args = p.parse_args(argv)
    lines = []
    for chip in args.chips.split(","):
        rng = random.Random(f"{args.seed}-{chip}")
        for _ in range(args.count):
            shape = tuple(rng.choice(SIZES) for _ in range(rng.choice((2, 2, 3, 3, 4))))
            dtype = rng.choice(DTYPES)
            if int(np.prod(shape)) > 2**28:
                continue
            order = entry_order(chip, shape, dtype)
            itemsize = jnp.dtype(dtype).itemsize
            lines.append(
                {
                    "chip": chip,
                    "shape": list(shape),
                    "dtype": jnp.dtype(dtype).name,
                    "xla_minor_to_major": list(order),
                    "rule_minor": default_minor(shape, itemsize),
                    "libtpu": offline.libtpu_version(),
                    "jax": jax.__version__,
                }
            )
    args.out.write_text("".join(json.dumps(line, sort_keys=True) + "\n" for line in lines))
    agree = sum(line["xla_minor_to_major"][0] == line["rule_minor"] for line in lines)
    print(f"{agree} of {len(lines)} minor dimensions as the rule says -> {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
