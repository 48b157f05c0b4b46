"""`/api/shares`: save an editor state under a short content-addressed id, and read it back.

Reading handlers are plain `def`: the store (SQLite or PostgreSQL) blocks, so FastAPI runs them in
its thread pool; creating one asks the run queue first, then writes in the thread pool.
"""

from __future__ import annotations

from fastapi import APIRouter, Response
from starlette.concurrency import run_in_threadpool

from sandbox.catalog.entries import Catalog
from sandbox.host.runtimes import RuntimeSet
from server import runtimes as jax_runtimes
from server.deps import (
    CatalogDep,
    ClientDep,
    DatabaseDep,
    QueueDep,
    QuotaDep,
    RuntimesDep,
    SettingsDep,
    SharesDep,
)
from server.problems import ProblemError, problem_responses
from server.queue.interface import RunQueue
from server.queue.problems import queue_problems
from server.store import snapshots
from server.store.editor_state import check_editor_state, iso_utc, reopened
from server.store.shares import Share, ShareRecord, encode_share
from server.store.sqlite import canonical_json
from server.wire.schemas import RunOptions, ShareCreate, ShareCreated, SharePublic

router = APIRouter(
    prefix="/api/shares", tags=["shares"], responses=problem_responses(400, 404, 413, 422, 429, 507)
)


def share_url(share_id: str) -> str:
    return f"/s/{share_id}"


@router.post(
    "",
    status_code=201,
    response_model=ShareCreated,
    responses={200: {"model": ShareCreated, "description": "Shared before: the same id"}},
)
async def create_share(
    body: ShareCreate,
    store: SharesDep,
    catalog: CatalogDep,
    settings: SettingsDep,
    runtimes: RuntimesDep,
    queue: QueueDep,
    quota: QuotaDep,
    database: DatabaseDep,
    client: ClientDep,
    response: Response,
) -> ShareCreated:
    quota.admit(client.address)
    check_editor_state(body.source, body.entry, settings, catalog)
    result, result_at = await kept_result(body, queue, catalog)
    record = ShareRecord(
        source=body.source,
        entry=body.entry,
        chip=body.chip,
        options=body.options.model_dump(),
        # The runtime it ran on: a link opens there while that JAX is installed (see `public`).
        versions=jax_runtimes.versions(jax_runtimes.choose(runtimes, body.runtime)),
        result=result,
        result_at=result_at,
    )
    content = canonical_json(encode_share(record))
    await run_in_threadpool(quota.charge, database, client.address, "shares", content)
    share, new = await run_in_threadpool(store.put, record)
    if not new:
        response.status_code = 200
    response.headers["Location"] = f"/api/shares/{share.id}"
    return ShareCreated(id=share.id, url=share_url(share.id))


async def kept_result(
    body: ShareCreate, queue: RunQueue, catalog: Catalog
) -> tuple[dict | None, float | None]:
    """The trimmed result of the run `body.run` names (a finished run of this very state), if any."""
    if body.run is None:
        return None, None
    with queue_problems():
        run = await queue.finished(body.run)
    if run is None:
        raise ProblemError(
            422, "No result to keep", f"run {body.run!r} is not finished or no longer kept", field="run"
        )
    entry = catalog.get(body.entry) if body.entry else None
    snapshots.check_same_state(run.job, body, entry)
    return snapshots.trimmed(run.result), run.at


@router.get("/{share_id}", response_model=SharePublic)
def get_share(share_id: str, store: SharesDep, runtimes: RuntimesDep) -> SharePublic:
    share = store.get(share_id)
    if share is None:
        raise ProblemError(404, "Unknown share", f"no share {share_id!r}; check the link")
    return public(share, runtimes)


def public(share: Share, runtimes: RuntimeSet) -> SharePublic:
    record = share.record
    made_on = record.versions.get("jax")
    run_on, note = jax_runtimes.reopen(runtimes, made_on)
    state = reopened(record.chip, record.options)
    return SharePublic(
        id=share.id,
        url=share_url(share.id),
        source=record.source,
        entry=record.entry,
        chip=state.chip,
        options=RunOptions(**state.options),
        versions=record.versions,
        created=iso_utc(share.created),
        result=record.result,
        result_at=iso_utc(record.result_at) if record.result_at is not None else None,
        runtime=made_on,
        run_on=run_on,
        runtime_note=" ".join(filter(None, (note, state.note))),
    )
