"""`/api/runs`: submit a run, read its state and result, follow its events, cancel it."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

from fastapi import APIRouter, Header, Request, Response
from fastapi.responses import StreamingResponse

from sandbox.jobs import JobError, make_job
from sandbox.protocol import to_json_dict
from server import convert
from server.deps import CatalogDep, ClientDep, RunnerDep, SettingsDep
from server.problems import ProblemError, problem_responses
from server.runner import ClientBusyError, QueueFullError, RateLimitedError, Run, Runner
from server.schemas import RunCreated, RunRequest, RunState

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
    if body.mode == "tpu" and not settings.has_tpu():
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
    try:
        run = runner.submit(job, client, fresh=body.fresh)
    except QueueFullError as exc:
        raise ProblemError(
            503,
            "Queue full",
            f"{runner.queued} runs are waiting; try again in {exc.retry_after} s",
            headers={"Retry-After": str(exc.retry_after)},
        ) from exc
    except RateLimitedError as exc:
        raise ProblemError(
            429,
            "Rate limited",
            f"you started runs too quickly; try again in {exc.retry_after} s",
            headers={"Retry-After": str(exc.retry_after)},
        ) from exc
    except ClientBusyError as exc:
        raise ProblemError(
            429,
            "Too many runs",
            f"{exc}; wait for one to finish",
            headers={"Retry-After": "5"},
        ) from exc
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
