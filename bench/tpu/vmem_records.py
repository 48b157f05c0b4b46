"""The compiles the chip answered around the scoped VMEM limit (`vmem_grid.py`'s sets), for the docs
page `tpu_records.py` writes: every record, the playground's own verdict on each (traced at its size,
nothing run), and the page's section with both side by side."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import tpu_records as records

HERE = records.HERE


# Every compile the chip answered around the scoped limit (bench/tpu/vmem_grid.py's sets): the grid, its
# follow-up, the dtype set (f32 at HIGHEST, int8, a bf16 RMS norm) and the temporaries set (row blocks
# beside a padding scratch that is read, or only written, or untouched), and the predicted set (16 configs
# near the limit whose verdicts were committed before the chip compiled them: 6be298e).
VMEM_RECORDS = (
    "vmem.jsonl",
    "vmem-followup.jsonl",
    "vmem-dtypes.jsonl",
    "vmem-temporaries.jsonl",
    "vmem-temporaries-unread.jsonl",
    "vmem-predicted.jsonl",
)


def rows(folder: Path = HERE) -> list[dict[str, Any]]:
    """Every VMEM record, each with the file it came from (`record`)."""
    return [row | {"record": name} for name in VMEM_RECORDS for row in records.read(name, folder)]


def playground_refuses(row: dict[str, Any]) -> bool:
    """The playground's own VMEM verdict on a vmem.jsonl config (traced at its size, nothing run): what
    Tune's `over_vmem` and the lowering check say, the compiler's scratch for its dots counted."""
    import jax
    import vmem_grid

    from sandbox.harness.lowering.chip_checks import facts, vmem_refusal
    from sandbox.protocol.chips import chip_info

    config = vmem_grid.Config(
        row["kernel"], tuple(row["shape"]), row["dtype"], row["params"], row["counted_mib"]
    )
    fn, specs = vmem_grid.build(config)
    return vmem_refusal(facts(jax.make_jaxpr(fn)(*specs)), chip_info("v5e")) is not None


def section(rows: list[dict[str, Any]]) -> list[str]:
    tried = [r for r in rows if r.get("compiled") is not None]
    refused = [r for r in tried if r["compiled"] is False]
    verdicts = [playground_refuses(r) for r in tried]
    agree = sum(v == (r["compiled"] is False) for v, r in zip(verdicts, tried, strict=True))
    predicted = [
        (v, r) for v, r in zip(verdicts, tried, strict=True) if r["record"] == "vmem-predicted.jsonl"
    ]
    predicted_right = sum(v == (r["compiled"] is False) for v, r in predicted)
    out = [
        "## The compiler's scoped-VMEM limit",
        "",
        f"{len(tried)} configs compiled (bench/tpu/vmem_grid.py, in {len(VMEM_RECORDS)} sets; the rest were past "
        f"its time budget): {len(refused)} refused with E1001. `counted` is the bench's count of the "
        "kernel's blocks and scratch (every scratch, read or not; the playground leaves out one the body "
        "never reads, as the compiler does); "
        "`compiler` the size the compiler reported; `playground` the playground's verdict (Tune's "
        "`over_vmem`, the lowering check), which adds the VMEM the compiler keeps for itself as these sizes "
        "show it (per dot: one copy of a bf16 left-operand block, four of an f32 one at HIGHEST plus 512 "
        "bytes a row, 0.17 of an int8 one; and the f32 copy of the largest block a body widens from bf16: "
        f"`sandbox/harness/checks/compiler_scratch.py`). It agrees with the compiler on {agree} of "
        f"{len(tried)}; tests/unit/test_vmem_verdicts.py replays each. The `vmem-predicted` set was chosen "
        "near the limit after those rules were fitted, and its verdicts committed (6be298e) before the chip "
        f"compiled it: {predicted_right} of {len(predicted)} as predicted.",
        "",
        "| set | kernel | shape | dtype | config | counted | compiled | compiler | playground |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r, refuses in zip(tried, verdicts, strict=True):
        config = ", ".join(f"{k}={v}" for k, v in r["params"].items())
        e = r.get("e1001") or {}
        said = f"{e['size_m']} MiB of {e['limit_m']} MiB" if e else "–"
        shape = "×".join(map(str, r["shape"]))
        mark = "" if refuses == (r["compiled"] is False) else " (differs)"
        out.append(
            f"| {r['record'].removesuffix('.jsonl')} | {r['kernel']} | {shape} | {r['dtype']} | {config} | "
            f"{r['counted_mib']} MiB | "
            f"{'yes' if r['compiled'] else 'no'} | {said} | {'refuses' if refuses else 'compiles'}{mark} |"
        )
    return out
