"""`/api/shares`: save an editor state under a short content-addressed id, and read it back.

Handlers are plain `def`: the SQLite store blocks, so FastAPI runs them in its thread pool.
"""

from __future__ import annotations

import datetime
import threading
from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response

from server.deps import CatalogDep, SettingsDep
from server.problems import ProblemError
from server.routes.meta import version as server_version
from server.schemas import RunOptions, ShareCreate, ShareCreated, SharePublic
from server.shares import Share, ShareRecord, ShareStore, open_store

router = APIRouter(prefix="/api/shares", tags=["shares"])
_opening = threading.Lock()
VERSION_FIELDS = ("python", "jax", "jaxlib", "libtpu")


def share_store(request: Request) -> ShareStore:
    """The app's share store, opened on first use (or the one the factory put on `app.state`)."""
    state = request.app.state
    store: ShareStore | None = getattr(state, "shares", None)
    if store is None:
        with _opening:
            store = getattr(state, "shares", None)
            if store is None:
                settings = state.settings
                store = state.shares = open_store(settings.data_dir, settings.share_salt)
    return store


StoreDep = Annotated[ShareStore, Depends(share_store)]


def share_url(share_id: str) -> str:
    return f"/s/{share_id}"


@router.post("", status_code=201, response_model=ShareCreated)
def create_share(
    body: ShareCreate,
    store: StoreDep,
    catalog: CatalogDep,
    settings: SettingsDep,
    request: Request,
    response: Response,
) -> ShareCreated:
    size = len(body.source.encode())
    if size > settings.source_bytes:
        raise ProblemError(
            413,
            "Source too large",
            f"the source is {size:,} bytes; the limit is {settings.source_bytes:,} bytes",
            field="source",
        )
    if body.entry is not None and catalog.get(body.entry) is None:
        raise ProblemError(422, "Unknown entry", f"entry {body.entry!r} is not in the catalog", field="entry")
    running = server_version(settings, request)
    record = ShareRecord(
        source=body.source,
        entry=body.entry,
        chip=body.chip,
        options=body.options.model_dump(),
        versions={name: getattr(running, name) for name in VERSION_FIELDS},
    )
    share, new = store.put(record)
    if not new:
        response.status_code = 200
    response.headers["Location"] = f"/api/shares/{share.id}"
    return ShareCreated(id=share.id, url=share_url(share.id))


@router.get("/{share_id}", response_model=SharePublic)
def get_share(share_id: str, store: StoreDep) -> SharePublic:
    share = store.get(share_id)
    if share is None:
        raise ProblemError(404, "Unknown share", f"no share {share_id!r}; check the link")
    return public(share)


def public(share: Share) -> SharePublic:
    record = share.record
    created = datetime.datetime.fromtimestamp(share.created, datetime.UTC)
    return SharePublic(
        id=share.id,
        url=share_url(share.id),
        source=record.source,
        entry=record.entry,
        chip=record.chip,  # type: ignore[arg-type]  # validated as a ChipName when it was stored
        options=RunOptions(**record.options),
        versions=record.versions,
        created=created.isoformat(timespec="seconds").replace("+00:00", "Z"),
    )
