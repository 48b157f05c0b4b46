"""Compile every config the v5e chip answered around the scoped VMEM limit again, on a CPU with no TPU,
for a v5e topology: does libtpu's offline compile give the chip's own verdict?

Usage (from the repository root, any machine with libtpu installed; compiles only, never runs):
    python bench/tpu/offline_compile.py [--out bench/tpu/v5e/vmem-offline.jsonl] [--topology v5e:1x1]

libtpu compiles for a topology description (`jax.experimental.topologies`) without opening a chip;
Mosaic's VMEM check runs inside that compile, so a config over the scoped limit is refused with the
same E1001 message. Each record line of `vmem_records.VMEM_RECORDS` is rebuilt by `vmem_grid.build`
at its own config and compiled once; one JSON line per record: its identity (file, kernel, shape,
dtype, params, counted_mib), the chip's verdict (`chip`: compiled and its E1001 sizes), the offline one
(`offline`: compiled, E1001 sizes parsed from the offline compiler's message, the error's start),
`agree`, the seconds the offline compile took and the versions. The records the chip skipped (past
vmem_grid's time budget) get their line too, with the chip's verdict null, and are left out of the
agreement. The summary (agreement, every disagreement) goes to stdout.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import vmem_grid
import vmem_records

OUT = vmem_records.HERE / "vmem-offline.jsonl"


def target(topology: str) -> Any:
    """A one-device sharding on a chip of `topology` ("v5e:1x1"): where the abstract inputs live."""
    import numpy as np
    from jax.experimental import topologies
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    devices = topologies.get_topology_desc(platform="tpu", topology_name=topology).devices
    return NamedSharding(Mesh(np.array(devices[:1]), ("x",)), PartitionSpec())


def compile_offline(config: vmem_grid.Config, sharding: Any) -> None:
    """Trace, lower and compile `config`'s kernel for the topology's chip; nothing is run."""
    import jax

    fn, specs = vmem_grid.build(config)
    abstract = [jax.ShapeDtypeStruct(s.shape, s.dtype, sharding=sharding) for s in specs]
    jax.jit(fn).trace(*abstract).lower().compile()


def versions(topology: str, sharding: Any) -> dict[str, str]:
    import jax
    import jaxlib

    return {
        "topology": topology,
        "device_kind": next(iter(sharding.device_set)).device_kind,
        "jax": jax.__version__,
        "jaxlib": jaxlib.__version__,
        "libtpu": importlib.metadata.version("libtpu"),
    }


def line(row: dict[str, Any], offline: dict[str, Any], seconds: float, facts: dict[str, str]) -> dict:
    """One record's line: its identity, both verdicts side by side, whether they agree."""
    chip = {"compiled": row["compiled"], "e1001": row["e1001"]}
    identity = {k: row[k] for k in ("record", "kernel", "shape", "dtype", "params", "counted_mib")}
    agree = None if row["compiled"] is None else row["compiled"] == offline["compiled"]
    return identity | {"chip": chip, "offline": offline, "agree": agree, "seconds": seconds} | facts


def summary(lines: list[dict[str, Any]]) -> list[str]:
    """Agreement over the configs the chip answered, every disagreement, and the E1001 sizes compared."""
    answered = [x for x in lines if x["agree"] is not None]
    differ = [x for x in answered if not x["agree"]]
    both = [x for x in answered if x["chip"]["e1001"] and x["offline"]["e1001"]]
    same = [x for x in both if x["chip"]["e1001"] == x["offline"]["e1001"]]
    skipped = [x for x in lines if x["agree"] is None]
    out = [
        f"agree {len(answered) - len(differ)} of {len(answered)} configs the chip answered "
        f"({sum(x['chip']['compiled'] is False for x in answered)} refused there)",
        f"E1001 sizes: refused by both with sizes {len(both)}, the same size, limit and excess {len(same)}",
    ]
    out += [
        f"  differs: {x['record']} {x['kernel']} {x['shape']} {x['dtype']} {x['params']}: chip "
        f"{x['chip']}, offline {x['offline']}"
        for x in differ
    ]
    out += [
        f"  E1001 differs: {x['record']} {x['kernel']} {x['params']}: chip {x['chip']['e1001']}, "
        f"offline {x['offline']['e1001']}"
        for x in both
        if x not in same
    ]
    if skipped:
        compiled = sum(bool(x["offline"]["compiled"]) for x in skipped)
        out.append(
            f"{len(skipped)} records the chip skipped (time budget): offline {compiled} compiled, "
            f"{len(skipped) - compiled} refused"
        )
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--topology", default="v5e:1x1", help="jax.experimental.topologies name")
    args = parser.parse_args(argv)
    # Before JAX starts: no metadata server to ask (no TPU VM here), and the CPU as JAX's backend; the
    # TPU compiler is reached through the topology alone.
    os.environ.setdefault("TPU_SKIP_MDS_QUERY", "1")
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    start = time.perf_counter()
    sharding = target(args.topology)
    facts = versions(args.topology, sharding)
    rows = vmem_records.rows()
    print(f"{len(rows)} records, compiled offline for {facts}", flush=True)
    lines = []
    with open(args.out, "w") as out:
        for n, row in enumerate(rows, 1):
            config = vmem_grid.Config(
                row["kernel"], tuple(row["shape"]), row["dtype"], row["params"], row["counted_mib"]
            )
            t0 = time.perf_counter()
            offline = vmem_grid.outcome(config, compile_fn=lambda c: compile_offline(c, sharding))
            lines.append(line(row, offline, round(time.perf_counter() - t0, 3), facts))
            out.write(json.dumps(lines[-1]) + "\n")
            out.flush()
            print(
                f"[{n}/{len(rows)}] {row['record']} {row['kernel']} {row['params']}: chip {row['compiled']}, "
                f"offline {offline['compiled']} {offline['e1001'] or ''} {lines[-1]['seconds']} s",
                flush=True,
            )
    print("\n".join(summary(lines)), flush=True)
    print(f"done in {time.perf_counter() - start:.1f} s -> {args.out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
