"""Measurements users bring back from a share's notebook ("Add a measurement"): the kernel's time on a
real TPU as the notebook's profiler trace measured it, stored beside the share and shown as
user-reported, never as the playground's own figure.

Each is a content-addressed record (the same line added twice is stored once) in the `measurements`
table with its share's id, in the SQLite file or PostgreSQL alike; the store quotas count their
bytes with the shares' and lessons' (`server.store.quota`).
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass

from server.store.sqlite import PROBES, IdCollisionError, RecordDatabase, Stored, canonical_json, content_id

MAX_PER_SHARE = 100  # a share keeps at most this many; the page lists the newest
LISTED = 20


@dataclass(frozen=True)
class Measurement:
    """One timing of a share's kernel on a TPU, as its notebook printed it (validated on the way in)."""

    share: str
    chip: str
    device_kind: str
    jax: str
    jaxlib: str
    kernel_sha256: str
    case: str
    verdict: str
    device_seconds: float
    wall_seconds: float | None
    method: str


class ShareFullError(Exception):
    """The share already keeps `MAX_PER_SHARE` measurements."""


def content(measurement: Measurement) -> str:
    return canonical_json(asdict(measurement))


def add(database: RecordDatabase, measurement: Measurement) -> tuple[Stored[Measurement], bool]:
    """Store `measurement` under its share: the stored one, and whether it is new."""
    text = content(measurement)
    for probe in range(PROBES):
        record_id = content_id(text, database.salt, probe)
        found = database.get("measurements", record_id)
        if found is not None:
            if found[0] == text:
                return Stored(record_id, measurement, found[1]), False
            continue
        if count(database, measurement.share) >= MAX_PER_SHARE:
            raise ShareFullError(f"this share already keeps {MAX_PER_SHARE} measurements; no more are taken")
        now = time.time()
        with database.transaction() as db:
            db.execute(
                "INSERT INTO measurements (id, share, created, record) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (id) DO NOTHING",
                (record_id, measurement.share, now, text),
            )
        return Stored(record_id, measurement, now), True
    raise IdCollisionError(f"no free id for this measurement after {PROBES} probes")


def count(database: RecordDatabase, share: str) -> int:
    return int(database.rows("SELECT COUNT(*) FROM measurements WHERE share = ?", (share,))[0][0])


def listed(database: RecordDatabase, share: str, limit: int = LISTED) -> list[Stored[Measurement]]:
    """The share's newest measurements, newest first."""
    rows = database.rows(
        "SELECT id, record, created FROM measurements WHERE share = ? ORDER BY created DESC, id LIMIT ?",
        (share, limit),
    )
    return [Stored(row[0], Measurement(**json.loads(row[1])), float(row[2])) for row in rows]
