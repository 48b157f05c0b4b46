"""Compile (lower + compile, never run) a grid of kernel configs on a TPU around the scoped VMEM limit.

Usage (from the repository root, on a TPU host):
    python3.12 bench/tpu/vmem_grid.py --out FILE [--budget 50] [--set grid|followup]

For each config one JSON line: kernel, shape, dtype, params, `counted_mib` (the blocks and scratch the
way the playground counts them: every pipelined block twice, scratch once), compiled true/false and,
on failure, the compiler's E1001 numbers (`size_m`, `limit_m`, `over_m`, in the compiler's M units)
and the first 300 characters of the error. The kernels: the catalog's tiled_matmul_pallas_call and
hbm_manual_dma, and a plain elementwise add and row sum with large blocks, at sizes where the counted
bytes sit around v5e's 16 MiB default scoped limit. Each config is in its own try/except; after
`--budget` seconds the rest are written as skipped.
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import itertools
import json
import re
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import vmem_kernels

ROOT = Path(__file__).resolve().parents[2]
MIB = 2**20
UNITS = {"K": 1 / 1024, "M": 1.0, "G": 1024.0}
E1001 = re.compile(
    r"Scoped allocation with size ([\d.]+)([KMG]) and limit ([\d.]+)([KMG]) "
    r"exceeded scoped vmem limit by ([\d.]+)([KMG])"
)
ITEMSIZE = {"bfloat16": 2, "float32": 4, "int8": 1}
CATALOG = {"tiled_matmul_pallas_call": "matmul", "hbm_manual_dma": "streamed_matmul"}  # slug -> entry point


@dataclass(frozen=True)
class Config:
    kernel: str
    shape: tuple[int, ...]
    dtype: str
    params: dict
    counted_mib: float


def parse_e1001(text: str) -> dict | None:
    """The sizes of a CompileTimeScopedVmemOom message in the compiler's M units, or None."""
    match = E1001.search(text)
    if not match:
        return None
    size, limit, over = (float(match[i]) * UNITS[match[i + 1]] for i in (1, 3, 5))
    return {"size_m": size, "limit_m": limit, "over_m": over}


def matmul_mib(m, k, n, dtype, bm, bk, bn) -> float:
    bm, bk, bn = min(bm, m), min(bk, k), min(bn, n)
    item = ITEMSIZE[dtype]
    return (2 * (bm * bk + bk * bn + bm * bn) * item + bm * bn * 4) / MIB


def rmsnorm_mib(rows: int, width: int) -> float:
    """A bf16 RMS norm's blocks: (rows, width) in and out, twice each, and the (1, width) weight
    unpadded (as E1001 counts it)."""
    return (4 * rows * width * 2 + 2 * width * 2) / MIB


def int8_matmul_mib(bm: int, bk: int, bn: int) -> float:
    """An int8 matmul's blocks: both operands and the int32 output block, twice each."""
    return (2 * (bm * bk + bk * bn) + 2 * bm * bn * 4) / MIB


def tiled_configs() -> list[Config]:
    """Blocks 256..2048 at two shapes and two dtypes: those counted between 10 and 26 MiB, 6 per group."""
    configs = []
    for (m, k, n), dtype in itertools.product(
        [(8192, 8192, 8192), (16384, 1024, 4096)], ("bfloat16", "float32")
    ):
        seen, group = set(), []
        for bm, bk, bn in itertools.product([256, 512, 1024, 2048], repeat=3):
            key = (min(bm, m), min(bk, k), min(bn, n))
            mib = matmul_mib(m, k, n, dtype, bm, bk, bn)
            if key in seen or not 10 <= mib <= 26:
                continue
            seen.add(key)
            group.append(
                Config(
                    "tiled_matmul_pallas_call",
                    (m, k, n),
                    dtype,
                    {"bm": key[0], "bk": key[1], "bn": key[2]},
                    mib,
                )
            )
        group.sort(key=lambda c: abs(c.counted_mib - 16))
        configs += sorted(group[:6], key=lambda c: c.counted_mib)
    return configs


