"""Checks and formats shared by shares and lessons, which both store editor states."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from sandbox.catalog.entries import Catalog
from sandbox.protocol.chips import CHIPS, Chip
from server.problems import ProblemError
from server.settings import Settings
from server.wire.schemas import RunOptions, ShareCreate

# The chip a share opens on when the one it was saved with is no longer in the chip table.
DEFAULT_CHIP: Chip = ShareCreate.model_fields["chip"].default


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


@dataclass(frozen=True)
class Reopened:
    """A stored editor state's chip and options as this server can open them, and what changed."""

    chip: Chip
    options: dict[str, Any]
    note: str  # "" when it opens as it was saved


def reopened(chip: str, options: dict[str, Any]) -> Reopened:
    """`chip` and `options` as saved (perhaps by a server with other chips or options) made ones this
    server knows: an unknown chip opens on the default one and an option it no longer has, or whose
    value it no longer takes, is left out; the note says which, for the reader."""
    changed = []
    known: Chip = chip if chip in CHIPS else DEFAULT_CHIP  # type: ignore[assignment]
    if known != chip:
        changed.append(f"chip {plain(chip)} (it opens on {known})")
    kept: dict[str, Any] = {}
    for name, value in (options if isinstance(options, dict) else {}).items():
        try:
            RunOptions.model_validate({name: value})
        except ValidationError:
            changed.append(f"option {plain(name)}={plain(value)}")
            continue
        kept[name] = value
    if not changed:
        return Reopened(known, kept, "")
    note = f"This link was saved with settings this playground no longer has: {', '.join(changed)}; it opens without them."
    return Reopened(known, kept, note)


def plain(value: object) -> str:
    """A stored value named in a note: its repr, at most 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"
