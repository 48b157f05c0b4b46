"""The v5e measurements in bench/tpu/v5e, read back: one code path for the docs' "Measured on a TPU v5e"
section (`python bench/tpu/tpu_records.py --write`) and for the tests that check the records on a CPU.

- `cases.jsonl` (bench/tpu/cases.py): every case of every single-device v5e catalog entry, run
  natively through `python -m sandbox run --mode tpu`;
- `tune.jsonl` (`python -m sandbox tune --measure --record`): Tune sweeps timed on the chip, each
  config beside the time model's estimate;
- `vmem.jsonl` (bench/tpu/vmem_grid.py): configs compiled around the default scoped-VMEM limit;
- `estimates.jsonl` (written here, `reestimate`): today's model's estimate of every timed config, which
  the docs and the bands use (a record keeps the estimate it had when timed);
- `xla.jsonl` (bench/tpu/xla_baselines.py): XLA's own op timed at each sweep's size, and
  `xla-estimates.jsonl` (written here) the model's costing of it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from sandbox.harness.model.outside import XLA_COMPILED, XLA_PASSES, XLA_PLAIN
from sandbox.results.measured import model_error

HERE = Path(__file__).resolve().parent / "v5e"
ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "tpu-measured.md"
BANDS = ROOT / "sandbox" / "harness" / "model" / "families" / "measured.py"
BANDS_SOURCE = "Tune sweeps timed on the lent TPU v5e with JAX 0.12.0.1 (docs/tpu-measured.md)"
KIND_NAMES = {XLA_PLAIN: "plain", XLA_PASSES: "passes (model)", XLA_COMPILED: "passes (libtpu)"}
sys.path.append(str(ROOT))  # for `tests.model.bands`, which writes every generated band module


def read(name: str, folder: Path = HERE) -> list[dict[str, Any]]:
    path = folder / name
    return (
        [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []
    )


def tune_rows(folder: Path = HERE) -> list[dict[str, Any]]:
    """The timed configs, each with today's model's estimate (`reestimate`, `estimates.jsonl`) in
    `estimated_seconds`, the one it had when timed in `recorded_estimated_seconds`."""
    import reestimate

    today = {e["key"]: e for e in read("estimates.jsonl", folder)}
    rows = []
    for row in read("tune.jsonl", folder):
        found = today.get(reestimate.key(row)) if row.get("measured_device_seconds") else None
        if found is not None:
            row = {**row, "recorded_estimated_seconds": row.get("estimated_seconds"), **found}
            del row["key"]
        rows.append(row)
    return rows


def write_estimates(folder: Path = HERE) -> int:
    """`estimates.jsonl`: every timed config estimated again by today's model (~30 s)."""
    import reestimate

    estimator = reestimate.Estimator()
    rows = [r for r in read("tune.jsonl", folder) if r.get("measured_device_seconds")]
    lines = [json.dumps(estimator.estimate(r), sort_keys=True) for r in rows]
    (folder / "estimates.jsonl").write_text("\n".join(lines) + "\n")
    return len(lines)


def write_xla_estimates(folder: Path = HERE) -> int:
    """`xla-estimates.jsonl`: today's model's costing of XLA's own op at every sweep `xla.jsonl` timed."""
    import reestimate

    estimator = reestimate.Estimator()
    timed = {reestimate.where(r): r for r in read("tune.jsonl", folder) if r.get("measured_device_seconds")}
    rows = [timed[reestimate.where(x)] for x in read("xla.jsonl", folder) if reestimate.where(x) in timed]
    lines = [json.dumps(estimator.estimate_baseline(r), sort_keys=True) for r in rows]
    (folder / "xla-estimates.jsonl").write_text("\n".join(lines) + "\n")
    return len(lines)


def xla_rows(timed: list[dict[str, Any]], folder: Path = HERE) -> list[dict[str, Any]]:
    """Per sweep XLA's own op was timed at: its measured and estimated time, and the sweep's fastest
    config on the chip (`best_seconds`, `best_params`) beside it."""
    import calibration
    import reestimate

    estimated = {e["where"]: e for e in read("xla-estimates.jsonl", folder)}
    out = []
    for x in read("xla.jsonl", folder):
        if not x.get("measured_device_seconds"):
            continue
        configs = [r for r in calibration.measured(timed) if reestimate.where(r) == reestimate.where(x)]
        best = min(configs, key=lambda r: r["measured_device_seconds"]) if configs else None
        out.append(
            {
                **x,
                "estimated_seconds": estimated.get(reestimate.where(x), {}).get("xla_estimated_seconds"),
                "kind": estimated.get(reestimate.where(x), {}).get("kind"),
                "model_seconds": estimated.get(reestimate.where(x), {}).get("model_seconds"),
                "model_kind": estimated.get(reestimate.where(x), {}).get("model_kind"),
                "best_seconds": best["measured_device_seconds"] if best else None,
                "best_params": best["params"] if best else None,
            }
        )
    return out


