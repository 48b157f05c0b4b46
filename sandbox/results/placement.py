"""Where a run's kernel ran, by the host's word (`Execution.on_chip`, set by the backend that gave
the job its slot), never by the kernel's process: its `versions` and `timing` events are its own
report, and a simulated run once showed mode "tpu" and a made-up device time as a chip's (issue 41),
and a device the run never had ("TPU v6 lite" for a CPU simulation of a v5e).
"""

from __future__ import annotations

from dataclasses import replace

from sandbox.protocol import Execution, Job, Timing, Versions
from sandbox.protocol.device_kinds import device_kind_of

SIMULATED_NOTE = (
    "CPU simulation: this run was simulated on the CPU, not on a TPU (its process reported a chip "
    "time, but the host ran it in no chip slot)"
)


def mode(job: Job, execution: Execution, *, started: bool) -> str:
    """`tpu` only for a job that ran in a chip slot; any other ran simulated (a job of mode `tpu` off
    a chip is refused by the harness before any user code runs). A job that never started keeps the
    mode it asked for."""
    if execution.on_chip:
        return "tpu"
    return "interpret" if job.mode == "auto" and started else job.mode


def timing(reported: Timing | None, *, on_chip: bool) -> Timing | None:
    """The process's timing, labelled by where the host ran it: in a chip slot a chip's; anywhere
    else the CPU's simulation, with no device time, whatever the process said."""
    if reported is None:
        return None
    if on_chip:
        return replace(reported, simulated=False) if reported.simulated else reported
    device = (reported.device_seconds, reported.host_dispatch_seconds, reported.reference_device_seconds)
    if reported.simulated and device == (None, None, None):
        return reported
    return replace(
        reported,
        simulated=True,
        device_seconds=None,
        host_dispatch_seconds=None,
        reference_device_seconds=None,
        note=SIMULATED_NOTE,
    )


def versions(reported: Versions | None, job: Job, *, on_chip: bool) -> Versions | None:
    """The process's versions with the device named by the host: the chip slot's kind, or the
    simulated chip's in interpret mode on this CPU (the versions themselves stay the process's word:
    they are of the runtime the host chose for it)."""
    kind = device_kind_of(job.chip, on_chip=on_chip)
    if reported is None or kind is None:
        return reported
    return replace(reported, device_kind=kind)
