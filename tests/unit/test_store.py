"""Content-addressed ids: short, salted, stable; a taken id sends a different record to the next probe."""

import re

import pytest

from server.store.sqlite import ID_PATTERN, canonical_json, content_id, open_database


def test_ids_are_11_url_safe_characters_that_depend_on_the_salt():
    one = content_id('{"source":"x"}', "salt-a")
    assert re.fullmatch(r"[A-Za-z0-9_-]{11}", one) and ID_PATTERN.match(one)
    assert one == content_id('{"source":"x"}', "salt-a")
    assert one != content_id('{"source":"x"}', "salt-b") != content_id('{"source":"y"}', "salt-a")
    assert one != content_id('{"source":"x"}', "salt-a", probe=1)


def test_canonical_json_ignores_key_order_and_refuses_nan():
    assert canonical_json({"b": 1, "a": "é"}) == canonical_json({"a": "é", "b": 1}) == '{"a":"é","b":1}'
    with pytest.raises(ValueError):
        canonical_json({"a": float("nan")})


def test_a_taken_id_moves_a_different_record_to_the_next_probe(tmp_path):
    database = open_database(tmp_path, salt="s")
    try:
        taken = content_id("second", "s")
        database._db().execute("INSERT INTO shares (id, created, record) VALUES (?, 0, 'first')", (taken,))
        record_id, _, new = database.put("shares", "second")
        assert new and record_id == content_id("second", "s", probe=1)
        again_id, _, again_new = database.put("shares", "second")
        assert (again_id, again_new) == (record_id, False)
        assert database.get("shares", taken) == ("first", 0.0)
    finally:
        database.close()


def test_only_known_tables_are_reachable(tmp_path):
    database = open_database(tmp_path, salt="s")
    try:
        with pytest.raises(ValueError, match="no table"):
            database.get("shares; DROP TABLE shares", "AAAAAAAAAAA")
        assert database.get("lessons", "not an id") is None
    finally:
        database.close()
