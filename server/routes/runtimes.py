"""`/api/runtimes`: the JAX versions this server runs kernels on, what the playground can do on each,
and what every catalog entry's worked solution gets on each (`kernels_catalog/runtimes.toml`)."""

from __future__ import annotations

from fastapi import APIRouter

from sandbox.catalog import runtimes as catalog_runtimes
from server.deps import QueueDep, RuntimesDep, SettingsDep
from server.problems import problem_responses
from server.runtimes import public
from server.wire.runtimes import CatalogOutcomeOut, RuntimeOut

router = APIRouter(prefix="/api/runtimes", tags=["runtimes"], responses=problem_responses(422))


@router.get("", response_model=list[RuntimeOut])
async def list_runtimes(runtimes: RuntimesDep, queue: QueueDep) -> list[RuntimeOut]:
    """Newest first; the first is the default of every run that names none. A runtime whose sandbox
    could not start is marked unavailable, with the reason."""
    return public(runtimes, dict((await queue.health()).sandbox.unavailable))


@router.get("/catalog", response_model=dict[str, dict[str, CatalogOutcomeOut]])
def catalog_outcomes(settings: SettingsDep) -> dict[str, dict[str, CatalogOutcomeOut]]:
    """Entry slug → jax version → what its worked solution gets there (recorded by the conformance run)."""
    record = catalog_runtimes.load(settings.catalog_dir)
    return {
        slug: {name: CatalogOutcomeOut(status=str(o.status), summary=o.summary) for name, o in rows.items()}
        for slug, rows in record.items()
    }
