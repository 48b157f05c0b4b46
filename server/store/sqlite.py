"""The database behind shares and lessons: content-addressed records, in one SQLite file by default
or in PostgreSQL (`PLAYGROUND_DATABASE_URL`, `server.store.postgres`); both behind `RecordDatabase`.

A record's id is the first 8 bytes of SHA-256 over a salt and the record's canonical JSON, in
base64url: 11 characters. Saving the same record twice gives the same id, so saving is idempotent
and links never multiply. The salt keeps ids unguessable from content (nobody can test whether some
text was shared); when no salt is configured one is generated once and kept in the database, so ids
stay stable across restarts. Shares and lessons use the same salt and derivation, each kind in its
own table.

SQLite (stdlib) in WAL mode with `synchronous=NORMAL`: a record acknowledged to the client survives
a crash of the server process (the WAL is in the OS's hands); only an OS crash or power loss can
roll back the last few commits. Calls block, so routes using a store are plain `def` (FastAPI
runs them in its thread pool) and every thread gets its own connection.

The schema is versioned (`PRAGMA user_version`); opening a file applies the migrations it lacks in
one transaction, so a database written by an older server keeps its records and their ids.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import re
import secrets
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

ID_PATTERN = re.compile(r"^[A-Za-z0-9_-]{11}$")
# Different records whose ids collide (1 in 2**64 per pair) get the next probe's id.
PROBES = 4
# The class tables, in SQL both databases take (SQLite reads `DOUBLE PRECISION` as REAL).
CLASS_TABLES: tuple[str, ...] = (
    "CREATE TABLE IF NOT EXISTS classes (id TEXT PRIMARY KEY, code TEXT NOT NULL UNIQUE, lesson TEXT NOT NULL, "
    "revision INTEGER NOT NULL, steps INTEGER NOT NULL, token_sha256 TEXT NOT NULL, created DOUBLE PRECISION NOT NULL)",
    "CREATE TABLE IF NOT EXISTS class_students (class_id TEXT NOT NULL, id TEXT NOT NULL, "
    "token_sha256 TEXT NOT NULL UNIQUE, name TEXT NOT NULL, created DOUBLE PRECISION NOT NULL, "
    "removed INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (class_id, id))",
    "CREATE TABLE IF NOT EXISTS class_progress (class_id TEXT NOT NULL, student_id TEXT NOT NULL, "
    "step INTEGER NOT NULL, status TEXT NOT NULL, headline TEXT NOT NULL, run_id TEXT NOT NULL, "
    "updated DOUBLE PRECISION NOT NULL, PRIMARY KEY (class_id, student_id, step))",
)
# Measurements users bring back from a share's notebook (server.store.measurements): content-addressed
# records like shares, listed per share.
MEASUREMENT_TABLES: tuple[str, ...] = (
    "CREATE TABLE IF NOT EXISTS measurements (id TEXT PRIMARY KEY, share TEXT NOT NULL, "
    "created DOUBLE PRECISION NOT NULL, record TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS measurements_by_share ON measurements (share, created)",
)
# Who added each measurement (a salted hash of the network address): one address's share of a share's
# measurements is capped, and a full share makes room by dropping the most prolific adder's oldest.
MEASUREMENT_ADDER_TABLES: tuple[str, ...] = (
    "CREATE TABLE IF NOT EXISTS measurement_adders (id TEXT PRIMARY KEY, share TEXT NOT NULL, adder TEXT NOT NULL)",
    "CREATE INDEX IF NOT EXISTS measurement_adders_by_share ON measurement_adders (share, adder)",
)
# Who started each class (a salted hash of the network address): the runs of every class one address
# started share one budget and one place in the queue's round robin.
CLASS_OWNER_TABLES: tuple[str, ...] = (
    "CREATE TABLE IF NOT EXISTS class_owners (class_id TEXT PRIMARY KEY, owner TEXT NOT NULL)",
)
# The classes of an owner, found from the owner: an owner's own runs count against its classes' budget.
CLASS_OWNER_INDEX: tuple[str, ...] = (
    "CREATE INDEX IF NOT EXISTS class_owners_by_owner ON class_owners (owner)",
)
# A class's steps as the teacher set them up (exercise, assignment with a deadline, challenge on a
# chip, its board hidden or not), and per student and step when the latest run was submitted (late
# or not) and the best correct kernel's time (the class board).
CLASS_STEP_TABLES: tuple[str, ...] = (
    "CREATE TABLE IF NOT EXISTS class_steps (class_id TEXT NOT NULL, step INTEGER NOT NULL, kind TEXT NOT NULL, "
    "deadline DOUBLE PRECISION, chip TEXT NOT NULL, board_hidden INTEGER NOT NULL DEFAULT 0, "
    "PRIMARY KEY (class_id, step))",
    "CREATE TABLE IF NOT EXISTS class_marks (class_id TEXT NOT NULL, student_id TEXT NOT NULL, "
    "step INTEGER NOT NULL, submitted DOUBLE PRECISION NOT NULL, best_seconds DOUBLE PRECISION, "
    "best_basis TEXT NOT NULL DEFAULT '', best_chip TEXT NOT NULL DEFAULT '', "
    "PRIMARY KEY (class_id, student_id, step))",
)
# Who may join a class (server.store.class_joins): the teacher's door (closed to new joins, students
# per address), and where each student joined from (salted digests of the address and the browser id)
# and when the teacher removed them.
CLASS_JOIN_TABLES: tuple[str, ...] = (
    "CREATE TABLE IF NOT EXISTS class_doors (class_id TEXT PRIMARY KEY, closed INTEGER NOT NULL DEFAULT 0, "
    "per_address INTEGER)",
    "CREATE TABLE IF NOT EXISTS class_joins (class_id TEXT NOT NULL, student_id TEXT NOT NULL, "
    "joiner TEXT NOT NULL, browser TEXT NOT NULL, removed_at DOUBLE PRECISION, "
    "PRIMARY KEY (class_id, student_id))",
    "CREATE INDEX IF NOT EXISTS class_joins_by_joiner ON class_joins (class_id, joiner)",
)
# Migration k brings a database from user_version k-1 to k: append steps, never edit one. Every
# statement is idempotent, because a server from before a step resets user_version when it opens
# the file (it sets its own version unconditionally) and the step then runs again.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        "CREATE TABLE IF NOT EXISTS shares (id TEXT PRIMARY KEY, created REAL NOT NULL, record TEXT NOT NULL)",
        "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    ),
    (
        "CREATE TABLE IF NOT EXISTS lessons (id TEXT PRIMARY KEY, created REAL NOT NULL, record TEXT NOT NULL)",
    ),
    # Lessons as documents (server.store.lessons): a stable id and an edit token's hash per lesson, and its
    # revisions in order, each naming its content in `lessons` (content-addressed, as before).
    (
        "CREATE TABLE IF NOT EXISTS lesson_heads (id TEXT PRIMARY KEY, token_sha256 TEXT NOT NULL, "
        "created REAL NOT NULL)",
        "CREATE TABLE IF NOT EXISTS lesson_revisions (lesson TEXT NOT NULL, number INTEGER NOT NULL, "
        "record_id TEXT NOT NULL, created REAL NOT NULL, PRIMARY KEY (lesson, number))",
    ),
    # Class sessions (server.store.classes): a class per lesson revision, its students (tokens kept as
    # hashes), and each student's latest status per step.
    CLASS_TABLES,
    MEASUREMENT_TABLES,
    CLASS_STEP_TABLES,
    MEASUREMENT_ADDER_TABLES,
    CLASS_OWNER_TABLES,
    CLASS_OWNER_INDEX,
    CLASS_JOIN_TABLES,
)
SCHEMA_VERSION = len(MIGRATIONS)
TABLES = frozenset({"shares", "lessons", "measurements"})
# The file keeps the name it had when it held shares only, so existing deployments find it.
FILE_NAME = "shares.sqlite3"


class IdCollisionError(Exception):
    """Every probe id for a record is taken by a different record (never seen in practice)."""


class SchemaTooNewError(Exception):
    """The database was written by a newer server; this one would not understand all of it."""


@dataclass(frozen=True)
class Stored[R]:
    """A record as stored: its id and when it was first saved (seconds since the epoch)."""

    id: str
    record: R
    created: float


class RecordDatabase(Protocol):
    """What shares and lessons need of a database (SQLite `Database`, `store_pg.PostgresDatabase`)."""

    salt: str

    def put(self, table: str, content: str) -> tuple[str, float, bool]:
        """Store `content` in `table`: its id, when it was first stored, and whether that was now."""
        ...

    def get(self, table: str, record_id: str) -> tuple[str, float] | None: ...

    def rows(self, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """The rows one read-only statement returns (`?` placeholders, in either database)."""
        ...

    def transaction(self) -> contextlib.AbstractContextManager[Statements]:
        """One write transaction, serialised with every other one of this kind (SQLite's
        `BEGIN IMMEDIATE`, a PostgreSQL advisory lock): what lesson revisions need."""
        ...

    def close(self) -> None: ...


class Statements(Protocol):
    """A connection inside `RecordDatabase.transaction()`: statements with `?` placeholders."""

    def execute(self, query: str, params: tuple[Any, ...] = ()) -> Any: ...


class RecordStore[R](Protocol):
    def put(self, record: R) -> tuple[Stored[R], bool]:
        """Store `record`; the stored record, and whether it is new (False: it was already there)."""
        ...

    def get(self, record_id: str) -> Stored[R] | None: ...


def canonical_json(data: dict[str, Any]) -> str:
    """One text per record: sorted keys, no whitespace, no NaN (so equal records hash equally)."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def content_id(content: str, salt: str, probe: int = 0) -> str:
    text = f"{salt}\n{content}" if probe == 0 else f"{salt}\n{content}\n{probe}"
    digest = hashlib.sha256(text.encode()).digest()
    return base64.urlsafe_b64encode(digest[:8]).rstrip(b"=").decode()