def dma_configs() -> list[Config]:
    configs = []
    for (m, k, n), dtype, chunks in [
        ((8192, 2048, 2048), "bfloat16", [128, 256, 512, 1024]),
        ((8192, 1024, 1024), "float32", [256, 512, 1024]),
        ((16384, 1024, 4096), "bfloat16", [256, 512]),
    ]:
        for chunk in chunks:
            mib = (2 * chunk * k + k * n + 2 * chunk * n) * ITEMSIZE[dtype] / MIB
            configs.append(Config("hbm_manual_dma", (m, k, n), dtype, {"chunk": chunk}, mib))
    return configs


def vector_configs() -> list[Config]:
    add = [
        Config("add_blocks", (8192, 2048), "float32", {"rows": r}, 6 * r * 2048 * 4 / MIB)
        for r in (256, 512, 1024)
    ]
    row_sum = [
        Config("row_sum_blocks", (8192, 4096), "float32", {"rows": r}, 2 * r * (4096 + 128) * 4 / MIB)
        for r in (128, 256, 512, 1024)
    ]
    return add + row_sum


def all_configs() -> list[Config]:
    return tiled_configs() + dma_configs() + vector_configs()


def followup_configs() -> list[Config]:
    """The grid's three unexplained compiles (2026-12-05), each beside its neighbours:
    - one K step: 1024³ (bf16) and 512×256×2048 (f32) blocks compiled where K = bk, and were refused
      at 8192³. The same blocks at K = bk, 2 bk and 4 bk tell whether it is the K loop's length;
    - the row sum with (rows, 1) output blocks compiled at a count of 16.5 MiB: wider rows and more of
      them find where the compiler's own count crosses 16 MiB (its E1001 gives the count when it does).
    """
    configs = []
    for dtype, (bm, bk, bn) in [("bfloat16", (1024, 1024, 1024)), ("float32", (512, 256, 2048))]:
        for m, k, n in [(8192, bk, 8192), (8192, 2 * bk, 8192), (8192, 4 * bk, 8192), (16384, 2 * bk, 4096)]:
            mib = matmul_mib(m, k, n, dtype, bm, bk, bn)
            configs.append(
                Config("tiled_matmul_pallas_call", (m, k, n), dtype, {"bm": bm, "bk": bk, "bn": bn}, mib)
            )
    for rows, width in [(512, 4352), (512, 4608), (512, 5120), (1024, 2048), (1024, 2304), (256, 8192)]:
        mib = 2 * rows * (width + 128) * 4 / MIB
        configs.append(Config("row_sum_blocks", (8192, width), "float32", {"rows": rows}, mib))
    return configs


# Sweep files' kernels (bench/tpu/sweeps/NAME.py) the dtype set compiles: their size names (the order
# of a config's shape) and each input's shape at that size.
SWEEPS = {
    "matmul_int8": (("m", "k", "n"), lambda m, k, n: [(m, k), (k, n)]),
    "rmsnorm": (("m", "n"), lambda m, n: [(m, n), (1, n)]),
}


def dtype_configs() -> list[Config]:
    """Dot operand kinds and packed dtypes the grid never compiled (2026-12-06, after Tune on the chip
    refused an f32 HIGHEST matmul the playground passed: 512x512x1024 blocks, 12 MiB counted):
    - f32 at HIGHEST (the catalog's matmul takes f32 operands at HIGHEST): left operands of 0.25 to
      2 MiB, counted 8 to 16 MiB, so a refusal's E1001 size gives the compiler's own copies;
    - int8 operands into int32 (bench/tpu/sweeps/matmul_int8.py): counted 10 to 19 MiB;
    - a bf16 RMS norm (bench/tpu/sweeps/rmsnorm.py) whose blocks count exactly 16 MiB, and its neighbours.
    """
    configs = []
    for bm, bk, bn in [
        (512, 512, 1024),
        (512, 512, 768),
        (256, 1024, 1024),
        (1024, 256, 1024),
        (1024, 512, 512),
        (512, 1024, 512),
        (256, 256, 2048),
        (1024, 512, 256),
        (512, 256, 1536),
        (2048, 256, 256),
    ]:
        m, k, n = 4096, 4096, 6144 if bn in (768, 1536) else 4096
        mib = matmul_mib(m, k, n, "float32", bm, bk, bn)
        configs.append(
            Config("tiled_matmul_pallas_call", (m, k, n), "float32", {"bm": bm, "bk": bk, "bn": bn}, mib)
        )
    for bm, bk, bn in [
        (1024, 1024, 1024),
        (1024, 2048, 1024),
        (512, 4096, 1024),
        (2048, 1024, 512),
        (2048, 512, 1024),
        (1024, 1024, 1536),
    ]:
        m, k, n = 4096, 4096, 6144 if bn == 1536 else 4096
        mib = int8_matmul_mib(bm, bk, bn)
        configs.append(Config("matmul_int8", (m, k, n), "int8", {"bm": bm, "bk": bk, "bn": bn}, mib))
    for rows, width in [(512, 4096), (256, 8192), (2048, 1024), (384, 4096), (480, 4096), (1024, 2048)]:
        mib = rmsnorm_mib(rows, width)
        configs.append(Config("rmsnorm", (32 * rows, width), "bfloat16", {"br": rows}, mib))
    return configs


