"""The store quotas on both databases (#28 point 5): the global budget counted from the database, content
already stored never charged, and the per-address byte budget, through the API on SQLite and PostgreSQL."""

from __future__ import annotations

from fastapi.testclient import TestClient

from server.app import create_app
from server.settings import Settings
from tests.api.fakes import FakeBackend
from tests.api.test_store_quotas import BIG, PROXY, assert_problem, big_source, lesson, share
from tests.scale.test_store_contract import kind, schema_url  # noqa: F401  # fixtures


def test_quotas_hold_on_either_database(kind, tmp_path, request):  # noqa: F811
    url = request.getfixturevalue("schema_url") if kind == "postgresql" else ""
    limits = {"store_saves_per_minute": 0, "store_address_bytes_per_hour": 3 * BIG, "store_bytes": 5 * BIG}
    settings = Settings(data_dir=tmp_path, slots=1, trusted_proxies=PROXY, database_url=url, **limits)
    with TestClient(create_app(settings, backend=FakeBackend()), client=(PROXY, 50000)) as client:
        same = big_source()
        assert [share(client, "6.6.6.6", same).status_code for _ in range(5)] == [201] + [200] * 4
        assert share(client, "6.6.6.6", big_source()).status_code == 201
        assert_problem(share(client, "6.6.6.6", big_source()), 429)  # the address's budget
        for i in range(2):  # each share is about 71 KiB as stored (JSON-escaped): 4 fit in 5 × 60 KiB
            assert share(client, f"192.0.2.{i}", big_source()).status_code == 201
        assert_problem(share(client, "192.0.2.9", big_source()), 507)  # the database's budget
        assert_problem(lesson(client, "192.0.2.9", steps=1), 507)
        assert share(client, "192.0.2.9", same).status_code == 200
