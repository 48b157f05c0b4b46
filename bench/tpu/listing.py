"""Compile sweep kernels natively with libtpu's dumps on, to read what the chip runs (on a TPU VM).

The time model counts a kernel body's vector work from its jaxpr; where a family is far from the
chip (ragged paged attention +113…+156 %, a softmax at 8-row blocks +33 %), the compiler's own
program says which ops it kept, merged or unrolled. This script only compiles (one call each, no
timing): libtpu writes its dumps where `LIBTPU_INIT_ARGS` says, which must be set before JAX starts,
so the caller sets it (bench/tpu/on-chip.sh listing).

    python bench/tpu/listing.py FILE --size k=v,... --param k=v,... [FILE ...]

Each kernel is jitted under its own name (`listing_<n>`), so its dumps can be told apart; a JSON
line per kernel (name, file, size, params, seconds to compile, error) goes to stdout.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import sys
import time
from pathlib import Path


def _pairs(text: str) -> dict[str, int]:
    return {k: int(v) for k, v in (item.split("=", 1) for item in text.split(",") if item)}


def _module(path: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compile_one(number: int, path: str, size: dict[str, int], params: dict[str, int]) -> dict[str, object]:
    import jax

    module = _module(path)
    inputs = module.make_inputs(0, **size)
    call = functools.partial(module.kernel, **params)

    def named(*args):  # type: ignore[no-untyped-def]
        return call(*args)

    named.__name__ = f"listing_{number}"
    started = time.perf_counter()
    line: dict[str, object] = {"name": named.__name__, "file": path, "size": size, "params": params}
    try:
        jax.jit(named).lower(*inputs).compile()
    except Exception as error:  # one kernel's failure is its line; the next still compiles
        line["error"] = f"{type(error).__name__}: {str(error)[:2000]}"
    line["compile_seconds"] = round(time.perf_counter() - started, 2)
    return line


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "specs", nargs="+", help="FILE@size@params, e.g. bench/tpu/sweeps/softmax.py@m=4096,n=8192@br=8"
    )
    args = parser.parse_args(argv)
    for number, spec in enumerate(args.specs):
        path, size, params = spec.split("@")
        print(json.dumps(compile_one(number, path, _pairs(size), _pairs(params))), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
