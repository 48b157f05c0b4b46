"""`/api/runs`: submit a run, read its state and result, follow its events, cancel it."""

from __future__ import annotations

from collections.abc import AsyncIterator

from fastapi import APIRouter, Header, Request, Response
from fastapi.responses import StreamingResponse

from server.classroom.runs import class_admission
from server.deps import (
    CatalogDep,
    ClassesDep,
    ClassroomDep,
    ClientDep,
    QueueDep,
    RunClientDep,
    RuntimesDep,
    SettingsDep,
    StreamsDep,
)
from server.problems import ProblemError, problem_responses
from server.queue.interface import QueueUnavailableError, RunQueue, RunView
from server.queue.problems import queue_problems
from server.streams import message
from server.submit import start_run
from server.wire.schemas import RunCreated, RunRequest, RunState

router = APIRouter(
    prefix="/api/runs", tags=["runs"], responses=problem_responses(400, 403, 404, 413, 422, 429, 503)
)


@router.post("", status_code=201, response_model=RunCreated)
async def create_run(
    body: RunRequest,
    queue: QueueDep,
    catalog: CatalogDep,
    settings: SettingsDep,
    client: RunClientDep,
    runtimes: RuntimesDep,
    classes: ClassesDep,
    room: ClassroomDep,
    response: Response,
) -> RunCreated:
    run = await start_run(
        body,
        settings=settings,
        catalog=catalog,
        runtimes=runtimes,
        queue=queue,
        client=client,
        admit=class_admission(classes, queue, room),
    )
    response.headers["Location"] = f"/api/runs/{run.id}"
    return RunCreated(
        id=run.id,
        state=run.state,
        position=run.position,
        events_url=f"/api/runs/{run.id}/events",
        url=f"/api/runs/{run.id}",
    )


@router.get("/{run_id}", response_model=RunState)
async def get_run(run_id: str, queue: QueueDep) -> RunState:
    with queue_problems():
        run = _found(run_id, await queue.view(run_id))
    return RunState(id=run.id, state=run.state, position=run.position, result=run.result)


@router.delete("/{run_id}", response_model=RunState)
async def cancel_run(run_id: str, queue: QueueDep) -> RunState:
    with queue_problems():
        run = _found(run_id, await queue.cancel(run_id))
    return RunState(id=run.id, state=run.state, position=run.position, result=None)


@router.get(
    "/{run_id}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "Server-Sent Events"}},
)
async def run_events(
    run_id: str,
    queue: QueueDep,
    request: Request,
    client: ClientDep,
    streams: StreamsDep,
    last_event_id: str | None = Header(None),
) -> StreamingResponse:
    with queue_problems():
        _found(run_id, await queue.view(run_id))
    return StreamingResponse(
        streams.opened(client.address, _sse(queue, run_id, last_event_id, request)),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


async def _sse(queue: RunQueue, run_id: str, after: str | None, request: Request) -> AsyncIterator[str]:
    """The run's events as SSE; a queue outage ends the stream (the client resumes after its last id)."""
    try:
        async for event in queue.follow(run_id, after):
            if event is None:
                if await request.is_disconnected():
                    return
                yield ": keepalive\n\n"
                continue
            yield message(event.kind, event.data, event.id)
    except QueueUnavailableError:
        yield "retry: 5000\n\n"


def _found(run_id: str, run: RunView | None) -> RunView:
    if run is None:
        raise ProblemError(
            404, "Unknown run", f"no run {run_id!r} (finished runs are kept for a while, then forgotten)"
        )
    return run
