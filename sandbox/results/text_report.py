"""A plain-text report of a RunResult, for the CLI and for teachers at a terminal."""

from __future__ import annotations

from sandbox.protocol import (
    CaseResult,
    IrText,
    LoweringCheck,
    MemoryUse,
    RunResult,
    SideBySide,
    Stats,
    Timing,
)
from sandbox.protocol.trace import Trace


def render(result: RunResult, ir: str | None = None) -> str:
    """The report; with `ir` ("jaxpr", "mosaic", "stablehlo") also that IR of the chip's lowering check."""
    lines = [
        f"[{result.status.value.upper()}] {result.summary}",
        f"chip {result.chip} · mode {result.mode} · {result.wall_seconds:.2f} s wall",
    ]
    if result.versions:
        v = result.versions
        lines.append(f"python {v.python} · jax {v.jax} · jaxlib {v.jaxlib} · {v.device_kind}")
    if result.checked_by:
        lines.append(
            f"verdict: checked against {result.checked_by}; timings below are the kernel process's own report"
        )
    for case in result.cases:
        lines += _case(case)
    for out in result.outputs:
        lines.append(
            f"  output {out.name}: {out.dtype}{list(out.shape)} min={out.min} max={out.max} "
            f"mean={out.mean} nan={out.nan_count} inf={out.inf_count}"
        )
    if result.error:
        lines += ["", result.error.traceback.rstrip()]
        if result.error.limitation:
            lines.append("(a known limitation of JAX's TPU interpret mode, not a mistake in the kernel)")
    if result.timing:
        lines += _timing(result.timing)
    if result.memory:
        lines += _memory(result.memory)
    if result.estimate:  # the TPU time model (sandbox.harness.model)
        e = result.estimate
        span = (
            f" (real chip: {e.low_seconds * 1e6:.2f}–{e.high_seconds * 1e6:.2f} µs)"
            if e.low_seconds is not None and e.high_seconds is not None
            else ""
        )
        lines.append(
            f"  estimated on a TPU {e.chip}: {e.seconds * 1e6:.2f} µs{span}, {e.bound.replace('_', ' ')}-bound, "
            f"{e.roofline_fraction:.0%} of the roofline ({e.roofline_seconds * 1e6:.2f} µs)"
        )
        if e.validation:
            validated = not e.validation.startswith("not validated")
            lines.append(f"    {e.family}: {e.validation}" if validated else f"    {e.validation}")
        if e.outside_seconds:
            lines.append(
                f"    includes {e.outside_seconds * 1e6:.2f} µs of XLA ops outside the kernels "
                f"({e.outside_bytes / 1e6:.3g} MB moved at HBM bandwidth)"
            )
        if e.xla_seconds:
            lines.append(
                f"    XLA's own op (the file's xla_baseline, else its reference) estimated on a TPU {e.chip}: {e.xla_seconds * 1e6:.2f} µs; "
                f"the kernel {e.seconds / e.xla_seconds:.2f}x its time"
            )
            if e.xla_validation:
                lines.append(f"      ({e.xla_validation})")
        if e.host_dispatch_seconds:
            lines.append(
                f"    device time only: timed from the host, each call also pays ~{e.host_dispatch_seconds * 1e6:.1f} µs "
                "of host dispatch"
            )
    if result.trace:
        lines += _trace(result.trace)
    if result.both:
        lines += side_by_side(result.both)
    lines += _lowerings(result)
    if ir and result.lowering:
        lines += _ir(ir, getattr(result.lowering, ir))
    for name, text, cut in (
        ("stdout", result.stdout, result.stdout_truncated),
        ("stderr", result.stderr, result.stderr_truncated),
    ):
        if text:
            lines += ["", f"--- {name}{' (truncated)' if cut else ''} ---", text.rstrip()]
    return "\n".join(lines) + "\n"


def side_by_side(both: SideBySide) -> list[str]:
    """Mode `both`: the simulator's verdict beside the chip's, in a few lines (the CLI, MCP's text)."""
    agree = "the same verdict" if both.agree else "DIFFERENT verdicts"
    lines = [
        "",
        f"chip and simulator: {agree}: chip {both.chip_status.value}, simulated {both.simulated_status.value}",
        f"  simulated: {both.simulated_summary}",
    ]
    if both.largest:
        lines.append(f"  outputs: {both.largest}")
    if both.measured_seconds is not None or both.estimated_seconds is not None:
        ratio = (
            f" (estimate / measured {both.estimated_seconds / both.measured_seconds:.2f})"
            if both.estimated_seconds and both.measured_seconds
            else ""
        )
        lines.append(
            f"  time: measured on the chip {_ms(both.measured_seconds, 'not timed')}, "
            f"the model's estimate {_ms(both.estimated_seconds, 'none')}{ratio}"
        )
    return lines


def _ms(seconds: float | None, otherwise: str) -> str:
    return f"{seconds * 1e3:.4g} ms" if seconds is not None else otherwise


def _case(case: CaseResult) -> list[str]:
    mark = "ok " if case.passed else "BAD"
    tol = f" rtol={case.tolerance.rtol:g} atol={case.tolerance.atol:g}" if case.tolerance else ""
    lines = [f"  {mark} {case.name} ({case.seconds:.3f} s){tol}" + (f" — {case.note}" if case.note else "")]
    for out in case.outputs:
        err = (
            f"max abs {out.max_abs_error:.3g}, max rel {out.max_rel_error:.3g}"
            if out.max_abs_error is not None and out.max_rel_error is not None
            else "no finite errors"
        )
        nonfinite = f" ({out.nonfinite_where})" if out.nonfinite_mismatches else ""
        lines.append(
            f"    {'ok ' if out.passed else 'BAD'} {out.name}: {out.dtype}{list(out.shape)} {err}; "
            f"{out.mismatch_count:,}/{out.total:,} mismatched{nonfinite}"
            + (f"; {out.note}" if out.note else "")
        )
        for m in out.first_mismatches:
            lines.append(f"        at {list(m.index)}: got {m.got:.6g}, expected {m.expected:.6g}")
    return lines


