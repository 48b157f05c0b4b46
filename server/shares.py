"""Shares: content-addressed snapshots of an editor state (source, entry, chip, options).

Stored by `server.store` (salted content-addressed ids, idempotent saves, SQLite) in the `shares`
table; the id is derived from exactly the fields of `ShareRecord`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from server.store import RecordDatabase, RecordStore, RecordTable, Stored


@dataclass(frozen=True)
class ShareRecord:
    """What a share captures; the id is derived from exactly these fields."""

    source: str
    entry: str | None
    chip: str
    options: dict[str, Any]
    versions: dict[str, str | None]


type Share = Stored[ShareRecord]
type ShareStore = RecordStore[ShareRecord]


def share_store(database: RecordDatabase) -> ShareStore:
    """The shares in `database`."""
    return RecordTable(database, "shares", lambda data: ShareRecord(**data))
