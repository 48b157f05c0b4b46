"""The user's line of the equation a TPU lowering error is about, when the error itself carries none.

Mosaic's lowering raises "Unimplemented primitive in Pallas TPU lowering for tc: cumsum" without the
call site (no user frame in its traceback, no MLIR location in the text). The traced jaxpr still
holds every equation with its source info: the first equation of that primitive, in the kernels'
bodies and everything nested in them, is the one the lowering stopped at (the kernel bodies are
lowered in the order they are traced).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from sandbox.harness import usercode
from sandbox.harness.monitor.source import source_info_location

_UNIMPLEMENTED = re.compile(r"Unimplemented primitive in Pallas TPU lowering for \w+: (?P<name>\w+)")


def line_of(exc: BaseException, jaxpr: Any) -> int | None:
    match = _UNIMPLEMENTED.search(str(exc))
    if match is None or jaxpr is None:
        return None
    for eqn, line in _eqns(getattr(jaxpr, "jaxpr", jaxpr), None):
        if eqn.primitive.name == match["name"] and line is not None:
            return line
    return None


def _eqns(jaxpr: Any, outer: int | None) -> Iterator[tuple[Any, int | None]]:
    """Every equation, nested ones too, with its user line (an equation inside a jitted library
    function, such as `jnp.cumsum`'s, has none of its own: the call's is the user's)."""
    for eqn in getattr(jaxpr, "eqns", ()):
        found = source_info_location(eqn.source_info, (usercode.USER_FILE,))
        line = found.line if found is not None else outer
        yield eqn, line
        for value in eqn.params.values():
            for inner in value if isinstance(value, (tuple, list)) else (value,):
                inner = getattr(inner, "jaxpr", inner)
                if hasattr(inner, "eqns"):
                    yield from _eqns(inner, line)
