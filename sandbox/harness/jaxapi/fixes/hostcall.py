"""Interpreter rules that stage host callbacks, ordered with the kernel's others by the interpreter's token.

JAX's interpreter runs a rule of its `_interpret_impls` table by tracing it into a jaxpr and
interpreting that, but a traced rule has no access to the token that orders the kernel's memory
and semaphore callbacks. A rule registered here binds a marker primitive instead; the wrapper
around `_interpret_jaxpr` recognises the one-equation jaxpr of a marker and runs the rule's
`stage(eqn, invals, ctx, token) -> (token, outs)` with the token.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

Stage = Callable[[Any, list[Any], Any, Any], tuple[Any, list[Any]]]
_STAGES: dict[Any, Stage] = {}


def register(ipc: Any, prim: Any, stage: Stage, abstract_eval: Callable[..., Any]) -> bool:
    """Run `prim` in kernels by `stage`; `abstract_eval(*avals, **params)` gives its result avals."""
    from jax._src import core as jax_core

    table = getattr(ipc, "_interpret_impls", None)
    if table is None or not hasattr(ipc, "_interpret_jaxpr"):
        return False
    marker = jax_core.Primitive(f"playground_{prim.name}")
    marker.multiple_results = prim.multiple_results
    marker.def_abstract_eval(abstract_eval)
    _STAGES[marker] = stage
    table[prim] = marker.bind
    if not getattr(ipc._interpret_jaxpr, "_playground_hostcall", False):
        ipc._interpret_jaxpr = _staging(ipc._interpret_jaxpr)
    return True


def _staging(interpret_jaxpr: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(interpret_jaxpr)
    def wrapper(jaxpr: Any, *args: Any, ctx: Any, token: Any) -> Any:
        eqns = jaxpr.eqns
        stage = _STAGES.get(eqns[0].primitive) if len(eqns) == 1 else None
        if stage is None:
            return interpret_jaxpr(jaxpr, *args, ctx=ctx, token=token)
        from jax._src import core as jax_core

        def read(v: Any) -> Any:
            return v.val if isinstance(v, jax_core.Literal) else values[v]

        values = dict(zip(jaxpr.constvars + jaxpr.invars, args, strict=True))
        token, outs = stage(eqns[0], [read(v) for v in eqns[0].invars], ctx, token)
        values.update(zip(eqns[0].outvars, outs, strict=True))
        return token, [read(v) for v in jaxpr.outvars]

    wrapper._playground_hostcall = True  # type: ignore[attr-defined]
    return wrapper


def rewrap(ipc: Any, name: str, make: Callable[[Callable[..., Any]], Callable[..., Any]]) -> None:
    """Replace the interpreter's host function `name` (`get`, `store`, `swap`) by `make(bare)`.

    The interpreter's DMAs call the bare function (`get.__wrapped__`), its kernels the one that
    records a failure for the other cores (`fail_on_exception`); both then reach `make`'s.
    """
    bare = getattr(ipc, name).__wrapped__
    setattr(ipc, name, ipc.fail_on_exception(make(bare)))


def first_time(ipc: Any, name: str) -> bool:
    """True the first time fix `name` asks, in this process (the interpreter module keeps the record)."""
    done: set[str] = ipc.__dict__.setdefault("_playground_installed", set())
    if name in done:
        return False
    done.add(name)
    return True
