"""Building a `Job` from what a caller (the server or the CLI) asked for."""

from __future__ import annotations

import ast
import uuid
from dataclasses import replace

from sandbox.catalog.entries import CatalogEntry
from sandbox.limits import default_limits, sweep_limits
from sandbox.protocol import CHIPS, Chip, InterpretOptions, Job, Limits, Mode, SweepSpec

# Simulated CPU devices a scratch file may ask for (each is a thread of the job's one process).
MAX_DEVICES = 8

BOM = "\ufeff"


class JobError(ValueError):
    """The request cannot become a job (e.g. a chip the entry does not support)."""


def make_job(
    source: str,
    *,
    entry: CatalogEntry | None = None,
    chip: Chip = "v5p",
    mode: Mode = "auto",
    options: InterpretOptions | None = None,
    limits: Limits | None = None,
    timing_budget_seconds: float = 1.5,
    job_id: str | None = None,
    lower_chips: tuple[Chip, ...] = (),
    trace: bool = True,
    runtime: str = "",
) -> Job:
    """A validated job. `options` are the caller's interpret options over the entry's `[options]`.

    The entry's options are defaults for its jobs: with `options=None` they apply as they are; given
    options are the caller's complete choice (callers merge what the user set over `entry.options`,
    so a user can also switch off what an entry turns on, e.g. the race detector of
    `race_condition_demo`).

    `lower_chips` asks for the TPU lowering check on each of those chips too ("check on all chips"),
    beside the one for `chip` that every simulated run gets. `trace` records the kernel trace of the
    first call (see `sandbox.harness.trace.capture`); switching it off saves its cost. `runtime`: the
    JAX version to run on ("": the backend's default, the newest; see `sandbox.host.runtimes`).
    """
    limits = limits or default_limits()
    # Python skips a byte-order mark that starts a file, but `compile` of text refuses U+FEFF: a file
    # an editor saved with one would be a syntax error on line 1 (and its `DEVICES` unread).
    source = source.removeprefix(BOM)
    if len(source.encode()) > limits.source_bytes:
        raise JobError(f"source is {len(source.encode()):,} bytes; the limit is {limits.source_bytes:,}")
    if entry is not None and chip not in entry.chips:
        raise JobError(f"entry {entry.slug!r} supports chips {', '.join(entry.chips)}, not {chip!r}")
    unknown = [c for c in lower_chips if c not in CHIPS]
    if unknown:
        raise JobError(f"unknown chip(s) to lower for: {', '.join(unknown)}; known: {', '.join(CHIPS)}")
    return Job(
        id=job_id or uuid.uuid4().hex,
        source=source,
        chip=chip,
        mode=mode,
        options=with_entry_defaults(options, entry),
        limits=limits,
        entry=entry.spec() if entry is not None else None,
        timing_budget_seconds=timing_budget_seconds,
        devices=entry.devices if entry is not None else scratch_devices(source),
        lower_chips=tuple(dict.fromkeys(lower_chips)),
        trace=trace,
        runtime=runtime,
    )


def with_entry_defaults(options: InterpretOptions | None, entry: CatalogEntry | None) -> InterpretOptions:
    if options is not None:
        return options
    return entry.options if entry is not None else InterpretOptions()


def scratch_devices(source: str) -> int:
    """The `DEVICES = N` a scratch file sets at module level (an int literal), else 1.

    Read here, before the job starts, because JAX fixes the number of simulated CPU devices when it
    starts (`--xla_force_host_platform_device_count`); the file is not run to learn it. A file that
    does not parse runs with one device and reports its syntax error as usual.
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # nested too deep: the parser's own
        return 1
    for node in tree.body:
        target, value = _assignment(node)
        if target != "DEVICES":
            continue
        if not isinstance(value, ast.Constant) or type(value.value) is not int:
            raise JobError("DEVICES must be set to a whole number, e.g. `DEVICES = 4` at the top of the file")
        if not 1 <= value.value <= MAX_DEVICES:
            raise JobError(f"DEVICES = {value.value}: the playground simulates 1 to {MAX_DEVICES} devices")
        return value.value
    return 1


def _assignment(node: ast.stmt) -> tuple[str | None, ast.expr | None]:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id, node.value
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id, node.value
    return None, None


def make_sweep_job(
    source: str,
    spec: SweepSpec,
    *,
    entry: CatalogEntry | None = None,
    chip: Chip = "v5e",
    mode: Mode = "auto",
    options: InterpretOptions | None = None,
    limits: Limits | None = None,
    job_id: str | None = None,
) -> Job:
    """A job that runs the configs of `spec` (all, or the shard `spec.only`) in one child."""
    job = make_job(
        source, entry=entry, chip=chip, mode=mode, options=options, limits=limits, job_id=job_id, trace=False
    )
    configs = len(spec.only) if spec.only else spec.total
    return replace(job, sweep=spec, limits=sweep_limits(job.limits, configs), timing_budget_seconds=0.0)
