"""What a backend gathers about one job's child process: the raw facts `classify` turns into a result.

Apart from the event payloads (`sandbox.protocol.events`) because it is the host's record, not a
message a child writes: the backends fill it, the classifier reads it.
"""

from __future__ import annotations

from dataclasses import dataclass

from sandbox.protocol.events import Event


@dataclass(frozen=True)
class Execution:
    """Raw facts about one child process, gathered by a backend; `classify` turns them into a RunResult."""

    events: tuple[Event, ...]
    exit_code: int | None
    signal: int | None
    timed_out: bool
    cancelled: bool
    wall_seconds: float
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    output_limit_hit: bool = False
    memory_limit_hit: bool = False
    cpu_limit_hit: bool = False
    peak_rss_bytes: int = 0
    infra_error: str | None = None
    # Kernel-counted limit hits the hardened backend can see (the local backend leaves them False).
    pids_limit_hit: bool = False
    disk_limit_hit: bool = False
    # The child's events could not be read (malformed or over a cap): the job was stopped.
    report_error: str | None = None
    # Set by the host, never by a job: the verdict used a reference an earlier run computed
    # (`sandbox.backends.kept_references`), so this run ran no reference's job.
    reference_kept: bool = False
    # Set by the host, never by a job: the job ran in a slot that owns a TPU chip (so a time it
    # reports may be a device time; in any other slot it was simulated, whatever it says).
    on_chip: bool = False


def never_ran(reason: str | None, *, wall_seconds: float = 0.0, cancelled: bool = False) -> Execution:
    """The Execution of a job that never ran (or whose runner was lost): nothing but the reason."""
    return Execution(
        events=(),
        exit_code=None,
        signal=None,
        timed_out=False,
        cancelled=cancelled,
        wall_seconds=wall_seconds,
        stdout="",
        stderr="",
        stdout_truncated=False,
        stderr_truncated=False,
        infra_error=reason,
    )
