"""Shares: content-addressed snapshots of an editor state (source, entry, chip, options), optionally
with the result one run of that state gave (`server.store.snapshots` trims it to what a reader needs).

Stored by `server.store.sqlite` (salted content-addressed ids, idempotent saves, SQLite) in the `shares`
table; the id is derived from exactly the fields of `ShareRecord`. A share without a result is
stored without the result fields, so shares saved before results existed keep their ids.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from server.store.sqlite import RecordDatabase, RecordStore, RecordTable, Stored


@dataclass(frozen=True)
class ShareRecord:
    """What a share captures; the id is derived from exactly these fields."""

    source: str
    entry: str | None
    chip: str
    options: dict[str, Any]
    versions: dict[str, str | None]
    result: dict[str, Any] | None = None  # a trimmed RunResult (server.store.snapshots)
    result_at: float | None = None  # when that run finished (seconds since the epoch)


type Share = Stored[ShareRecord]
type ShareStore = RecordStore[ShareRecord]


def encode_share(record: ShareRecord) -> dict[str, Any]:
    data = asdict(record)
    if record.result is None:
        del data["result"], data["result_at"]
    return data


def decode_share(data: dict[str, Any]) -> ShareRecord:
    """A stored share; fields a newer server added (read by an older one after a rollback) are left out."""
    return ShareRecord(**{name: data[name] for name in SHARE_FIELDS if name in data})


SHARE_FIELDS = tuple(field.name for field in fields(ShareRecord))


def share_store(database: RecordDatabase) -> ShareStore:
    """The shares in `database`."""
    return RecordTable(database, "shares", decode_share, encode_share)
