"""`/api/health`, `/api/version`, `/api/chips`, `/metrics`: is the server well, what does it run
kernels on, what the chips a run can target have (capacities and peak rates, for memory meters and
rooflines), and the operators' numbers in the Prometheus format."""

from __future__ import annotations

import dataclasses
from typing import Literal

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST

from sandbox.protocol.chips import CHIP_TABLE
from server.deps import QueueDep, VersionsDep
from server.problems import problem_responses
from server.queue.interface import QueueHealth, QueueUnavailableError
from server.queue.metrics import render
from server.wire.schemas import ChipOut, Health, PoolHealthOut, SandboxHealth, VersionInfo

router = APIRouter(prefix="/api", tags=["meta"], responses=problem_responses(422))
metrics_router = APIRouter(tags=["meta"])


@router.get("/health", response_model=Health, responses={503: {"model": Health, "description": "Unhealthy"}})
async def health(queue: QueueDep, request: Request, response: Response) -> Health:
    report = assess(await queue.health(), request.app.state.backend_name)
    if report.status == "unhealthy":
        response.status_code = 503
    return report


def assess(facts: QueueHealth, backend_name: str) -> Health:
    """Unhealthy when runs cannot complete (the queue says why); degraded when they can, with less."""
    status: Literal["ok", "degraded", "unhealthy"] = (
        "unhealthy" if facts.problems else "degraded" if facts.notes else "ok"
    )
    return Health(
        status=status,
        problems=facts.problems or facts.notes,
        queued=facts.queued,
        running=facts.running,
        slots=facts.slots,
        slots_alive=facts.slots_alive,
        worker_restarts=facts.worker_restarts,
        oldest_wait_seconds=facts.oldest_wait_seconds,
        sandbox=SandboxHealth(
            backend=backend_name,
            ok=facts.sandbox.ok,
            detail=facts.sandbox.detail,
            restarts=facts.sandbox.restarts,
            quarantined_slots=facts.sandbox.quarantined_slots,
        ),
        queue=facts.kind,
        pools=[PoolHealthOut(**dataclasses.asdict(p)) for p in facts.pools],
    )


@router.get("/version", response_model=VersionInfo)
def version(running: VersionsDep) -> VersionInfo:
    return running


@router.get("/chips", response_model=list[ChipOut])
def list_chips() -> list[ChipOut]:
    return [ChipOut(**dataclasses.asdict(chip)) for chip in CHIP_TABLE.values()]


@metrics_router.get("/metrics", response_class=Response, include_in_schema=False)
async def metrics(queue: QueueDep) -> Response:
    try:
        body = render(await queue.metrics())
    except QueueUnavailableError:
        return Response("# the run queue (Redis) is unreachable\n", status_code=503, media_type="text/plain")
    return Response(body, media_type=CONTENT_TYPE_LATEST)
