"""Equation rewrites the harness applies to a kernel's jaxpr before JAX's interpreter runs it.

Some constructs a TPU runs reach jax 0.12.0.1's interpreter in a form its rules cannot take (a
selected ref, a DMA indexed by a ref). A rewrite replaces such an equation by plain equations the
interpreter does run (switches, loops, row copies), traced with the refs' own types and inlined in
its place. `install` wraps the interpreter's `_interpret_jaxpr` once; each fix adds its rewrite.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

# (does it apply to an equation, the function to trace in its place: (eqn, *distinct operands) -> outs)
Rewrite = tuple[Callable[[Any], bool], Callable[..., Any]]
_REWRITES: dict[str, Rewrite] = {}


def install(ipc: Any, name: str, rewrite: Rewrite) -> bool:
    _REWRITES[name] = rewrite
    if not getattr(ipc._interpret_jaxpr, "_playground_rewrite", False):
        ipc._interpret_jaxpr = _rewritten(ipc._interpret_jaxpr)
    return True


def _rewritten(interpret_jaxpr: Callable[..., Any]) -> Callable[..., Any]:
    done: dict[int, tuple[Any, Any]] = {}

    @functools.wraps(interpret_jaxpr)
    def wrapper(jaxpr: Any, *args: Any, ctx: Any, token: Any) -> Any:
        known = done.get(id(jaxpr))
        if known is None or known[0] is not jaxpr:
            known = (jaxpr, rewrite(jaxpr))  # the original is kept, so its id is not reused
            done[id(jaxpr)] = known
        return interpret_jaxpr(known[1], *args, ctx=ctx, token=token)

    wrapper._playground_rewrite = True  # type: ignore[attr-defined]
    return wrapper


def rewrite(jaxpr: Any) -> Any:
    """`jaxpr` with every equation a rewrite applies to replaced by the equations it traces to."""
    if not any(_rule(eqn) for eqn in jaxpr.eqns):
        return jaxpr
    eqns: list[Any] = []
    for eqn in jaxpr.eqns:
        rule = _rule(eqn)
        eqns.extend(in_place(eqn, rule) if rule else [eqn])
    return jaxpr.replace(eqns=eqns)


def _rule(eqn: Any) -> Callable[..., Any] | None:
    return next((run for applies, run in _REWRITES.values() if applies(eqn)), None)


def in_place(eqn: Any, run: Callable[..., Any]) -> list[Any]:
    """`run(eqn, *operands)` traced with the operands' types, as equations on `eqn`'s own variables."""
    import jax
    from jax._src import core as jax_core

    # One argument per distinct variable: a ref used twice (two slots of one semaphore array) may
    # not be passed twice to a traced function.
    unique: list[Any] = []
    for v in eqn.invars:
        if not any(v is u for u in unique):
            unique.append(v)
    where = [next(i for i, u in enumerate(unique) if u is v) for v in eqn.invars]

    def traced(*distinct: Any) -> Any:
        return run(eqn, *[distinct[i] for i in where])

    inner = jax.make_jaxpr(traced)(*[v.aval for v in unique]).jaxpr
    if inner.constvars:
        raise NotImplementedError(f"a rewrite of `{eqn.primitive}` that closes over constants")
    sub: dict[Any, Any] = dict(zip(inner.invars, unique, strict=True))
    outs = dict(zip(inner.outvars, eqn.outvars, strict=False))
    eqns = []
    for e in inner.eqns:
        invars = [sub.get(v, v) if isinstance(v, jax_core.Var) else v for v in e.invars]
        eqns.append(e.replace(invars=invars, outvars=[outs.get(v, v) for v in e.outvars]))
    return eqns


def tree_param(eqn: Any) -> str | None:
    """The parameter holding the tree of all of `eqn`'s operands (DMA and semaphore rules), if any."""
    for key in ("tree", "args_tree"):
        tree = eqn.params.get(key)
        # `get`'s `tree` covers its indexers only.
        if tree is not None and getattr(tree, "num_leaves", None) == len(eqn.invars):
            return key
    return None


def flatten(args: Any) -> tuple[list[Any], Any]:
    """`args` flattened as the DMA and semaphore rules flatten theirs (refs as pytree nodes)."""
    from jax._src import flattree

    flat = flattree.flatten(args)
    return list(flat.vals), flat.tree
