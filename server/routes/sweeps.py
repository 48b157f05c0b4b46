"""`/api/sweeps`: start a sweep ("Tune"), read its state and result, follow its events, cancel it.

A sweep is one API object over shard runs of the run queue (`server.sweeps`). Its events:
`queued` {shard, position}, `running` {shard}, `config` {result: ConfigResult, judged, total} as each
config is judged, `error` {shard, error} if a shard's job fails as a whole, and `done` {status,
summary, sweep: SweepResult, shards}. A refused sweep gets the same problems as a refused run.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from fastapi import APIRouter, Header, Request, Response
from fastapi.responses import StreamingResponse

from server.deps import CatalogDep, ClientDep, QueueDep, RunClientDep, SettingsDep, StreamsDep, SweepsDep
from server.problems import ProblemError, problem_responses
from server.queue.problems import queue_problems
from server.streams import message
from server.sweeps import Sweep, SweepRegistry, start_sweep, sweep_jobs
from server.wire.sweeps import SweepCreated, SweepRequest, SweepState

router = APIRouter(
    prefix="/api/sweeps", tags=["sweeps"], responses=problem_responses(400, 404, 413, 422, 429, 503)
)
KEEPALIVE_SECONDS = 15.0


@router.post("", status_code=201, response_model=SweepCreated)
async def create_sweep(
    body: SweepRequest,
    registry: SweepsDep,
    queue: QueueDep,
    catalog: CatalogDep,
    settings: SettingsDep,
    client: RunClientDep,
    response: Response,
) -> SweepCreated:
    jobs, spec = await sweep_jobs(body, settings, catalog, queue)
    sweep = await start_sweep(registry, queue, jobs, spec, client, fresh=body.fresh)
    response.headers["Location"] = f"/api/sweeps/{sweep.id}"
    return SweepCreated(
        id=sweep.id,
        state=sweep.state,
        total=spec.total,
        shards=len(jobs),
        events_url=f"/api/sweeps/{sweep.id}/events",
        url=f"/api/sweeps/{sweep.id}",
    )


@router.get("/{sweep_id}", response_model=SweepState)
def get_sweep(sweep_id: str, registry: SweepsDep) -> SweepState:
    sweep = _find(registry, sweep_id)
    return SweepState(
        id=sweep.id, state=sweep.state, total=sweep.spec.total, judged=len(sweep.judged), result=sweep.result
    )


@router.delete("/{sweep_id}", response_model=SweepState)
async def cancel_sweep(sweep_id: str, registry: SweepsDep, queue: QueueDep) -> SweepState:
    sweep = _find(registry, sweep_id)
    with queue_problems():
        await registry.cancel(queue, sweep)
    return SweepState(
        id=sweep.id, state=sweep.state, total=sweep.spec.total, judged=len(sweep.judged), result=None
    )


@router.get(
    "/{sweep_id}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "Server-Sent Events"}},
)
async def sweep_events(
    sweep_id: str,
    registry: SweepsDep,
    request: Request,
    client: ClientDep,
    streams: StreamsDep,
    last_event_id: str | None = Header(None),
) -> StreamingResponse:
    sweep = _find(registry, sweep_id)
    # An id that is not one of ours (malformed, huge, past the end) replays from the start.
    after = (
        int(last_event_id)
        if last_event_id and last_event_id.isascii() and last_event_id.isdigit() and len(last_event_id) < 10
        else -1
    )
    after = after if after < len(sweep.events) else -1
    return StreamingResponse(
        streams.opened(client.address, _sse(sweep, after, request)),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


async def _sse(sweep: Sweep, after: int, request: Request) -> AsyncIterator[str]:
    index = after + 1
    while True:
        while index < len(sweep.events):
            event = sweep.events[index]
            index += 1
            yield message(event["kind"], event["data"], event["id"])
        if sweep.state == "done" and index >= len(sweep.events):
            return
        if not await sweep.wait_for_events(index, KEEPALIVE_SECONDS):
            if await request.is_disconnected():
                return
            yield ": keepalive\n\n"


def _find(registry: SweepRegistry, sweep_id: str) -> Sweep:
    sweep = registry.get(sweep_id)
    if sweep is None:
        raise ProblemError(
            404,
            "Unknown sweep",
            f"no sweep {sweep_id!r} (finished sweeps are kept for a while, then forgotten)",
        )
    return sweep
