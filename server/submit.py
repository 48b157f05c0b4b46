"""From a request to a queued run: the checks every request that runs code gets, whichever route it
came by (`POST /api/runs` for one run, `POST /api/matrices` for one per runtime, `POST /api/sweeps` for
shard runs of a sweep, and the MCP server's tools), each refusal as the same problem
(`tests/api/test_request_checks.py`).

A class run is a run with more to it (counted against the student, checked against the lesson step,
recorded on the teacher's grid): the caller hands `start_run` an `Admission` for that
(`server.classroom.runs`), so this module knows nothing of classes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

from sandbox.catalog.entries import Catalog, CatalogEntry
from sandbox.host.runtimes import RuntimeSet
from sandbox.host.tpuhost import resolve_mode
from sandbox.jobs.build import JobError, make_job
from sandbox.protocol import Chip, Job, Mode
from server import convert
from server.clients import Client
from server.problems import ProblemError
from server.queue.interface import RunQueue, RunView
from server.queue.problems import queue_problems
from server.runtimes import choose
from server.settings import Settings
from server.wire.schemas import RunOptions, RunRequest


@dataclass(frozen=True)
class Admitted:
    """A run as its admission lets it in: the job to queue, the client it counts against, and what
    to do once it is queued (None: nothing)."""

    job: Job
    client: Client
    queued: Callable[[RunView], Awaitable[None]] | None = None


class Admission(Protocol):
    """What a run is besides its job (a class run's student and step), decided after the job is built
    and before it is queued; refusing is raising a `ProblemError`."""

    async def __call__(self, body: RunRequest, job: Job, client: Client) -> Admitted: ...


def entry_of(catalog: Catalog, slug: str | None) -> CatalogEntry | None:
    if slug is None:
        return None
    entry = catalog.get(slug)
    if entry is None:
        raise ProblemError(
            422,
            "Unknown entry",
            f"entry {slug!r} is not in the catalog; known: {', '.join(catalog.slugs)}",
            field="entry",
        )
    return entry


def check_request(
    settings: Settings, catalog: Catalog, *, entry: str | None, source: str, chip: Chip, mode: Mode
) -> CatalogEntry | None:
    """The entry a request names, or the problem that refuses it: an unknown entry, no TPU, the
    wrong chip, a source too large. Every route that builds jobs asks here first."""
    found = entry_of(catalog, entry)
    _check_tpu(settings, chip, mode)
    _check_source(settings, source)
    return found


def _check_tpu(settings: Settings, chip: Chip, mode: Mode) -> None:
    native = mode in ("tpu", "both")  # `both` runs natively too (`sandbox.backends.both`)
    if native and not settings.redis_url and not settings.has_tpu():  # with Redis: a worker's
        raise ProblemError(
            422,
            "No TPU",
            f"mode '{mode}' was asked for, but this server has no TPU; use 'auto' or 'interpret'",
            field="mode",
        )
    host_chip = settings.tpu_chip()
    if native and host_chip is not None and chip != host_chip:
        raise ProblemError(
            422,
            "Wrong chip",
            f"this server's TPU is a {host_chip}, not a {chip}: choose {host_chip} to run natively, "
            f"or mode 'interpret' to simulate a {chip}",
            field="chip",
        )


def _check_source(settings: Settings, source: str) -> None:
    if len(source.encode()) > settings.source_bytes:
        raise ProblemError(
            413,
            "Source too large",
            f"the source is {len(source.encode()):,} bytes; the limit is {settings.source_bytes:,} bytes",
            field="source",
        )


def placed_mode(settings: Settings, chip: Chip, mode: Mode) -> Mode:
    """Where a run goes, decided once when its job is made: `auto` is native on this server's chip
    (the result then says `tpu` and names the device), simulated on any other."""
    return resolve_mode(mode, chip, settings.tpu_chip())


def build_job(
    settings: Settings,
    entry: CatalogEntry | None,
    *,
    source: str,
    chip: Chip,
    mode: Mode,
    options: RunOptions,
    lower_chips: tuple[Chip, ...] = (),
    runtime: str = "",
) -> Job:
    """The job for a request that passed `check_request`, or a problem if the job is invalid."""
    try:
        return make_job(
            source,
            entry=entry,
            chip=chip,
            mode=placed_mode(settings, chip, mode),
            options=convert.interpret_options(options, entry.options if entry else None),
            limits=convert.limits(settings),
            timing_budget_seconds=settings.timing_budget_seconds,
            lower_chips=lower_chips,
            runtime=runtime,
        )
    except JobError as exc:
        raise ProblemError(422, "Invalid run", str(exc)) from exc


async def submit(queue: RunQueue, job: Job, client: Client, *, fresh: bool) -> RunView:
    """Queue `job`, or a problem: the queue is full or unreachable, the client too fast or too busy."""
    with queue_problems():
        return await queue.submit(job, client, fresh=fresh)


async def start_run(
    body: RunRequest,
    *,
    settings: Settings,
    catalog: Catalog,
    runtimes: RuntimeSet,
    queue: RunQueue,
    client: Client,
    admit: Admission | None = None,
) -> RunView:
    """One run as `POST /api/runs` starts it (and the MCP server's `run_kernel`): checked, built,
    admitted (a class run: counted against the student and their class), queued."""
    entry = check_request(
        settings, catalog, entry=body.entry, source=body.source, chip=body.chip, mode=body.mode
    )
    job = build_job(
        settings,
        entry,
        source=body.source,
        chip=body.chip,
        mode=body.mode,
        options=body.options,
        lower_chips=tuple(body.lower_chips),
        runtime=choose(runtimes, body.runtime).name,
    )
    admitted = await admit(body, job, client) if admit is not None else Admitted(job, client)
    run = await submit(queue, admitted.job, admitted.client, fresh=body.fresh)
    if admitted.queued is not None:
        await admitted.queued(run)
    return run
