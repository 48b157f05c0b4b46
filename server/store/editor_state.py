"""Checks and formats shared by shares and lessons, which both store editor states."""

from __future__ import annotations

import datetime

from sandbox.catalog.entries import Catalog
from server.problems import ProblemError
from server.settings import Settings


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


def iso_utc(timestamp: float) -> str:
    """Seconds since the epoch as ISO 8601 in UTC, to the second: `2026-01-31T12:00:00Z`."""
    moment = datetime.datetime.fromtimestamp(timestamp, datetime.UTC)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")