def xla_section(rows: list[dict[str, Any]]) -> list[str]:
    if not rows:
        return []
    first = rows[0]
    errors = [
        r["estimated_seconds"] / r["measured_device_seconds"] - 1 for r in rows if r["estimated_seconds"]
    ]
    faster = sum(1 for r in rows if r["best_seconds"] and r["best_seconds"] < r["measured_device_seconds"])
    passes = [r for r in rows if r.get("model_kind") == XLA_PASSES and r.get("model_seconds")]
    model_errors = [r["model_seconds"] / r["measured_device_seconds"] - 1 for r in passes]
    model_within = sum(abs(e) <= 0.10 for e in model_errors)
    out = [
        "## Against XLA's own op",
        "",
        f"At each of the {len(rows)} sweeps' sizes, what a user would run instead of the kernel (the entry's "
        "plain-jnp reference, or the sweep file's `xla_baseline`: `jax.nn.dot_product_attention`, "
        "`jax.lax.ragged_dot`, a gather then attention for paged attention), jitted and timed on the chip from "
        f"profiler traces ({first.get('device', '?')}, JAX {first.get('jax', '?')}; by `bench/tpu/xla_baselines.py` "
        f"at playground {first.get('commit', '?')}, and by the sweep itself (`tune --measure`) for the "
        f"{sum(1 for r in rows if r.get('source'))} sweeps timed later); Tune shows the same figure beside every "
        "config on a TPU. "
        f"The sweep's fastest config beats XLA's op at {faster} of {len(rows)} sizes. The costing of "
        f"XLA's op shown off the chip (`model.runs.xla_costing`) is within ±10 % at "
        f"{sum(abs(e) <= 0.10 for e in errors)} of {len(errors)} sizes. Dots and element-wise ops ('plain') "
        "are costed by the time model. Ops XLA runs in several passes or below the MXU's peak "
        "(`outside.xla_kind`: reductions, gathers, ragged dots) are costed by libtpu's own cost analysis of "
        "the program it compiles for the chip, off the chip ('libtpu' below); the model's one pass "
        f"('model' column) made them too fast, within ±10 % at {model_within} of {len(model_errors)}. "
        "An estimate says beside the figure how far its costing held here.",
        "",
        "| kernel | size | XLA's op | kind | measured | estimated (error) | model | fastest config | measured | kernel / XLA |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        name = r["entry"] or Path(r["file"]).name
        size = ",".join(f"{k}={v}" for k, v in sorted(r["size"].items()))
        x, e, b = r["measured_device_seconds"], r["estimated_seconds"], r["best_seconds"]
        est = f"{ms(e)} ({e / x - 1:+.0%})" if e else "–"
        params = ", ".join(f"{k}={v}" for k, v in sorted((r["best_params"] or {}).items())) or "–"
        ratio = f"{b / x:.2f}x" if b else "–"
        kind = KIND_NAMES.get(r["kind"], "–")
        m = r.get("model_seconds") if r.get("model_kind") != r["kind"] else None
        model = f"{ms(m)} ({m / x - 1:+.0%})" if m else "–"
        out.append(
            f"| {name} | {size} | {r.get('baseline', '?')} | {kind} | {ms(x)} | {est} | {model} | {params} | "
            f"{ms(b)} | {ratio} |"
        )
    return out


def ms(seconds: float | None) -> str:
    return f"{seconds * 1e3:.3f} ms" if seconds else "–"


def cases_section(rows: list[dict[str, Any]]) -> list[str]:
    runs = [r for r in rows if r["kind"] == "run"]
    cases = [r for r in rows if r["kind"] == "case"]
    passed = sum(r["status"] == "passed" for r in cases)
    first = runs[0] if runs else {}
    out = [
        "## Every catalog case, natively",
        "",
        f"{passed} of {len(cases)} cases of {len(runs)} entries passed on a {first.get('device', '?')} "
        f"(JAX {first.get('jax', '?')}, libtpu {first.get('libtpu', '?')}, playground {first.get('commit', '?')}), "
        "each entry one `python -m sandbox run … --mode tpu --backend local` (a fresh process per job: the chip "
        "opens in each). The kernel's device time is the TPU-size case's, from profiler traces; XLA's is the "
        "entry's plain-jnp reference on the same inputs.",
        "",
        "| entry | case | status | max abs error | kernel on the device | XLA reference | kernel / XLA |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in cases:
        k, x = r.get("measured_device_seconds"), r.get("reference_device_seconds")
        ratio = f"{k / x:.2f}x" if k and x else "–"
        err = f"{r['max_abs_error']:.3g}" if r.get("max_abs_error") is not None else "–"
        out.append(f"| {r['entry']} | {r['case']} | {r['status']} | {err} | {ms(k)} | {ms(x)} | {ratio} |")
    walls = [r["wall_seconds"] for r in runs]
    firsts = [
        r["phases"]["first_verdict_after"] for r in runs if (r.get("phases") or {}).get("first_verdict_after")
    ]
    if walls:
        out += [
            "",
            f"A whole run (reference's job on the CPU, then the kernel's job on the chip, every case, timing): "
            f"median {statistics.median(walls):.1f} s; the first verdict after {statistics.median(firsts):.1f} s "
            "(median), most of it the chip's start in a fresh process.",
        ]
    return out


def tune_section(rows: list[dict[str, Any]]) -> list[str]:
    errors = [(r, model_error(r)) for r in rows]
    known = [e for _, e in errors if e is not None]
    within = sum(abs(e) <= 0.10 for e in known)
    out = [
        "## Tune sweeps timed on the chip",
        "",
        f"{len(rows)} configs (`python -m sandbox tune … --measure`): the time model's estimate within ±10 % of "
        f"the measured device time for {within} of {len(known)}; largest errors "
        f"{min(known):+.1%} and {max(known):+.1%}."
        if known
        else "No measured configs.",
        "",
        "| entry | config | size | estimate | measured on the device | host dispatch | model error |",
        "|---|---|---|---|---|---|---|",
    ]
    for r, e in errors:
        config = ", ".join(f"{k}={v}" for k, v in sorted(r["params"].items()))
        size = ",".join(f"{k}={v}" for k, v in r["size"].items())
        err = f"{e:+.1%}" if e is not None else "–"
        out.append(
            f"| {r['entry']} | {config} | {size} | {ms(r['estimated_seconds'])} | "
            f"{ms(r['measured_device_seconds'])} | {ms(r.get('measured_host_seconds'))} | {err} |"
        )
    return out


def calibration_section(rows: list[dict[str, Any]]) -> list[str]:
    """Per family: the model's error on every measured config, and on the held-out part with and
    without the one scale fitted on the rest (bench/tpu/calibration.py); per sweep: best config and order."""
    import calibration

    fams = calibration.families(rows)
    swept = calibration.sweeps(rows)
    known = calibration.measured(rows)
    out = [
        "## The time model per family, with a held-out part",
        "",
        f"{len(known)} measured configs in {len(swept)} sweeps of {len({calibration.kernel_name(r) for r in known})} "
        "kernels (`bench/tpu/calibration.py`). The split is fixed by each config's hash, about half held out; "
        "the one thing fitted is a time scale per family (the median of measured / estimated over the fit "
        "part). The model does not apply these scales: its v5e band (`sandbox/harness/model/families/"
        "measured.py`, generated from this table) is the raw error, so an estimate says how far it is off.",
        "",
        "| family | kernels | the model as it is (all configs) | held out, as it is | fitted scale | held out, scaled |",
        "|---|---|---|---|---|---|",
    ]
    for f in fams:
        out.append(
            f"| {f.family} | {', '.join(f.kernels)} | {f.raw.text()} | {f.held_out_raw.text()} | "
            f"{f.scale:.3f} | {f.held_out_scaled.text()} |"
        )
    right = sum(s.best_right for s in swept)
    pairs = sum(s.ranked_pairs for s in swept)
    ordered = sum(s.ranked_right for s in swept)
    missed = [s.pick_loss for s in swept if not s.best_right]
    close, worst = sum(loss <= calibration.RANK_MARGIN for loss in missed), max(missed, default=0.0)
    out += [
        "",
        f"The model's fastest config is the chip's in {right} of {len(swept)} sweeps; of the {pairs} pairs of "
        f"configs more than {calibration.RANK_MARGIN:.0%} apart on the chip it orders {ordered} the same way.".replace(
            "%", " %"
        ),
        "",
        f"Where it picks another, the config it picks is within {calibration.RANK_MARGIN:.0%} of the chip's best "
        f"in {close} of {len(swept) - right} sweeps, and at worst {worst:.1%} slower on the chip.".replace(
            "%", " %"
        ),
        "",
        "| kernel | size | configs | best config right | the model's pick on the chip | pairs ordered right |",
        "|---|---|---|---|---|---|",
    ]
    for s in swept:
        out.append(
            f"| {s.kernel} | {s.size} | {s.configs} | {'yes' if s.best_right else 'no'} | "
            f"{'best' if s.best_right else f'+{s.pick_loss * 100:.1f} % slower'} | {s.ranked_right}/{s.ranked_pairs} |"
        )
    return out


def document(folder: Path = HERE) -> str:
    import apart_records
    import vmem_records

    timed = tune_rows(folder)
    parts = [
        "# Measured on a TPU v5e",
        "",
        "Generated by `python bench/tpu/tpu_records.py --write` from the records in `bench/tpu/v5e/`, which the "
        "playground's own commands wrote on the lent TPU v5e (`bench/tpu/on-chip.sh`; how: bench/tpu/README.md). "
        "Do not edit by hand: `tests/unit/test_tpu_records.py` checks that this page is what the records say.",
        "",
        *cases_section(read("cases.jsonl", folder)),
        "",
        *calibration_section(timed),
        "",
        *apart_records.never_fitted_section(timed),
        "",
        *apart_records.implausible_section(timed),
        "",
        *xla_section(xla_rows(timed, folder)),
        "",
        *tune_section(timed),
        "",
        *vmem_records.section(vmem_records.rows(folder)),
    ]
    return "\n".join(parts) + "\n"


def bands_module(folder: Path = HERE) -> str:
    """sandbox/harness/model/families/measured.py: each family's raw error on the chip's sweeps, and the
    model's costing of XLA's own op at the sweeps' sizes by kind (`outside.xla_kind`), made bands and
    written by the code path that writes the published bands (`tests.model.bands`)."""
    import calibration

    from tests.model.bands import band, module

    rows = tune_rows(folder)
    by_family: dict[str, list[float]] = {}
    for r in calibration.measured(rows):
        by_family.setdefault(r["family"], []).append(calibration.error(r))
    by_kind: dict[str, list[float]] = {}
    for x in xla_rows(rows, folder):
        # Each costing a sweep's XLA op gets: here (libtpu's where it applies), and without libtpu.
        costings = {x["kind"]: x["estimated_seconds"], x["model_kind"]: x["model_seconds"]}
        for kind, seconds in costings.items():
            if kind and seconds:
                by_kind.setdefault(kind, []).append(seconds / x["measured_device_seconds"] - 1)
    doc = (
        "The time model's error measured on a real chip, per family: Tune sweeps timed on the lent TPU v5e\n"
        "(bench/tpu/v5e/tune.jsonl). Generated by `python bench/tpu/tpu_records.py --write`; do not edit\n"
        "(tests/unit/test_tpu_records.py checks it). `registry.validation` shows it beside the published band."
    )
    tables = {
        # In the order docs/tpu-measured.md lists the families (most configs first).
        "MEASURED": [
            band(f.family, "v5e", by_family[f.family], BANDS_SOURCE) for f in calibration.families(rows)
        ],
        "XLA_MEASURED": [band(k, "v5e", e, BANDS_SOURCE) for k, e in sorted(by_kind.items())],
    }
    return module(doc, {"SOURCE": BANDS_SOURCE}, tables, path=BANDS)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--write", action="store_true", help=f"write {DOC.name} (else print it)")
    args = p.parse_args()
    text = document()
    if args.write:
        print(f"estimated {write_estimates()} timed configs again", file=sys.stderr)
        print(f"estimated XLA's own op at {write_xla_estimates()} sweeps' sizes again", file=sys.stderr)
        text = document()
        DOC.write_text(text)
        BANDS.write_text(bands_module())
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
