"""`/api/health`, `/api/version`, `/api/chips`: is the server well, what does it run kernels on, and
what the chips a run can target have (capacities and peak rates, for memory meters and rooflines)."""

from __future__ import annotations

import dataclasses

from fastapi import APIRouter

from sandbox.protocol.chips import CHIP_TABLE
from server.deps import RunnerDep, VersionsDep
from server.schemas import ChipOut, Health, VersionInfo

router = APIRouter(prefix="/api", tags=["meta"])


@router.get("/health", response_model=Health)
def health(runner: RunnerDep) -> Health:
    return Health(status="ok", queued=runner.queued, running=len(runner.running), slots=runner.slots)


@router.get("/version", response_model=VersionInfo)
def version(running: VersionsDep) -> VersionInfo:
    return running


@router.get("/chips", response_model=list[ChipOut])
def list_chips() -> list[ChipOut]:
    return [ChipOut(**dataclasses.asdict(chip)) for chip in CHIP_TABLE.values()]
