"""`/api/runs`: submit a run, read its state and result, follow its events, cancel it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from fastapi import APIRouter, Header, Request, Response
from fastapi.responses import StreamingResponse

from sandbox.protocol import to_json_dict
from server.deps import CatalogDep, ClientDep, RunnerDep, RuntimesDep, SettingsDep
from server.problems import ProblemError, problem_responses
from server.runner import Run, Runner
from server.runtimes import choose
from server.schemas import RunCreated, RunRequest, RunState
from server.submit import build_job, entry_of, submit

router = APIRouter(
    prefix="/api/runs", tags=["runs"], responses=problem_responses(400, 404, 413, 422, 429, 503)
)
KEEPALIVE_SECONDS = 15.0


@router.post("", status_code=201, response_model=RunCreated)
async def create_run(
    body: RunRequest,
    runner: RunnerDep,
    catalog: CatalogDep,
    settings: SettingsDep,
    client: ClientDep,
    runtimes: RuntimesDep,
    response: Response,
) -> RunCreated:
    job = build_job(
        settings,
        entry_of(catalog, body.entry),
        source=body.source,
        chip=body.chip,
        mode=body.mode,
        options=body.options,
        lower_chips=tuple(body.lower_chips),
        runtime=choose(runtimes, body.runtime).name,
    )
    run = submit(runner, job, client, fresh=body.fresh)
    response.headers["Location"] = f"/api/runs/{run.id}"
    return RunCreated(
        id=run.id,
        state=run.state,
        position=runner.position(run),
        events_url=f"/api/runs/{run.id}/events",
        url=f"/api/runs/{run.id}",
    )


@router.get("/{run_id}", response_model=RunState)
def get_run(run_id: str, runner: RunnerDep) -> RunState:
    run = _find(runner, run_id)
    return RunState(
        id=run.id,
        state=run.state,
        position=runner.position(run),
        result=to_json_dict(run.result) if run.result else None,
    )


@router.delete("/{run_id}", response_model=RunState)
async def cancel_run(run_id: str, runner: RunnerDep) -> RunState:
    run = _find(runner, run_id)
    if run.state != "done":
        runner.cancel(run)
    return RunState(id=run.id, state=run.state, position=runner.position(run), result=None)


@router.get(
    "/{run_id}/events",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/event-stream": {}}, "description": "Server-Sent Events"}},
)
async def run_events(
    run_id: str, runner: RunnerDep, request: Request, last_event_id: str | None = Header(None)
) -> StreamingResponse:
    run = _find(runner, run_id)
    after = int(last_event_id) if last_event_id and last_event_id.isdigit() else -1
    return StreamingResponse(
        _sse(runner, run, after, request),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
    )


async def _sse(runner: Runner, run: Run, after: int, request: Request) -> AsyncIterator[str]:
    index = after + 1
    while True:
        while index < len(run.events):
            event = run.events[index]
            index += 1
            yield f"id: {event['id']}\nevent: {event['kind']}\ndata: {json.dumps(event['data'])}\n\n"
        if run.state == "done":
            return
        if not await runner.wait_for_events(run, index, KEEPALIVE_SECONDS):
            if await request.is_disconnected():
                return
            yield ": keepalive\n\n"


def _find(runner: Runner, run_id: str) -> Run:
    run = runner.get(run_id)
    if run is None:
        raise ProblemError(
            404, "Unknown run", f"no run {run_id!r} (finished runs are kept for a while, then forgotten)"
        )
    return run
