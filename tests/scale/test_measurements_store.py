"""Measurements brought back from share notebooks, in the SQLite file and in PostgreSQL alike: stored
once per content, listed per share newest first, capped per share, counted by the store quotas; a
database of the schema before them gains the table when a newer server opens it; and the HTTP API
takes a line and lists it from PostgreSQL."""

from __future__ import annotations

import sqlite3

import psycopg
import pytest
from fastapi.testclient import TestClient

from server.app import create_app
from server.settings import Settings
from server.store import measurements, postgres, sqlite
from server.store.measurements import Measurement
from server.store.quota import StoreQuota
from server.store.sqlite import FILE_NAME, open_database
from tests.api.fakes import FakeBackend
from tests.api.test_notebooks import line
from tests.scale.test_store_contract import database, kind, schema_url  # noqa: F401  (fixtures)

ONE = Measurement(
    "share000001",
    "v5e",
    "TPU v5 lite",
    "0.12.0.1",
    "0.12.0.1",
    "0" * 64,
    "f32",
    "passed",
    0.00192,
    0.003,
    "profiler",
)


def test_a_measurement_is_stored_once_and_listed_with_its_share(database):  # noqa: F811
    first, new = measurements.add(database, ONE)
    again, new_again = measurements.add(database, ONE)
    assert new and not new_again and (again.id, again.created) == (first.id, first.created)
    later = measurements.add(database, Measurement(**{**ONE.__dict__, "device_seconds": 0.002}))[0]
    other = Measurement(**{**ONE.__dict__, "share": "share000002"})
    measurements.add(database, other)
    assert [m.id for m in measurements.listed(database, "share000001")] == [later.id, first.id]
    assert measurements.listed(database, "share000001")[1].record == ONE
    assert measurements.count(database, "share000002") == 1
    assert StoreQuota(Settings(store_bytes=1)).total(database) == sum(
        len(measurements.content(m)) for m in (ONE, later.record, other)
    )


def test_a_share_keeps_at_most_its_cap(database, monkeypatch):  # noqa: F811
    monkeypatch.setattr(measurements, "MAX_PER_SHARE", 2)
    for seconds in (0.1, 0.2):
        measurements.add(database, Measurement(**{**ONE.__dict__, "device_seconds": seconds}))
    with pytest.raises(measurements.ShareFullError, match="already keeps 2"):
        measurements.add(database, Measurement(**{**ONE.__dict__, "device_seconds": 0.3}))
    assert measurements.add(database, Measurement(**{**ONE.__dict__, "device_seconds": 0.1}))[1] is False


def test_made_up_lines_never_lock_a_share(database, monkeypatch):  # noqa: F811
    # Issue 41: 100 made-up lines from one address locked a share; the real one was refused.
    monkeypatch.setattr(measurements, "MAX_PER_SHARE", 4)
    monkeypatch.setattr(measurements, "PER_ADDER", 2)
    made_up = iter(range(1, 1000))

    def add(adder: str) -> tuple[str, bool]:
        made = Measurement(**{**ONE.__dict__, "device_seconds": next(made_up) * 1e-4})
        stored, new = measurements.add(database, made, adder)
        return stored.id, new

    flood = [add(who)[0] for who in ("a", "a", "b", "b")]
    with pytest.raises(measurements.AdderFullError, match="already added 2"):
        add("a")
    owners = [add("owner")[0], add("owner")[0]]  # room made from the flooders' oldest
    kept = {m.id for m in measurements.listed(database, ONE.share)}
    assert set(owners) <= kept and len(kept) == 4 and flood[0] not in kept and flood[2] not in kept
    add("c")  # a newcomer takes the oldest place of whoever keeps the most (the owner, with 2)
    kept = {m.id for m in measurements.listed(database, ONE.share)}
    assert owners[1] in kept and owners[0] not in kept and measurements.count(database, ONE.share) == 4
    with pytest.raises(measurements.ShareFullError, match="already keeps 4"):
        add("owner")  # everyone keeps one: nobody's is dropped for someone who keeps as many


def test_an_older_sqlite_file_gains_the_table(tmp_path):
    with sqlite3.connect(tmp_path / FILE_NAME) as db:
        for step in sqlite.MIGRATIONS[:4]:
            for statement in step:
                db.execute(statement)
        db.execute("PRAGMA user_version = 4")
    opened = open_database(tmp_path)
    assert measurements.add(opened, ONE)[1]
    opened.close()


def test_an_older_postgres_schema_gains_the_table(schema_url):  # noqa: F811
    with psycopg.connect(schema_url, autocommit=True) as db:
        db.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
        db.execute("INSERT INTO schema_version (version) VALUES (4)")
        for step in postgres.MIGRATIONS[:4]:
            for statement in step:
                db.execute(statement)  # type: ignore[arg-type]
    opened = postgres.PostgresDatabase(schema_url)
    assert measurements.add(opened, ONE)[1] and measurements.count(opened, ONE.share) == 1
    opened.close()


def test_the_api_takes_a_measurement_into_postgres(schema_url, tmp_path):  # noqa: F811
    source = "def matmul(x, y):\n    return x @ y\n"
    settings = Settings(data_dir=tmp_path, slots=1, database_url=schema_url)
    with TestClient(create_app(settings, backend=FakeBackend())) as client:
        share = client.post(
            "/api/shares", json={"source": source, "entry": "tiled_matmul", "chip": "v5e"}
        ).json()["id"]
        measured = line(share, source, wall_seconds=None)
        added = client.post(f"/api/shares/{share}/measurements", json={"line": measured})
        assert added.status_code == 201, added.text
        listed = client.get(f"/api/shares/{share}/measurements").json()["measurements"]
    assert [m["text"] for m in listed] == ["measured on a TPU v5e (user-reported): 1.92 ms"]
    assert not (tmp_path / FILE_NAME).exists()
