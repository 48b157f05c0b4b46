"""A class owner is kept as a salted digest of its network, then of its address (`server.clients.owner_key`),
so the queue counts a class group's network without the store keeping an address; classes kept before
owner keys named their network still find their owner."""

from __future__ import annotations

import hashlib

from server.clients import network_of
from server.store.classes import ClassStore
from server.store.sqlite import open_database


def test_an_owners_classes_are_found_by_its_address_and_name_its_network(tmp_path):
    store = ClassStore(open_database(tmp_path, salt="s"))
    room, _ = store.create("lesson", 1, 1, owner="192.0.2.9")
    kept = store.owner_of(room.id)
    assert store.owner_key_if_teacher("192.0.2.9") == kept
    assert store.owner_key_if_teacher("192.0.2.10") is None  # a neighbour started nothing
    neighbour, _ = store.create("lesson", 1, 1, owner="192.0.2.10")
    stranger, _ = store.create("lesson", 1, 1, owner="198.51.100.1")
    networks = [network_of(f"class:{store.owner_of(r.id)}") for r in (room, neighbour, stranger)]
    assert networks[0] == networks[1] != networks[2]
    assert "192.0.2" not in kept


def test_a_class_kept_with_the_older_key_still_finds_its_owner(tmp_path):
    database = open_database(tmp_path, salt="s")
    store = ClassStore(database)
    room, _ = store.create("lesson", 1, 1)
    older = hashlib.sha256(b"s\nclass owner\n203.0.113.4").hexdigest()[:24]
    with database.transaction() as db:
        db.execute("UPDATE class_owners SET owner = ? WHERE class_id = ?", (older, room.id))
    assert store.owner_key_if_teacher("203.0.113.4") == older == store.owner_of(room.id)
