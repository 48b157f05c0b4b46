"""Which database holds shares and lessons: PostgreSQL when `PLAYGROUND_DATABASE_URL` is set (several
web servers), else the SQLite file under the data directory (the embedded default)."""

from __future__ import annotations

from server.settings import Settings
from server.store.sqlite import RecordDatabase, open_database


def open_configured(settings: Settings) -> RecordDatabase:
    if settings.database_url:
        from server.store.postgres import PostgresDatabase  # imports psycopg only when it is used

        return PostgresDatabase(settings.database_url, settings.share_salt)
    return open_database(settings.data_dir, settings.share_salt)