def _stats(name: str, s: Stats | None) -> str:
    if s is None:
        return f"    {name}: -"
    return (
        f"    {name}: median {s.median * 1e3:.3f} ms (n={s.n}, min {s.min * 1e3:.3f}, "
        f"max {s.max * 1e3:.3f}, rse {s.rse:.1%})"
    )


def _timing(t: Timing) -> list[str]:
    head = "timing (CPU simulation, not TPU performance)" if t.simulated else "timing"
    lines = [
        "",
        f"{head}, case {t.case!r}:",
        f"    first call: {t.first_call_seconds:.3f} s",
        _stats("kernel", t.kernel),
        _stats("XLA reference", t.reference),
    ]
    if t.device_seconds is not None:
        host = t.host_dispatch_seconds or 0.0
        lines.append(
            f"    kernel on the device (profiler trace): {t.device_seconds * 1e3:.3f} ms; "
            f"host dispatch around it {host * 1e3:.3f} ms"
        )
    if t.device_seconds and t.reference_device_seconds:
        lines.append(
            f"    XLA reference on the device: {t.reference_device_seconds * 1e3:.3f} ms; the kernel takes "
            f"{t.device_seconds / t.reference_device_seconds:.2f}x XLA's time"
        )
    if t.ratio_to_reference:
        lines.append(f"    kernel / reference: {t.ratio_to_reference:.2f}x")
    if t.roofline_seconds:
        lines.append(
            f"    roofline lower bound on the chip: {t.roofline_seconds * 1e6:.2f} µs "
            f"({t.flops:,} flops, {t.bytes_accessed:,} bytes)"
        )
    return lines


def _memory(m: MemoryUse) -> list[str]:
    def frac(used: int | None, cap: int) -> str:
        return "-" if used is None else f"{used:,} B of {cap:,} ({used / cap:.2%})"

    lines = [
        "",
        "memory:",
        f"    peak host RSS: {m.peak_rss_bytes / 2**20:.0f} MiB",
        f"    HBM: inputs {m.hbm_input_bytes:,} B, outputs {m.hbm_output_bytes:,} B",
        f"    VMEM: {frac(m.vmem_bytes, m.vmem_capacity_bytes)}",
        f"    SMEM: {frac(m.smem_bytes, m.smem_capacity_bytes)}; semaphores: {m.semaphores}",
    ]
    lines += [f"    WARNING: {w}" for w in m.warnings]
    return lines


def _trace(t: Trace) -> list[str]:
    if not t.available:
        return ["", f"trace: not available ({t.reason})"]
    kept = f"{len(t.events):,} of {sum(t.counts.values()):,} events kept" if t.truncated else "not truncated"
    lines = [
        "",
        f"trace of the first call, case {t.case!r} ({t.seconds:.3f} s host time; {kept}):",
        f"    {_counts(t.counts)}",
    ]
    for lane in t.lanes:
        where = f"device {lane.device}" + ("" if lane.core is None else f", core {lane.core}")
        lines.append(f"    {where}: {_counts(lane.counts)}")
    kinds = [s.kind for s in t.steps]
    if kinds:
        lines.append(f"    steps: {kinds.count('grid')} grid, {kinds.count('pipeline')} pipeline")
    return lines


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{kind} {n:,}" for kind, n in sorted(counts.items())) or "no events"


def _lowerings(result: RunResult) -> list[str]:
    reports = {r.chip: r for r in result.lowerings}
    if result.lowering is not None and result.lowering.chip not in reports:
        reports = {result.lowering.chip: result.lowering, **reports}
    if not reports:
        return []
    lines = ["", "TPU lowering check (interpret mode off, real Pallas → Mosaic lowering):"]
    for report in reports.values():
        lines += _lowering(report)
    return lines


def _lowering(r: LoweringCheck) -> list[str]:
    verdict = {None: "NOT CHECKED", True: "lowers", False: "REJECTED"}[r.lowers]
    head = f"    {r.chip:6} {verdict:12} {r.seconds:6.2f} s"
    if r.error:
        where = f" (line {r.error.line})" if r.error.line else ""
        head += f"  {r.error.phase}: {r.error.type}: {r.error.message}{where}"
    elif r.lowers:
        sizes = [f"{name} {t.total_chars:,} chars" for name, t in _texts(r) if t is not None]
        head += f"  {r.kernels} kernel(s); " + ", ".join(sizes)
    lines = [head]
    if r.compiler:
        lines.append(f"           compiled by {r.compiler}: {'accepted' if r.compiled else 'REFUSED'}")
    lines += [f"           WARNING: {w}" for w in r.warnings]
    if r.note:
        lines.append(f"           note: {r.note}")
    return lines


def _texts(r: LoweringCheck) -> list[tuple[str, IrText | None]]:
    return [("jaxpr", r.jaxpr), ("Mosaic", r.mosaic), ("StableHLO", r.stablehlo)]


def _ir(name: str, text: IrText | None) -> list[str]:
    if text is None:
        return ["", f"--- {name}: not available ---"]
    source = dict(text.source_lines)
    cut = f" (truncated: {len(text.text):,} of {text.total_chars:,} chars)" if text.truncated else ""
    lines = ["", f"--- {name}{cut}; left column: line in kernel.py ---"]
    for number, line in enumerate(text.text.splitlines(), start=1):
        mark = str(source[number]) if number in source else ""
        lines.append(f"{mark:>4} | {line}")
    return lines
