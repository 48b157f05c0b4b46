"""Whether libtpu schedules a kernel for a v5p's TensorCore as for a v5e's: the bundles of each program.

Compiles kernels (the sweeps' and the published points' own, at their sizes) for `v5e:1x1` and
`v5p:1x1x1` with libtpu's compile-only client, its final bundle listings dumped, and counts the
bundles of its largest program (the kernel), in all and inside loops (`bundles.kernel_listings`). One
JSON line per kernel to `v5e/same-core.jsonl`. Compile only, on a CPU: nothing runs.

    JAX_PLATFORMS=cpu python bench/tpu/same_core.py
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DUMP = Path(tempfile.mkdtemp(prefix="same-core-"))
os.environ["LIBTPU_INIT_ARGS"] = f"--xla_jf_dump_to={DUMP}"  # read once, when libtpu loads
os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

import bundles  # noqa: E402
from reestimate import Estimator  # noqa: E402

from sandbox.harness import sweep_plan  # noqa: E402
from sandbox.harness.jaxapi import offline  # noqa: E402
from sandbox.harness.model.estimate import chip_context  # noqa: E402
from sandbox.protocol.chips import chip_info  # noqa: E402
from tests.model import published  # noqa: E402

CHIPS = ("v5e", "v5p")
# XLA's own programs around a kernel (their names are the HLO op's): copies, fusions, iotas, slices...
_XLA_OWN = re.compile(
    r"^(copy|iota|slice|reduce|broadcast|dynamic|pad|convert|constant|sort|gather|ne|and)\b|fusion"
)
SWEEPS = (  # (file, params) of timed v5e configs: each at its sweep's size
    ("bench/tpu/sweeps/flash.py", {"bk": 512, "bq": 512}),
    ("bench/tpu/sweeps/flash.py", {"bk": 128, "bq": 128}),
    ("bench/tpu/sweeps/splash.py", {"bkv": 512, "bq": 256}),
    ("bench/tpu/sweeps/softmax.py", {"br": 128}),
    ("bench/tpu/sweeps/rmsnorm.py", {"br": 32}),
    ("bench/tpu/sweeps/elementwise.py", {"bc": 1024, "br": 32}),
    ("kernels_catalog/tiled_matmul_pallas_call/kernel.py", {"bk": 512, "bm": 512, "bn": 512}),
)
PUBLISHED = (
    "gmm v5p 262144x256 @ 256x256x7168, drawn groups, tiles 128/256/7168",
    "splash attention v5p (8, 2048, 16, 128), causal, blocks 1024/1024/256",
)


def listed(fn: object, args: list[object], chip: str) -> dict[str, object]:
    for stale in DUMP.iterdir():
        stale.unlink() if stale.is_file() else shutil.rmtree(stale)
    with chip_context(chip_info(chip)):  # type: ignore[arg-type]
        done = offline.compile_for(chip, fn, args)  # type: ignore[arg-type]
    assert done.refused is None, done.refused
    programs = bundles.kernel_listings(DUMP)
    kernels = [n for n in programs if not _XLA_OWN.search(n)] or list(programs)
    name = max(kernels, key=lambda n: programs[n].bundles)  # the kernel, not XLA's copies and fusions
    return {"program": name, "bundles": programs[name].bundles, "in_loops": programs[name].in_loops()}


def main() -> int:
    estimator = Estimator()
    rows = [json.loads(line) for line in (HERE / "v5e" / "tune.jsonl").read_text().splitlines() if line]
    cases = []
    for file, params in SWEEPS:
        row = next(r for r in rows if r["file"] == file and r["params"] == params)
        timed = estimator.plan(row)
        fn = sweep_plan.bound(timed.kernel, row["params"], timed.mutable)
        args = list(estimator._target_args(row, timed))
        cases.append((f"{file} {json.dumps(params, sort_keys=True)} at {json.dumps(row['size'])}", fn, args))
    for point in published.load():
        if point.id in PUBLISHED:
            fn, args = published.call(point)
            cases.append((point.id, fn, list(args)))
    lines = []
    for name, fn, args in cases:
        line = {"kernel": name, **{chip: listed(fn, args, chip) for chip in CHIPS}}
        lines.append(line)
        print(json.dumps(line)[:240], flush=True)
    (HERE / "v5e" / "same-core.jsonl").write_text(
        "".join(json.dumps(x, sort_keys=True) + "\n" for x in lines)
    )
    shutil.rmtree(DUMP, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
