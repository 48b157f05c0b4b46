"""The compiler's own program for every config timed on the chip, compiled on this host without a TPU.

For each measured config of `v5e/tune.jsonl`, the kernel is built at its target size exactly as the
time model estimates it (`reestimate.Estimator`), compiled for a v5e by libtpu (`jaxapi.offline`) with
its listings dumped, and the final bundles of its programs counted (`bundles`). One JSON line per
config to `v5e/listings.jsonl`: the config's key, the grid steps the model walks, and per program its
bundles (all, inside loops, per depth), its operations per unit at each depth (`bundles.unit_of`) and the
most of each unit one bundle issued. Compile only: nothing runs.

    JAX_PLATFORMS=cpu python bench/tpu/listings.py [--only SUBSTRING] [--out PATH] [--missing]

(`--missing`: only the configs the file has no line for yet, added to it: a new sweep part's.)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DUMP = Path(tempfile.mkdtemp(prefix="listings-"))
# libtpu reads its flags once, when it starts: before anything imports it.
os.environ["LIBTPU_INIT_ARGS"] = f"--xla_jf_dump_to={DUMP}"
os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

import bundles  # noqa: E402
from reestimate import Estimator, key  # noqa: E402

from sandbox.harness import sweep_plan  # noqa: E402
from sandbox.harness.jaxapi import offline  # noqa: E402
from sandbox.harness.model.estimate import chip_context, estimate_jaxpr, known_values, trace  # noqa: E402


def one(estimator: Estimator, row: dict) -> dict:  # type: ignore[type-arg]
    timed = estimator.plan(row)
    args = estimator._target_args(row, timed)
    fn = sweep_plan.bound(timed.kernel, row["params"], timed.mutable)
    closed = trace(fn, args, chip_context(estimator.chip))
    found = estimate_jaxpr(closed, known_values(args), estimator.chip, timeline=False)
    for stale in DUMP.iterdir():
        stale.unlink()
    t0 = time.perf_counter()
    with chip_context(estimator.chip):  # as the lowering check: get_tpu_info needs the chip at trace time
        compiled = offline.compile_for("v5e", fn, list(args))
    programs = bundles.kernel_listings(DUMP)
    return {
        "key": key(row),
        "compiled": compiled.refused is None,
        "compile_seconds": round(time.perf_counter() - t0, 2),
        "steps": [k.steps for k in found.kernels],
        "kernels": [k.name for k in found.kernels],
        "programs": {
            name: {
                "bundles": p.bundles,
                "in_loops": p.in_loops(),
                "by_depth": dict(sorted(p.by_depth.items())),
                "units_by_depth": {d: dict(sorted(c.items())) for d, c in sorted(p.units_by_depth.items())},
                "most_per_bundle": dict(sorted(p.most_per_bundle.items())),
            }
            for name, p in programs.items()
        },
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="configs whose file contains this")
    parser.add_argument("--out", type=Path, default=HERE / "v5e" / "listings.jsonl")
    parser.add_argument("--missing", action="store_true", help="only configs the file lacks, added to it")
    args = parser.parse_args(argv)
    estimator = Estimator()
    rows = [
        json.loads(line) for line in (HERE / "v5e" / "tune.jsonl").read_text().splitlines() if line.strip()
    ]
    lines: list[dict[str, object]] = []
    if args.missing and args.out.exists():
        lines = [json.loads(line) for line in args.out.read_text().splitlines() if line.strip()]
    seen = {str(line["key"]) for line in lines}
    for row in rows:
        if row.get("measured_device_seconds") is None or args.only not in row["file"] or key(row) in seen:
            continue
        seen.add(key(row))
        try:
            line = one(estimator, row)
        except Exception as exc:  # one config's failure is its line
            line = {"key": key(row), "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
        lines.append(line)
        print(json.dumps(line)[:300], flush=True)
    args.out.write_text("".join(json.dumps(line, sort_keys=True) + "\n" for line in lines))
    shutil.rmtree(DUMP, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
