"""Timing and memory figures of a checked kernel, as the protocol's `Timing` and `MemoryUse`.

The reference is timed jitted when it can be, and eagerly when it cannot (a reference written with
Python control flow on values raises `ConcretizationTypeError` under `jax.jit`); a reference that
cannot run at all for timing is skipped with a note. Timing the reference never turns a run that
passed into an error: it already ran once, eagerly, to produce the expected outputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import jax
import numpy as np

from sandbox.harness import calls, devicetime
from sandbox.harness.checks import timing
from sandbox.harness.checks.memory import kernel_memory
from sandbox.harness.lowering.chip_checks import facts as chip_facts
from sandbox.harness.lowering.chip_checks import scoped_warnings
from sandbox.harness.process import peak_rss_bytes
from sandbox.harness.target import Target
from sandbox.protocol import MemoryUse, Stats, Timing, chip_info
from sandbox.protocol.sweep import FASTER_THAN_ROOFLINE

SIMULATED_NOTE = (
    "CPU simulation (TPU interpret mode): wall times are host times, not TPU performance; "
    "compile time is estimated as first call minus the median run."
)


def time_reference(
    reference: Callable[..., Any], inputs: Sequence[Any], budget: float
) -> tuple[Stats | None, str]:
    """The reference's timing, and a note when it could not be timed the usual (jitted) way."""
    jitted = jax.jit(reference)
    try:
        jax.block_until_ready(jitted(*inputs))
        return timing.measure(lambda: jax.block_until_ready(jitted(*inputs)), budget), ""
    except Exception as exc:
        why = f"{type(exc).__name__}"
    try:
        jax.block_until_ready(reference(*inputs))
        stats = timing.measure(lambda: jax.block_until_ready(reference(*inputs)), budget)
    except Exception as exc:
        return (
            None,
            f"the reference could not be timed ({why} under jax.jit, {type(exc).__name__} without it)",
        )
    return stats, f"the reference cannot be jit-compiled ({why}), so it was timed without jax.jit"


DEVICE_REPEATS, DEVICE_WARMUP = 10, 1  # traced calls on a TPU, after the timing loop's own warm-up


def device_time(target: Target, run: Callable[[], Any]) -> devicetime.DeviceTiming | None:
    """On a TPU: the kernel's device time and host dispatch from profiler traces; None in the
    simulator, or when the trace has no device events (the wall-clock figures then stand alone)."""
    if target.interpret:
        return None
    try:
        found = devicetime.profile(run, repeats=DEVICE_REPEATS, warmup=DEVICE_WARMUP)
    except (OSError, ValueError, RuntimeError):
        return None
    return found if found.device_seconds > 0 else None


def reference_device_time(
    target: Target, reference: Callable[..., Any], inputs: Sequence[Any]
) -> tuple[float | None, str]:
    """On a TPU: the plain-XLA reference's device time on the kernel's inputs (what a user would run
    instead), or None and why not: the simulator (""), a reference that cannot be jitted, a trace without
    its device events, or a time the chip cannot make (under what its HBM needs to move the op's bytes:
    its inputs and outputs, or XLA's own count where that is less, as for an op that reads a slice of an
    input; the trace missed part of the run, as a kernel's timing can, `FASTER_THAN_ROOFLINE`)."""
    if target.interpret:
        return None, ""
    jitted = jax.jit(reference)
    try:
        found = device_time(target, lambda: jax.block_until_ready(jitted(*inputs)))
        moved = calls.shape_bytes(inputs) + calls.shape_bytes(jax.eval_shape(jitted, *inputs))
    except Exception:  # a reference that only runs eagerly: its wall time stands alone
        return None, "it did not run jitted"
    if found is None:
        return None, "the profiler's trace had no device events for it"
    bandwidth = chip_info(target.chip).device_hbm_bandwidth
    if found.device_seconds * FASTER_THAN_ROOFLINE < moved / bandwidth:  # only then compile for XLA's count
        _, accessed = calls.reference_cost(reference, inputs)
        moved = min(moved, accessed) if accessed else moved
    floor = moved / bandwidth
    if found.device_seconds * FASTER_THAN_ROOFLINE < floor:
        return None, (
            f"its trace gave {found.device_seconds * 1e3:.4g} ms, under the {floor * 1e3:.4g} ms the chip's HBM "
            f"needs to move its {moved:,} bytes: the timing missed part of its run"
        )
    return found.device_seconds, ""


def timing_result(
    target: Target,
    case: str,
    first: float,
    kernel: Stats,
    ref: Stats | None,
    flops: int | None,
    bytes_accessed: int | None,
    ref_note: str = "",
    device: devicetime.DeviceTiming | None = None,
    reference_device: float | None = None,
) -> Timing:
    chip = chip_info(target.chip)
    roofline = chip.roofline_seconds(flops, bytes_accessed) if flops and bytes_accessed else None
    notes = [SIMULATED_NOTE] if target.interpret else []
    if ref_note:
        notes.append(ref_note[0].upper() + ref_note[1:] + ".")
    return Timing(
        first_call_seconds=first,
        compile_seconds=max(first - kernel.median, 0.0),
        kernel=kernel,
        reference=ref,
        ratio_to_reference=kernel.median / ref.median if ref and ref.median > 0 else None,
        simulated=target.interpret,
        roofline_seconds=roofline,
        flops=flops,
        bytes_accessed=bytes_accessed,
        case=case,
        note=" ".join(notes),
        device_seconds=device.device_seconds if device else None,
        host_dispatch_seconds=device.host_seconds if device else None,
        reference_device_seconds=reference_device,
    )


def memory_result(
    target: Target,
    closed: Any,
    inputs: Sequence[Any],
    outputs: list[tuple[str, np.ndarray]],
    compiled: bool | None = None,
) -> MemoryUse:
    """`compiled`: the chip's compiler's own verdict on the kernel, where the lowering check had one
    (True: it compiled, and the count's scoped-limit warnings, predictions of its refusal, are dropped)."""
    chip = chip_info(target.chip)
    demand = kernel_memory(closed)
    warnings = []
    if demand.vmem_bytes > chip.vmem_bytes:
        warnings.append(
            f"VMEM: the kernel allocates {demand.vmem_bytes:,} bytes, more than the "
            f"{chip.vmem_bytes:,} bytes of one {chip.device_kind} TensorCore"
        )
    if demand.smem_bytes > chip.smem_bytes:
        warnings.append(
            f"SMEM: the kernel allocates {demand.smem_bytes:,} bytes, more than the "
            f"{chip.smem_bytes:,} bytes of one {chip.device_kind} TensorCore"
        )
    # The scoped limit, with the compiler's own scratch for the kernels' dots (what E1001 counts).
    if compiled is not True:
        warnings += scoped_warnings(chip_facts(closed), chip)
    return MemoryUse(
        peak_rss_bytes=peak_rss_bytes(),
        hbm_input_bytes=calls.nbytes(inputs),
        hbm_output_bytes=calls.nbytes([a for _, a in outputs]),
        vmem_bytes=demand.vmem_bytes if demand.kernels else None,
        smem_bytes=demand.smem_bytes if demand.kernels else None,
        semaphores=demand.semaphores if demand.kernels else None,
        vmem_capacity_bytes=chip.vmem_bytes,
        smem_capacity_bytes=chip.smem_bytes,
        hbm_capacity_bytes=chip.hbm_bytes,
        warnings=tuple(warnings),
        note="" if demand.kernels else "no Pallas kernel found in the traced function",
    )
