"""`/api/runs`: submit a run, read its state and result, follow its events, cancel it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from fastapi import APIRouter, Header, Request, Response
from fastapi.responses import StreamingResponse

from sandbox.jobs import JobError, make_job
from server import convert
from server.deps import CatalogDep, ClientDep, RunnerDep, SettingsDep
from server.problems import ProblemError, problem_responses
from server.queue_problems import queue_problems
from server.runqueue import (
    QueueUnavailableError,
    RunQueue,
    RunView,
)
from server.schemas import RunCreated, RunRequest, RunState

router = APIRouter(
    prefix="/api/runs", tags=["runs"], responses=problem_responses(400, 404, 413, 422, 429, 503)
)


@router.post("", status_code=201, response_model=RunCreated)
async def create_run(
    body: RunRequest,
    runner: RunnerDep,
    catalog: CatalogDep,
    settings: SettingsDep,
    client: ClientDep,
    response: Response,
) -> RunCreated:
    entry = None
    if body.entry is not None:
        entry = catalog.get(body.entry)
        if entry is None:
            raise ProblemError(
                422,
                "Unknown entry",
                f"entry {body.entry!r} is not in the catalog; known: {', '.join(catalog.slugs)}",
                field="entry",
            )
    if body.mode == "tpu" and not settings.redis_url and not settings.has_tpu():
        raise ProblemError(
            422,
            "No TPU",
            "mode 'tpu' was asked for, but this server has no TPU; use 'auto' or 'interpret'",
            field="mode",
        )
    host_chip = settings.tpu_chip()
    if body.mode == "tpu" and host_chip is not None and body.chip != host_chip:
        raise ProblemError(
            422,
            "Wrong chip",
            f"this server's TPU is a {host_chip}, not a {body.chip}: choose {host_chip} to run natively, "
            f"or mode 'interpret' to simulate a {body.chip}",
            field="chip",
        )
    if len(body.source.encode()) > settings.source_bytes:
        raise ProblemError(
            413,
            "Source too large",
            f"the source is {len(body.source.encode()):,} bytes; "
            f"the limit is {settings.source_bytes:,} bytes",
            field="source",
        )
    try:
        job = make_job(
            body.source,
            entry=entry,
            chip=body.chip,
            mode=body.mode,
            options=convert.interpret_options(body.options, entry.options if entry else None),
            limits=convert.limits(settings),
            timing_budget_seconds=settings.timing_budget_seconds,
            lower_chips=tuple(body.lower_chips),
        )
    except JobError as exc:
        raise ProblemError(422, "Invalid run", str(exc)) from exc
    with queue_problems():
        run = await runner.submit(job, client, fresh=body.fresh)
    response.headers["Location"] = f"/api/runs/{run.id}"
    return RunCreated(
        id=run.id,
        state=run.state,
        position=run.position,
        events_url=f"/api/runs/{run.id}/events",
        url=f"/api/runs/{run.id}",
    )


@router.get("/{run_id}", response_model=RunState)
async def get_run(run_id: str, runner: RunnerDep) -> RunState:
    with queue_problems():
        run = _found(run_id, await runner.view(run_id))
    return RunState(id=run.id, state=run.state, position=run.position, result=run.result)


@router.delete("/{run_id}", response_model=RunState)
async def cancel_run(run_id: str, runner: RunnerDep) -> RunState:
    with queue_problems():
        run = _found(run_id, await runner.cancel(run_id))
    return RunState(id=run.id, state=run.state, position=run.position, result=None)


@router.get(
    "/{run_id}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "Server-Sent Events"}},
)
async def run_events(
    run_id: str, runner: RunnerDep, request: Request, last_event_id: str | None = Header(None)
) -> StreamingResponse:
    with queue_problems():
        _found(run_id, await runner.view(run_id))
    return StreamingResponse(
        _sse(runner, run_id, last_event_id, request),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


async def _sse(runner: RunQueue, run_id: str, after: str | None, request: Request) -> AsyncIterator[str]:
    """The run's events as SSE; a queue outage ends the stream (the client resumes after its last id)."""
    try:
        async for event in runner.follow(run_id, after):
            if event is None:
                if await request.is_disconnected():
                    return
                yield ": keepalive\n\n"
                continue
            head = f"id: {event.id}\n" if event.id is not None else ""
            yield f"{head}event: {event.kind}\ndata: {json.dumps(event.data)}\n\n"
    except QueueUnavailableError:
        yield "retry: 5000\n\n"


def _found(run_id: str, run: RunView | None) -> RunView:
    if run is None:
        raise ProblemError(
            404, "Unknown run", f"no run {run_id!r} (finished runs are kept for a while, then forgotten)"
        )
    return run
