"""The timed configs the docs page reports apart from the calibration's families (`tpu_records.py`):
sweeps no fit has seen (`calibration.NEVER_FITTED`), and timings faster than the chip can run
(`calibration.faster_than_the_chip`), which no figure counts."""

from __future__ import annotations

from typing import Any

from tpu_records import ms


def implausible_section(rows: list[dict[str, Any]]) -> list[str]:
    """The timings faster than the chip can run a config (`calibration.faster_than_the_chip`): left out
    of every figure above, listed here."""
    import calibration

    doubted = [r for r in rows if calibration.faster_than_the_chip(r)]
    if not doubted:
        return []
    out = [
        "## Timings faster than the chip can run",
        "",
        f"{len(doubted)} timed configs took less than their roofline (their flops at the MXU's peak, their bytes "
        "at HBM bandwidth): the profiler's device time missed part of their run, so no figure on this page "
        "counts them, and Tune on the chip says so beside such a time. They are all kernels that write "
        "their result through a mutable ref (`jax.Ref`) and return nothing (the catalog's own TPU case of "
        "`inplace_chunked_matmul` above is the same kernel, with the same doubt); how their device time is "
        "read is to be fixed and timed again.",
        "",
        "| kernel | size | config | measured | roofline | estimated |",
        "|---|---|---|---|---|---|",
    ]
    for r in doubted:
        params = ", ".join(f"{k}={v}" for k, v in sorted(r["params"].items()))
        out.append(
            f"| {calibration.kernel_name(r)} | {calibration.size_text(r)} | {params} | "
            f"{ms(r['measured_device_seconds'])} | {ms(r['roofline_seconds'])} | {ms(r['estimated_seconds'])} |"
        )
    return out


def never_fitted_section(rows: list[dict[str, Any]]) -> list[str]:
    """The sweeps timed after the model's constants were last fitted: how the model does where nothing
    was fitted to (`calibration.NEVER_FITTED`)."""
    import calibration

    fresh = [r for r in calibration.measured(rows) if calibration.never_fitted(r)]
    if not fresh:
        return []
    errors = calibration.Errors.of([calibration.error(r) for r in fresh])
    out = [
        "## Sweeps held out of every fit",
        "",
        f"Kernels and shapes no fit had seen, timed on the chip at commit "
        f"{', '.join(sorted(calibration.NEVER_FITTED))} (`bench/tpu/on-chip.sh sweeps-f`, `sweeps-g`, `sweeps-i` and `sweeps-j`) and "
        "held out of every fit since (`calibration.NEVER_FITTED`: the constants fitted later were fitted on "
        f"the other configs' fit half): {errors.text()} over {len(fresh)} configs.",
        "",
        "| kernel | size | family | configs | within ±10 % | range | best config right | the model's pick on the chip |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s in calibration.sweeps(fresh):
        group = [
            r for r in fresh if calibration.kernel_name(r) == s.kernel and calibration.size_text(r) == s.size
        ]
        e = calibration.Errors.of([calibration.error(r) for r in group])
        out.append(
            f"| {s.kernel} | {s.size} | {group[0]['family']} | {s.configs} | {e.within_10}/{e.configs} | "
            f"{calibration.percent(e.low)} to {calibration.percent(e.high)} | {'yes' if s.best_right else 'no'} | "
            f"{'best' if s.best_right else f'+{s.pick_loss * 100:.1f} % slower'} |"
        )
    return out
