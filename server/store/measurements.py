"""Measurements users bring back from a share's notebook ("Add a measurement"): the kernel's time on a
real TPU as the notebook's profiler trace measured it, stored beside the share and shown as
user-reported, never as the playground's own figure.

Each is a content-addressed record (the same line added twice is stored once) in the `measurements`
table with its share's id, in the SQLite file or PostgreSQL alike; the store quotas count their
bytes with the shares' and lessons' (`server.store.quota`).

Made-up lines must not lock a share (issue 41): `measurement_adders` keeps who added each (a salted
hash of the network address); one adder keeps at most `PER_ADDER` on a share, and a full share makes
room for an adder with fewer by dropping the oldest of the adder with the most. So a share's owner
(or anyone measuring it for real) always gets theirs in while flooders crowd only each other out.
"""

from __future__ import annotations

import collections
import hashlib
import json
import time
from dataclasses import asdict, dataclass

from server.store.sqlite import (
    PROBES,
    IdCollisionError,
    RecordDatabase,
    Statements,
    Stored,
    canonical_json,
    content_id,
)

MAX_PER_SHARE = 100  # a share keeps at most this many; listed a page at a time, fairly by adder
PER_ADDER = 10  # of which one network address keeps at most this many
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
    """The share already keeps `MAX_PER_SHARE` measurements, none of them to give up for this adder."""


class AdderFullError(Exception):
    """This adder already keeps `PER_ADDER` measurements on the share."""


def adder_of(database: RecordDatabase, address: str) -> str:
    """Who adds, as stored: a salted hash of the network address (never the address itself)."""
    return hashlib.sha256(f"{database.salt}\nadder\n{address}".encode()).hexdigest()[:24]


def content(measurement: Measurement) -> str:
    return canonical_json(asdict(measurement))


def add(
    database: RecordDatabase, measurement: Measurement, adder: str = ""
) -> tuple[Stored[Measurement], bool]:
    """Store `measurement` under its share for `adder` (`adder_of`): the stored one, and whether it
    is new. `AdderFullError` past `PER_ADDER`; `ShareFullError` when the share is full and only
    adders with as many as this one's could make room."""
    text = content(measurement)
    for probe in range(PROBES):
        record_id = content_id(text, database.salt, probe)
        found = database.get("measurements", record_id)
        if found is not None:
            if found[0] == text:
                return Stored(record_id, measurement, found[1]), False
            continue
        now = time.time()
        with database.transaction() as db:
            by_adder = _by_adder(db, measurement.share)
            if len(by_adder[adder]) >= PER_ADDER:
                raise AdderFullError(
                    f"this network address already added {PER_ADDER} measurements to this share; "
                    "no more are taken from it"
                )
            if sum(map(len, by_adder.values())) >= MAX_PER_SHARE:
                _make_room(db, by_adder, adder)
            db.execute(
                "INSERT INTO measurements (id, share, created, record) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (id) DO NOTHING",
                (record_id, measurement.share, now, text),
            )
            db.execute(
                "INSERT INTO measurement_adders (id, share, adder) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING",
                (record_id, measurement.share, adder),
            )
        return Stored(record_id, measurement, now), True
    raise IdCollisionError(f"no free id for this measurement after {PROBES} probes")


def _by_adder(db: Statements, share: str) -> collections.defaultdict[str, list[str]]:
    """The share's measurement ids per adder, oldest first (those kept before adders were: "")."""
    rows = db.execute(
        "SELECT m.id, COALESCE(a.adder, '') FROM measurements m LEFT JOIN measurement_adders a ON a.id = m.id "
        "WHERE m.share = ? ORDER BY m.created, m.id",
        (share,),
    ).fetchall()
    found: collections.defaultdict[str, list[str]] = collections.defaultdict(list)
    for record_id, who in rows:
        found[who].append(record_id)
    return found


def _make_room(db: Statements, by_adder: dict[str, list[str]], adder: str) -> None:
    """Drop the oldest measurement of the adder who keeps the most, if they keep more than `adder`."""
    most = max(by_adder, key=lambda who: (len(by_adder[who]), who != adder))
    if len(by_adder[most]) <= len(by_adder[adder]):
        raise ShareFullError(f"this share already keeps {MAX_PER_SHARE} measurements; no more are taken")
    dropped = by_adder[most][0]
    db.execute("DELETE FROM measurements WHERE id = ?", (dropped,))
    db.execute("DELETE FROM measurement_adders WHERE id = ?", (dropped,))


def count(database: RecordDatabase, share: str) -> int:
    return int(database.rows("SELECT COUNT(*) FROM measurements WHERE share = ?", (share,))[0][0])


def listed(
    database: RecordDatabase, share: str, limit: int = LISTED, offset: int = 0
) -> list[Stored[Measurement]]:
    """A page of the share's measurements: each adder's newest first, then each one's second newest,
    and so on (newest first within a round). Listed newest first alone, two addresses of ten made-up
    lines each filled the page and hid every real one (issue 41)."""
    rows = database.rows(
        "SELECT m.id, m.record, m.created, COALESCE(a.adder, '') FROM measurements m "
        "LEFT JOIN measurement_adders a ON a.id = m.id WHERE m.share = ? ORDER BY m.created DESC, m.id",
        (share,),
    )
    seen: collections.Counter[str] = collections.Counter()
    ranked = []
    for row in rows:
        ranked.append((seen[row[3]], row))
        seen[row[3]] += 1
    ranked.sort(key=lambda item: item[0])  # stable: newest first within each round
    page = [row for _, row in ranked[offset : offset + limit]]
    return [Stored(row[0], Measurement(**json.loads(row[1])), float(row[2])) for row in page]
