"""`/api/shares`: save an editor state under a short content-addressed id, and read it back.

Handlers are plain `def`: the SQLite store blocks, so FastAPI runs them in its thread pool.
"""

from __future__ import annotations

import datetime

from fastapi import APIRouter, Request, Response

from sandbox.catalog import Catalog
from server.deps import CatalogDep, SettingsDep, SharesDep
from server.problems import ProblemError
from server.routes.meta import version as server_version
from server.schemas import RunOptions, ShareCreate, ShareCreated, SharePublic
from server.settings import Settings
from server.shares import Share, ShareRecord

router = APIRouter(prefix="/api/shares", tags=["shares"])
VERSION_FIELDS = ("python", "jax", "jaxlib", "libtpu")


def share_url(share_id: str) -> str:
    return f"/s/{share_id}"


def check_editor_state(
    source: str, entry: str | None, settings: Settings, catalog: Catalog, *, where: str = "", field: str = ""
) -> None:
    """Refuse a source over the size limit (413) or an entry the catalog lacks (422).

    `where` prefixes the detail ("step 2: ") and `field` the field names, for states inside a lesson.
    """
    size = len(source.encode())
    if size > settings.source_bytes:
        raise ProblemError(
            413,
            "Source too large",
            f"{where}the source is {size:,} bytes; the limit is {settings.source_bytes:,} bytes",
            field=f"{field}source",
        )
    if entry is not None and catalog.get(entry) is None:
        raise ProblemError(
            422, "Unknown entry", f"{where}entry {entry!r} is not in the catalog", field=f"{field}entry"
        )


def recorded_versions(settings: Settings, request: Request) -> dict[str, str | None]:
    """The versions this server runs kernels on, as a share or lesson records them."""
    running = server_version(settings, request)
    return {name: getattr(running, name) for name in VERSION_FIELDS}


def iso_utc(timestamp: float) -> str:
    """Seconds since the epoch as ISO 8601 in UTC, to the second: `2026-01-31T12:00:00Z`."""
    moment = datetime.datetime.fromtimestamp(timestamp, datetime.UTC)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


@router.post("", status_code=201, response_model=ShareCreated)
def create_share(
    body: ShareCreate,
    store: SharesDep,
    catalog: CatalogDep,
    settings: SettingsDep,
    request: Request,
    response: Response,
) -> ShareCreated:
    check_editor_state(body.source, body.entry, settings, catalog)
    record = ShareRecord(
        source=body.source,
        entry=body.entry,
        chip=body.chip,
        options=body.options.model_dump(),
        versions=recorded_versions(settings, request),
    )
    share, new = store.put(record)
    if not new:
        response.status_code = 200
    response.headers["Location"] = f"/api/shares/{share.id}"
    return ShareCreated(id=share.id, url=share_url(share.id))


@router.get("/{share_id}", response_model=SharePublic)
def get_share(share_id: str, store: SharesDep) -> SharePublic:
    share = store.get(share_id)
    if share is None:
        raise ProblemError(404, "Unknown share", f"no share {share_id!r}; check the link")
    return public(share)


def public(share: Share) -> SharePublic:
    record = share.record
    return SharePublic(
        id=share.id,
        url=share_url(share.id),
        source=record.source,
        entry=record.entry,
        chip=record.chip,  # type: ignore[arg-type]  # validated as a ChipName when it was stored
        options=RunOptions(**record.options),
        versions=record.versions,
        created=iso_utc(share.created),
    )
