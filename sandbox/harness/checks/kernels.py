"""How many Pallas kernels a call's program contains: a pass means a Pallas kernel ran.

Counted on the traced program of the jitted call (jit caches the trace, so this costs well under a
millisecond after the call), through every nested jaxpr: `pallas_call`, and `pl.kernel` / `core_map`
(an `mpmd_map` in JAX 0.12). A kernel behind a branch that was not taken still counts; a call that
is plain `jnp` counts 0, which the checker reports as "no Pallas kernel ran".
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

KERNEL_PRIMITIVES = frozenset({"pallas_call", "mpmd_map", "core_map"})


def count_kernels(fn: Any, args: tuple[Any, ...]) -> int:
    """Pallas kernels in the program `fn(*args)` runs (`fn` a `jax.jit` function); -1 if it cannot be traced."""
    try:
        jaxpr = fn.trace(*args).jaxpr.jaxpr
    except Exception:  # counted only to judge; the call itself already ran (or failed) on its own
        return -1
    return sum(1 for eqn in _equations(jaxpr) if eqn.primitive.name in KERNEL_PRIMITIVES)


def _equations(jaxpr: Any) -> Iterator[Any]:
    for eqn in jaxpr.eqns:
        yield eqn
        if eqn.primitive.name in KERNEL_PRIMITIVES:
            continue  # a kernel's body holds no further kernels
        for value in eqn.params.values():
            for inner in value if isinstance(value, (tuple, list)) else (value,):
                sub = getattr(inner, "jaxpr", inner)
                if hasattr(sub, "eqns"):
                    yield from _equations(sub)
