"""Shares and lessons in PostgreSQL (`PLAYGROUND_DATABASE_URL`): the same content-addressed records
as the SQLite file (`server.store.sqlite`: same ids for the same salt and record), for several web servers.

psycopg 3 with a connection pool; every statement autocommits, as in SQLite. The schema is
versioned in `schema_version`; opening applies the migrations it lacks in one transaction, under an
advisory lock, so web servers starting together apply each step once, in order.
"""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import Iterator
from typing import Any

import psycopg
from psycopg_pool import ConnectionPool

from server.store.sqlite import (
    CLASS_JOIN_TABLES,
    CLASS_OWNER_INDEX,
    CLASS_OWNER_TABLES,
    CLASS_STEP_TABLES,
    CLASS_TABLES,
    ID_PATTERN,
    MEASUREMENT_ADDER_TABLES,
    MEASUREMENT_TABLES,
    PROBES,
    IdCollisionError,
    SchemaTooNewError,
    content_id,
    known_table,
)

# Migration k brings the schema from version k-1 to k: append steps, never edit one.
MIGRATIONS: tuple[tuple[str, ...], ...] = (
    (
        "CREATE TABLE shares (id TEXT PRIMARY KEY, created DOUBLE PRECISION NOT NULL, record TEXT NOT NULL)",
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    ),
    ("CREATE TABLE lessons (id TEXT PRIMARY KEY, created DOUBLE PRECISION NOT NULL, record TEXT NOT NULL)",),
    # Lessons as documents (server.store.lessons), as in the SQLite file: heads with the edit token's hash,
    # revisions in order, each naming its content in `lessons`.
    (
        "CREATE TABLE lesson_heads (id TEXT PRIMARY KEY, token_sha256 TEXT NOT NULL, "
        "created DOUBLE PRECISION NOT NULL)",
        "CREATE TABLE lesson_revisions (lesson TEXT NOT NULL, number INTEGER NOT NULL, "
        "record_id TEXT NOT NULL, created DOUBLE PRECISION NOT NULL, PRIMARY KEY (lesson, number))",
    ),
    CLASS_TABLES,  # class sessions, the same tables as in the SQLite file
    MEASUREMENT_TABLES,  # measurements brought back from share notebooks, as in the SQLite file
    CLASS_STEP_TABLES,  # class steps' setup and marks (deadlines, the class board)
    MEASUREMENT_ADDER_TABLES,  # who added each measurement (a salted hash of the address)
    CLASS_OWNER_TABLES,  # who started each class (a salted hash of the address)
    CLASS_OWNER_INDEX,  # an owner's classes, found from the owner
    CLASS_JOIN_TABLES,  # who may join a class: the teacher's door, where each student joined from
)
SCHEMA_VERSION = len(MIGRATIONS)
# pg_advisory_xact_lock key: "playground migrations".
MIGRATION_LOCK = 0x706C6179
# pg_advisory_xact_lock key of `transaction()`: writers of lesson revisions take turns, as SQLite's
# `BEGIN IMMEDIATE` makes them (two revisions of one lesson must not both become number n + 1).
WRITE_LOCK = 0x706C6177


class PostgresDatabase:
    """Content-addressed tables in PostgreSQL; a `RecordDatabase`. Calls block (routes are plain `def`)."""

    def __init__(self, url: str, salt: str = "", *, max_connections: int = 10) -> None:
        self.url = url
        self.pool = ConnectionPool(
            url, min_size=1, max_size=max_connections, kwargs={"autocommit": True}, open=False
        )
        self.pool.open(wait=True, timeout=10.0)
        try:
            self._migrate()
            self.salt = salt or self._stored_salt()
        except BaseException:
            self.close()
            raise

    def put(self, table: str, content: str) -> tuple[str, float, bool]:
        table = known_table(table)
        for probe in range(PROBES):
            candidate = content_id(content, self.salt, probe)
            now = time.time()
            with self.pool.connection() as db:
                inserted = db.execute(
                    f"INSERT INTO {table} (id, created, record) VALUES (%s, %s, %s) ON CONFLICT (id) DO NOTHING",
                    (candidate, now, content),
                ).rowcount
            if inserted:
                return candidate, now, True
            row = self.get(table, candidate)
            if row is not None and row[0] == content:
                return candidate, row[1], False
        raise IdCollisionError(f"no free id in {table} for this record after {PROBES} probes")

    def get(self, table: str, record_id: str) -> tuple[str, float] | None:
        if not ID_PATTERN.match(record_id):
            return None
        with self.pool.connection() as db:
            row = db.execute(
                f"SELECT record, created FROM {known_table(table)} WHERE id = %s", (record_id,)
            ).fetchone()
        return None if row is None else (row[0], row[1])

    def rows(self, query: str, params: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        if any(isinstance(p, str) and "\x00" in p for p in params):
            return []  # no text stored here holds a NUL (PostgreSQL refuses one): SQLite finds no row either
        with self.pool.connection() as db:
            return [tuple(row) for row in db.execute(_placeholders(query), params).fetchall()]

    @contextlib.contextmanager
    def transaction(self) -> Iterator[_Statements]:
        with self.pool.connection() as db, db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            yield _Statements(db)

    def close(self) -> None:
        self.pool.close()

    def _migrate(self) -> None:
        with self.pool.connection() as db, db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            db.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
            row = db.execute("SELECT version FROM schema_version").fetchone()
            if row is None:
                db.execute("INSERT INTO schema_version (version) VALUES (0)")
            found = 0 if row is None else int(row[0])
            if found > SCHEMA_VERSION:
                raise SchemaTooNewError(
                    f"the database has schema version {found}; this server knows versions up to "
                    f"{SCHEMA_VERSION}: upgrade the server, or point PLAYGROUND_DATABASE_URL elsewhere"
                )
            for step in MIGRATIONS[found:]:
                for statement in step:
                    db.execute(statement)  # type: ignore[arg-type]  # our own constants
            db.execute("UPDATE schema_version SET version = %s", (SCHEMA_VERSION,))

    def _stored_salt(self) -> str:
        with self.pool.connection() as db:
            db.execute(
                "INSERT INTO meta (key, value) VALUES ('salt', %s) ON CONFLICT (key) DO NOTHING",
                (secrets.token_hex(16),),
            )
            row = db.execute("SELECT value FROM meta WHERE key = 'salt'").fetchone()
        assert row is not None
        return str(row[0])


class _Statements:
    """A connection in a transaction that takes the SQLite file's `?` placeholders."""

    def __init__(self, db: psycopg.Connection[Any]) -> None:
        self.db = db

    def execute(self, query: str, params: tuple[Any, ...] = ()) -> psycopg.Cursor[Any]:
        return self.db.execute(_placeholders(query), params)


def _placeholders(query: str) -> Any:
    """`?` → `%s`: the stores' statements are our own constants with no `?` or `%` in literals."""
    return query.replace("?", "%s")
