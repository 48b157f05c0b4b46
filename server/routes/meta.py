"""`/api/health`, `/api/version`, `/api/chips`: is the server well, what does it run kernels on, and
what the chips a run can target have (capacities and peak rates, for memory meters and rooflines)."""

from __future__ import annotations

import dataclasses
import importlib.metadata
import platform

from fastapi import APIRouter, Request

from sandbox.chips import CHIP_TABLE
from server.deps import RunnerDep, SettingsDep
from server.schemas import ChipOut, Health, VersionInfo

router = APIRouter(prefix="/api", tags=["meta"])


@router.get("/health", response_model=Health)
def health(runner: RunnerDep) -> Health:
    return Health(status="ok", queued=runner.queued, running=len(runner.running), slots=runner.slots)


@router.get("/version", response_model=VersionInfo)
def version(settings: SettingsDep, request: Request) -> VersionInfo:
    tpu = settings.has_tpu()
    return VersionInfo(
        playground=_dist("pallas-playground") or "dev",
        python=platform.python_version(),
        jax=_dist("jax"),
        jaxlib=_dist("jaxlib"),
        libtpu=_dist("libtpu") or _dist("libtpu-nightly"),
        device_kind="TPU (native)" if tpu else f"{platform.machine()} CPU (TPU interpret mode)",
        mode="tpu" if tpu else "interpret",
        sandbox=request.app.state.backend_name,
        sandbox_note=request.app.state.backend_note,
    )


@router.get("/chips", response_model=list[ChipOut])
def list_chips() -> list[ChipOut]:
    return [ChipOut(**dataclasses.asdict(chip)) for chip in CHIP_TABLE.values()]


def _dist(name: str) -> str | None:
    # Read from package metadata: the server never imports JAX (jobs do, in their own processes).
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None
