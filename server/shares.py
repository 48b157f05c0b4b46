"""The share store: content-addressed snapshots of an editor state (source, entry, chip, options).

A share's id is the first 8 bytes of SHA-256 over a salt and the canonical JSON of its record,
in base64url: 11 characters. Saving the same state twice gives the same id, so saving is
idempotent and links never multiply. The salt keeps ids unguessable from content (nobody can test
whether some text was shared); when no salt is configured one is generated once and kept in the
database, so ids stay stable across restarts.

SQLite (stdlib) in WAL mode with `synchronous=NORMAL`: a share acknowledged to the client survives
a crash of the server process (the WAL is in the OS's hands); only an OS crash or power loss can
roll back the last few commits. Calls block, so routes using the store are plain `def` (FastAPI
runs them in its thread pool) and every thread gets its own connection.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import secrets
import sqlite3
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Protocol

ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{11}$")
SCHEMA_VERSION = 1
# Different records whose ids collide (1 in 2**64 per pair) get the next probe's id.
PROBES = 4


class ShareCollisionError(Exception):
    """Every probe id for a record is taken by a different record (never seen in practice)."""


@dataclass(frozen=True)
class ShareRecord:
    """What a share captures; the id is derived from exactly these fields."""

    source: str
    entry: str | None
    chip: str
    options: dict[str, Any]
    versions: dict[str, str | None]


@dataclass(frozen=True)
class Share:
    id: str
    record: ShareRecord
    created: float


class ShareStore(Protocol):
    def put(self, record: ShareRecord) -> tuple[Share, bool]:
        """Store `record`; the share, and whether it is new (False: it was already there)."""
        ...

    def get(self, share_id: str) -> Share | None: ...

    def close(self) -> None: ...


def canonical_json(record: ShareRecord) -> str:
    """One text per record: sorted keys, no whitespace, no NaN (so equal records hash equally)."""
    return json.dumps(
        asdict(record), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def share_id(content: str, salt: str, probe: int = 0) -> str:
    text = f"{salt}\n{content}" if probe == 0 else f"{salt}\n{content}\n{probe}"
    digest = hashlib.sha256(text.encode()).digest()
    return base64.urlsafe_b64encode(digest[:8]).rstrip(b"=").decode()


class SqliteShareStore:
    """Shares in one SQLite file; one connection per thread, opened on first use."""

    def __init__(self, path: Path, salt: str = "") -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        self._migrate()
        self.salt = salt or self._stored_salt()

    def put(self, record: ShareRecord) -> tuple[Share, bool]:
        content = canonical_json(record)
        db = self._db()
        for probe in range(PROBES):
            candidate = share_id(content, self.salt, probe)
            now = time.time()
            inserted = db.execute(
                "INSERT OR IGNORE INTO shares (id, created, record) VALUES (?, ?, ?)",
                (candidate, now, content),
            ).rowcount
            if inserted:
                return Share(candidate, record, now), True
            row = db.execute("SELECT record, created FROM shares WHERE id = ?", (candidate,)).fetchone()
            if row is not None and row[0] == content:
                return Share(candidate, record, row[1]), False
        raise ShareCollisionError(f"no free id for this record after {PROBES} probes")

    def get(self, share_id: str) -> Share | None:
        if not ID_PATTERN.match(share_id):
            return None
        row = self._db().execute("SELECT record, created FROM shares WHERE id = ?", (share_id,)).fetchone()
        if row is None:
            return None
        return Share(share_id, ShareRecord(**json.loads(row[0])), row[1])

    def close(self) -> None:
        with self._lock:
            for connection in self._connections:
                connection.close()
            self._connections.clear()
        self._local = threading.local()

    # -- internals -----------------------------------------------------------------------------

    def _db(self) -> sqlite3.Connection:
        connection: sqlite3.Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            # Autocommit (isolation_level=None): every statement is its own transaction.
            connection = sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            self._local.connection = connection
            with self._lock:
                self._connections.append(connection)
        return connection

    def _migrate(self) -> None:
        db = self._db()
        db.execute(
            "CREATE TABLE IF NOT EXISTS shares (id TEXT PRIMARY KEY, created REAL NOT NULL, record TEXT NOT NULL)"
        )
        db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _stored_salt(self) -> str:
        db = self._db()
        db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('salt', ?)", (secrets.token_hex(16),))
        return str(db.execute("SELECT value FROM meta WHERE key = 'salt'").fetchone()[0])


def open_store(data_dir: Path, salt: str = "") -> ShareStore:
    """The configured share store (SQLite under the data directory; the only backend so far)."""
    return SqliteShareStore(data_dir / "shares.sqlite3", salt)
