"""`/api/health`, `/api/version`, `/api/chips`: is the server well, what does it run kernels on, and
what the chips a run can target have (capacities and peak rates, for memory meters and rooflines)."""

from __future__ import annotations

import dataclasses
from typing import Literal

from fastapi import APIRouter, Request, Response

from sandbox.protocol.chips import CHIP_TABLE
from server.deps import RunnerDep, VersionsDep
from server.problems import problem_responses
from server.runner import Runner
from server.schemas import ChipOut, Health, SandboxHealth, VersionInfo

router = APIRouter(prefix="/api", tags=["meta"], responses=problem_responses(422))
# A queued run that waited this long while a slot was free means the dispatcher is stuck.
STUCK_QUEUE_SECONDS = 30.0


@router.get("/health", response_model=Health, responses={503: {"model": Health, "description": "Unhealthy"}})
def health(runner: RunnerDep, request: Request, response: Response) -> Health:
    report = assess(runner, request.app.state.backend_name)
    if report.status == "unhealthy":
        response.status_code = 503
    return report


def assess(runner: Runner, backend_name: str) -> Health:
    """Unhealthy when runs cannot complete: a slot worker gone, the sandbox unable to run jobs, or the
    queue not moving although a slot is free; degraded when some slots are out of service."""
    sandbox = runner.backend.health()
    waited = runner.oldest_wait_with_free_slot()
    alive = runner.slots_alive()
    problems = []
    if alive < runner.slots:
        problems.append(f"{runner.slots - alive} of {runner.slots} run slots are not working")
    if not sandbox.ok:
        problems.append(f"the sandbox cannot run jobs: {sandbox.detail}")
    if waited > STUCK_QUEUE_SECONDS:
        problems.append(f"a queued run has waited {waited:.0f} s although a slot is free")
    status: Literal["ok", "degraded", "unhealthy"] = "unhealthy" if problems else "ok"
    if not problems and sandbox.quarantined_slots:
        status = "degraded"
        problems.append(sandbox.detail)
    return Health(
        status=status,
        problems=problems,
        queued=runner.queued,
        running=len(runner.running),
        slots=runner.slots,
        slots_alive=alive,
        worker_restarts=runner.worker_restarts,
        oldest_wait_seconds=round(waited, 1),
        sandbox=SandboxHealth(backend=backend_name, **dataclasses.asdict(sandbox)),
    )


@router.get("/version", response_model=VersionInfo)
def version(running: VersionsDep) -> VersionInfo:
    return running


@router.get("/chips", response_model=list[ChipOut])
def list_chips() -> list[ChipOut]:
    return [ChipOut(**dataclasses.asdict(chip)) for chip in CHIP_TABLE.values()]