def temporaries_configs() -> list[Config]:
    """Where the compiler keeps a whole block's f32 temporaries (2026-12-06: a bf16 RMS norm of 384 and 480
    rows a block was refused 6.0 and 7.5 MiB above its count, the f32 copy of its block, while 256, 512
    and 1024 rows were not). Each kernel carries a padding scratch that puts it over the limit, so every
    config is refused and its E1001 size says what the compiler counted: the same row blocks of a bf16
    copy (no f32 work), of an RMS norm (bf16 in, f32 math) and of an f32 scale-and-add, 128 to 640 rows.
    """
    configs = []
    for kind, dtype in [("copy_pad", "bfloat16"), ("rmsnorm_pad", "bfloat16"), ("axpy_pad", "float32")]:
        for rows in (128, 192, 256, 320, 384, 448, 512, 640):
            width = 2048
            counted = 4 * rows * width * ITEMSIZE[dtype] / MIB + 12
            configs.append(
                Config(
                    kind,
                    (rows * 16, width),
                    dtype,
                    {"rows": rows, "pad_mib": 12, "pad_use": "carried"},
                    counted,
                )
            )
    return configs


def predicted_configs() -> list[Config]:
    """Configs the rules of `checks.compiler_scratch` (fitted on the dtype and temporaries sets) put
    within 0.6 MiB of the 16 MiB limit, chosen and committed before they were compiled: f32 HIGHEST
    matmuls whose count plus 4 copies and 512 bytes a row is 15.4 to 16.5 MiB, bf16 RMS norms whose
    count plus the f32 copy of the block is 15.0 to 16.9 MiB, and int8 matmuls under the limit."""
    configs = []
    for (m, k, n), (bm, bk, bn) in [
        ((6144, 6144, 6144), (768, 256, 1024)),
        ((6144, 6144, 6144), (768, 384, 768)),
        ((6144, 6144, 6144), (768, 512, 512)),
        ((4096, 4096, 4096), (512, 128, 2048)),
        ((6144, 6144, 6144), (2048, 128, 384)),
        ((4096, 4096, 4096), (1024, 128, 1024)),
        ((6144, 6144, 6144), (384, 256, 2048)),
        ((6144, 6144, 6144), (384, 1024, 512)),
    ]:
        mib = matmul_mib(m, k, n, "float32", bm, bk, bn)
        configs.append(
            Config("tiled_matmul_pallas_call", (m, k, n), "float32", {"bm": bm, "bk": bk, "bn": bn}, mib)
        )
    for rows, width in [(320, 4096), (336, 4096), (352, 4096), (224, 6144), (240, 6144)]:
        mib = rmsnorm_mib(rows, width)
        configs.append(Config("rmsnorm", (16 * rows, width), "bfloat16", {"br": rows}, mib))
    for bm, bk, bn in [(1024, 1536, 1024), (768, 2048, 1024), (1024, 3072, 512)]:
        mib = int8_matmul_mib(bm, bk, bn)
        configs.append(Config("matmul_int8", (6144, 6144, 6144), "int8", {"bm": bm, "bk": bk, "bn": bn}, mib))
    return configs