class Database:
    """One SQLite file of content-addressed tables; one connection per thread, opened on first use."""

    def __init__(self, path: Path, salt: str = "") -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        try:
            self._migrate()
            self.salt = salt or self._stored_salt()
        except BaseException:
            self.close()
            raise

    def put(self, table: str, content: str) -> tuple[str, float, bool]:
        """Store `content` in `table`: its id, when it was first stored, and whether that was now."""
        db = self._db()
        for probe in range(PROBES):
            candidate = content_id(content, self.salt, probe)
            now = time.time()
            inserted = db.execute(
                f"INSERT OR IGNORE INTO {known_table(table)} (id, created, record) VALUES (?, ?, ?)",
                (candidate, now, content),
            ).rowcount
            if inserted:
                return candidate, now, True
            row = self.get(table, candidate)
            if row is not None and row[0] == content:
                return candidate, row[1], False
        raise IdCollisionError(f"no free id in {table} for this record after {PROBES} probes")

    def get(self, table: str, record_id: str) -> tuple[str, float] | None:
        """The content stored under `record_id` in `table` and when it was stored, or None."""
        if not ID_PATTERN.match(record_id):
            return None
        query = f"SELECT record, created FROM {known_table(table)} WHERE id = ?"
        row = self._db().execute(query, (record_id,)).fetchone()
        return None if row is None else (row[0], row[1])

    def rows(self, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """The rows one read-only statement returns (for stores that keep their own tables here)."""
        return [tuple(row) for row in self._db().execute(query, params).fetchall()]

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """This thread's connection inside one write transaction (committed unless the block raises)."""
        db = self._db()
        db.execute("BEGIN IMMEDIATE")
        try:
            yield db
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

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
            # Autocommit (isolation_level=None): every statement is its own transaction. Each
            # connection serves its own thread; only `close` reaches across (hence no same-thread check).
            connection = sqlite3.connect(
                self.path, timeout=10.0, isolation_level=None, check_same_thread=False
            )
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=NORMAL")
            self._local.connection = connection
            with self._lock:
                self._connections.append(connection)
        return connection

    def _migrate(self) -> None:
        db = self._db()
        # IMMEDIATE: two servers opening one file at once apply each step once, in order.
        db.execute("BEGIN IMMEDIATE")
        try:
            found = int(db.execute("PRAGMA user_version").fetchone()[0])
            if found > SCHEMA_VERSION:
                raise SchemaTooNewError(
                    f"{self.path} has schema version {found}; this server knows versions up to "
                    f"{SCHEMA_VERSION}: upgrade the server, or point PLAYGROUND_DATA_DIR elsewhere"
                )
            for step in MIGRATIONS[found:]:
                for statement in step:
                    db.execute(statement)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")

    def _stored_salt(self) -> str:
        db = self._db()
        db.execute("INSERT OR IGNORE INTO meta (key, value) VALUES ('salt', ?)", (secrets.token_hex(16),))
        return str(db.execute("SELECT value FROM meta WHERE key = 'salt'").fetchone()[0])


def known_table(table: str) -> str:
    # Table names are spliced into SQL, so only our own are allowed.
    if table not in TABLES:
        raise ValueError(f"no table {table!r} in the database")
    return table


class RecordTable[R: DataclassInstance]:
    """Records of one kind (frozen dataclasses) in one table of a `Database`; a `RecordStore`.

    `encode` gives the JSON a record is stored (and identified) by; a field added later leaves it
    out while unset, so records saved before it keep their ids.
    """

    def __init__(
        self,
        database: RecordDatabase,
        table: str,
        decode: Callable[[dict[str, Any]], R],
        encode: Callable[[R], dict[str, Any]] = asdict,
    ) -> None:
        self.database, self.table, self.decode, self.encode = database, known_table(table), decode, encode

    def put(self, record: R) -> tuple[Stored[R], bool]:
        record_id, created, new = self.database.put(self.table, canonical_json(self.encode(record)))
        return Stored(record_id, record, created), new

    def get(self, record_id: str) -> Stored[R] | None:
        row = self.database.get(self.table, record_id)
        if row is None:
            return None
        content, created = row
        return Stored(record_id, self.decode(json.loads(content)), created)


def open_database(data_dir: Path, salt: str = "") -> Database:
    """The SQLite database under the data directory (`server.store.choice` chooses PostgreSQL instead)."""
    return Database(data_dir / FILE_NAME, salt)
