"""A Lua script of the queue with named arguments, and its binding to a Redis client.

Every script takes the key prefix as ARGV[1] and its own arguments after it; naming them here (and
checking every call names each exactly once) keeps a call site from depending on their order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Script:
    """A script and the names of its ARGV[2:] in order (ARGV[1] is always the key prefix)."""

    body: str
    args: tuple[str, ...]

    def argv(self, prefix: str, values: dict[str, object]) -> list[object]:
        """The ARGV list for `values`, which must name every argument exactly once."""
        if set(values) != set(self.args):
            missing, extra = set(self.args) - set(values), set(values) - set(self.args)
            raise TypeError(f"script arguments: missing {sorted(missing)}, unknown {sorted(extra)}")
        return [prefix, *(values[name] for name in self.args)]


def bind(register: Callable[[str], Any], script: Script, prefix: str) -> Callable[..., Any]:
    """The script registered with a (sync or async) Redis client, called with keyword arguments:
    `submit(run_id=…, pool=…, …)`, so no call site depends on the order of sixteen positions."""
    registered = register(script.body)

    def call(**values: object) -> Any:
        return registered(keys=[], args=script.argv(prefix, values))

    return call
