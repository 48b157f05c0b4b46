"""`/api/shares/{id}/notebook` ("Open as notebook": the share as an .ipynb that checks and times its
kernel on the reader's machine) and `/api/shares/{id}/measurements` ("Add a measurement": the line
that notebook prints, brought back and shown beside the estimate as user-reported)."""

from __future__ import annotations

import logging

from fastapi import APIRouter, Query, Request, Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from sandbox.catalog.entries import Catalog
from sandbox.host.runtimes import RuntimeSet
from sandbox.jobs.build import JobError, scratch_devices
from sandbox.protocol import InterpretOptions, to_json_dict
from server import convert
from server import runtimes as jax_runtimes
from server.deps import CatalogDep, ClientDep, DatabaseDep, QuotaDep, RuntimesDep, SharesDep
from server.notebook import build, intake, kept
from server.problems import ProblemError, problem_responses
from server.store import measurements
from server.store.editor_state import iso_utc, reopened
from server.store.shares import Share, ShareStore
from server.store.sqlite import Stored
from server.wire.measurements import MeasurementCreate, MeasurementOut, MeasurementsOut
from server.wire.schemas import RunOptions

router = APIRouter(
    prefix="/api/shares", tags=["shares"], responses=problem_responses(400, 404, 422, 429, 507)
)
MEDIA_TYPE = "application/x-ipynb+json"
log = logging.getLogger(__name__)


@router.get(
    "/{share_id}/notebook",
    response_class=Response,
    responses={200: {"content": {MEDIA_TYPE: {}}, "description": "The notebook (nbformat v4)"}},
)
def get_notebook(
    share_id: str, store: SharesDep, catalog: CatalogDep, runtimes: RuntimesDep, request: Request
) -> Response:
    share = _share(store, share_id)
    kernel = _shared_kernel(share, catalog, runtimes, str(request.base_url).rstrip("/"))
    return Response(
        build.to_json(build.notebook(kernel)),
        media_type=MEDIA_TYPE,
        headers={"Content-Disposition": f'attachment; filename="pallas-{share.id}.ipynb"'},
    )


@router.get("/{share_id}/measurements", response_model=MeasurementsOut)
def list_measurements(
    share_id: str,
    store: SharesDep,
    database: DatabaseDep,
    offset: int = Query(
        0, ge=0, le=measurements.MAX_PER_SHARE, description="Skip this many (the next page)."
    ),
) -> MeasurementsOut:
    """A page of them, fairly by who added them (`measurements.listed`). Never a 500 for what a share
    keeps: the estimate as `kept` vets it, and a stored measurement that no longer reads as one (a chip
    since retired) is left out, logged."""
    share = _share(store, share_id)
    estimate = _estimate(share)
    listed = []
    total = measurements.count(database, share.id)
    for stored in measurements.listed(database, share.id, offset=offset):
        try:
            listed.append(_out(stored, estimate))
        except (ValidationError, TypeError, ValueError) as exc:
            log.warning("share %s: measurement %s cannot be listed: %s", share.id, stored.id, exc)
    return MeasurementsOut(
        share=share.id,
        estimate_seconds=estimate.seconds if estimate else None,
        estimate_chip=estimate.chip if estimate else None,
        measurements=listed,
        total=total,
        next_offset=offset + measurements.LISTED if offset + measurements.LISTED < total else None,
    )


@router.post(
    "/{share_id}/measurements",
    status_code=201,
    response_model=MeasurementOut,
    responses={200: {"model": MeasurementOut, "description": "Added before: the same measurement"}},
)
async def add_measurement(
    share_id: str,
    body: MeasurementCreate,
    store: SharesDep,
    database: DatabaseDep,
    quota: QuotaDep,
    client: ClientDep,
    response: Response,
) -> MeasurementOut:
    quota.admit(client.address)  # every attempt is a save: a flood of lines is refused before it is read
    share = await run_in_threadpool(_share, store, share_id)
    found = intake.measurement(body.line, share)
    await run_in_threadpool(
        quota.charge, database, client.address, "measurements", measurements.content(found)
    )
    adder = measurements.adder_of(database, client.address)
    try:
        stored, new = await run_in_threadpool(measurements.add, database, found, adder)
    except measurements.AdderFullError as exc:
        raise ProblemError(429, "Too many measurements", str(exc)) from exc
    except measurements.ShareFullError as exc:
        raise ProblemError(422, "Share full", str(exc)) from exc
    if not new:
        response.status_code = 200
    return _out(stored, _estimate(share))


def _share(store: ShareStore, share_id: str) -> Share:
    share = store.get(share_id)
    if share is None:
        raise ProblemError(404, "Unknown share", f"no share {share_id!r}; check the link")
    return share


def _shared_kernel(share: Share, catalog: Catalog, runtimes: RuntimeSet, base: str) -> build.SharedKernel:
    record = share.record
    entry = catalog.get(record.entry) if record.entry else None
    state = reopened(record.chip, record.options)  # saved perhaps with chips or options since removed
    options = convert.interpret_options(
        RunOptions(**state.options), entry.options if entry else InterpretOptions()
    )
    made_on = kept.version(record.versions.get("jax"))
    jax_version = made_on or jax_runtimes.choose(runtimes, None).name
    return build.SharedKernel(
        share_id=share.id,
        page_url=f"{base}/s/{share.id}",
        source=record.source,
        entry=entry,
        chip=state.chip,
        options=to_json_dict(options),
        jax_version=jax_version,
        devices=entry.devices if entry else _devices(record.source),
        estimate=kept.estimate(record.result, state.chip),
        status=kept.status(record.result),
    )


def _devices(source: str) -> int:
    """The file's `DEVICES`; 1 where it sets a wrong one (a share is saved unrun: its notebook runs the
    file as written, and says the file's own error there)."""
    try:
        return scratch_devices(source)
    except JobError:
        return 1


def _estimate(share: Share) -> kept.KeptEstimate | None:
    return kept.estimate(share.record.result, reopened(share.record.chip, {}).chip)


def _out(stored: Stored[measurements.Measurement], estimate: kept.KeptEstimate | None) -> MeasurementOut:
    m = stored.record
    return MeasurementOut(
        id=stored.id,
        chip=m.chip,  # type: ignore[arg-type]  # validated as a ChipName on the way in
        device_kind=m.device_kind,
        jax=m.jax,
        case=m.case,
        verdict=m.verdict,
        device_seconds=m.device_seconds,
        method=m.method,
        created=iso_utc(stored.created),
        text=intake.describe(m, estimate),
    )