CONFIG_SETS = {
    "predicted": predicted_configs,
    "grid": all_configs,
    "followup": followup_configs,
    "dtypes": dtype_configs,
    "temporaries": temporaries_configs,
}


@functools.cache
def catalog(slug: str):
    path = ROOT / "bench" / "tpu" / "sweeps" / f"{slug}.py"
    if slug not in SWEEPS:
        path = ROOT / "kernels_catalog" / slug / "kernel.py"
    spec = importlib.util.spec_from_file_location(f"catalog_{slug}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(config: Config):
    """The function to compile and its argument shapes."""
    import jax
    import jax.numpy as jnp

    dtype = jnp.dtype(config.dtype)
    if config.kernel in CATALOG:
        m, k, n = config.shape
        fn = functools.partial(getattr(catalog(config.kernel), CATALOG[config.kernel]), **config.params)
        args = [(m, k), (k, n)]
    elif config.kernel.endswith("_pad"):
        fn = vmem_kernels.padded_kernel(config.kernel, **config.params)
        args = [config.shape]
    elif config.kernel in SWEEPS:
        _, shapes = SWEEPS[config.kernel]
        fn = functools.partial(catalog(config.kernel).kernel, **config.params)
        args = shapes(*config.shape)
    else:
        fn = vmem_kernels.vector_kernel(config.kernel, config.params["rows"])
        args = [config.shape] * (2 if config.kernel == "add_blocks" else 1)
    return fn, [jax.ShapeDtypeStruct(s, dtype) for s in args]


def compile_config(config: Config) -> None:
    """Lower and compile for the local TPU (Mosaic's VMEM check runs in the compile); never run."""
    import jax

    fn, specs = build(config)
    jax.jit(fn).lower(*specs).compile()


def outcome(config: Config, skip: str | None = None, compile_fn=compile_config) -> dict:
    """compiled, the E1001 sizes and the error's start; `compile_fn` compiles for the local TPU, or (in
    offline_compile.py) for a topology with no chip present."""
    if skip:
        return {"compiled": None, "e1001": None, "error": skip}
    try:
        compile_fn(config)
        return {"compiled": True, "e1001": None, "error": None}
    except Exception as exc:  # every config gets its line, whatever the compiler says
        text = f"{type(exc).__name__}: {exc}"
        return {"compiled": False, "e1001": parse_e1001(text), "error": text[:300]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--budget", type=float, default=50.0, help="seconds; later configs are skipped")
    parser.add_argument(
        "--set", choices=CONFIG_SETS, default="grid", help="which configs (default: the grid)"
    )
    args = parser.parse_args(argv)
    start = time.perf_counter()
    import jax

    device = jax.devices()[0]
    if device.platform != "tpu":
        raise SystemExit(f"compiling for the scoped VMEM limit needs a TPU, found {device.device_kind}")
    # Nearest the limit first: if the budget runs out, the configs that decide the rule are in.
    configs = sorted(CONFIG_SETS[args.set](), key=lambda c: abs(c.counted_mib - 16))
    print(f"{len(configs)} configs on {device.device_kind}, JAX {jax.__version__}", flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w") as out:
        for n, config in enumerate(configs, 1):
            t0 = time.perf_counter()
            over = t0 - start > args.budget
            result = outcome(config, f"skipped: time budget of {args.budget} s spent" if over else None)
            seconds = round(time.perf_counter() - t0, 3)
            facts = {"seconds": seconds, "jax": jax.__version__, "device_kind": device.device_kind}
            out.write(
                json.dumps(asdict(config) | {"counted_mib": round(config.counted_mib, 3)} | result | facts)
                + "\n"
            )
            out.flush()
            print(
                f"[{n}/{len(configs)}] {config.kernel} {config.shape} {config.dtype} {config.params} "
                f"counted {config.counted_mib:.2f} MiB: compiled={result['compiled']} {result['e1001'] or ''} {seconds} s",
                flush=True,
            )
    print(f"done in {time.perf_counter() - start:.1f} s -> {args.out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
