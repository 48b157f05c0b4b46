"""The queue's Lua scripts take named arguments: every call names each exactly once, and the names
cover exactly the ARGV slots the script's body reads."""

from __future__ import annotations

import re

import pytest

from sandbox.queue import lua
from sandbox.queue.script import Script

SCRIPTS = {name: value for name, value in vars(lua).items() if isinstance(value, Script)}


def test_every_script_is_named_here():
    assert {"SUBMIT", "TAKE", "RENEW", "EMIT", "FINISH", "ABORT", "HEARTBEAT"} <= set(SCRIPTS)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_the_names_cover_exactly_the_argv_slots_the_body_reads(name):
    script = SCRIPTS[name]
    body = script.body.removeprefix(lua.PRELUDE)
    slots = {int(n) for n in re.findall(r"ARGV\[(\d+)\]", body)}
    assert len(set(script.args)) == len(script.args)
    assert slots <= set(range(2, len(script.args) + 2)), (slots, script.args)
    assert max(slots) == len(script.args) + 1


def test_a_call_is_ordered_by_name_and_refuses_a_missing_or_unknown_argument():
    script = Script("return 1", ("run_id", "attempt"))
    assert script.argv("p:", {"attempt": 2, "run_id": "r"}) == ["p:", "r", 2]
    with pytest.raises(TypeError, match=r"missing \['attempt'\]"):
        script.argv("p:", {"run_id": "r"})
    with pytest.raises(TypeError, match=r"unknown \['atempt'\]"):
        script.argv("p:", {"run_id": "r", "attempt": 1, "atempt": 1})


def test_bind_passes_the_prefix_and_the_ordered_arguments():
    calls = []

    def register(body):
        return lambda keys, args: calls.append((body, keys, args)) or "ok"

    submit = lua.bind(register, lua.FLAG_CANCEL, "pg:")
    assert submit(run_id="abc") == "ok"
    assert calls == [(lua.FLAG_CANCEL.body, [], ["pg:", "abc"])]
