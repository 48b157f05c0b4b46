"""`pl.select_ref(i, *refs)` in TPU interpret mode (jax 0.12.0.1 cannot run it).

On a TPU, `pl.select_ref(i, a, b, c)` is a ref that stands for the `i`-th of its refs (all of one
type), picked at run time: a loop can copy from, or wait on, a different ref each step. JAX's
interpreter hands the whole tuple of refs to the DMA, semaphore or load rule, which fail
("NotImplementedError: <class '…SelectTransform'>").

The fix rewrites each equation of a kernel that uses a selected ref, before the interpreter runs it,
into `lax.switch(i, [the same equation with refs[0], …, with refs[n-1]])`: the interpreter runs
switches natively, each branch then names one plain ref. Several selects in one equation (a
selected source and a selected semaphore) nest. The index is clamped into range like any
`lax.switch` index (on a TPU an index out of range is undefined; the TPU lowering check cannot see
it either).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

NAME = "select_ref"
_TREE_PARAMS = ("tree", "args_tree")


def install(ipc: Any) -> bool:
    from jax._src.state import types

    if getattr(ipc._interpret_jaxpr, "_playground_select", False):
        return True
    if not hasattr(types, "SelectTransform"):
        return False
    ipc._interpret_jaxpr = _without_selects(ipc._interpret_jaxpr)
    return True


def _without_selects(interpret_jaxpr: Callable[..., Any]) -> Callable[..., Any]:
    rewritten: dict[int, tuple[Any, Any]] = {}

    @functools.wraps(interpret_jaxpr)
    def wrapper(jaxpr: Any, *args: Any, ctx: Any, token: Any) -> Any:
        known = rewritten.get(id(jaxpr))
        if known is None or known[0] is not jaxpr:
            known = (jaxpr, rewrite(jaxpr))
            rewritten[id(jaxpr)] = known
        return interpret_jaxpr(known[1], *args, ctx=ctx, token=token)

    wrapper._playground_select = True  # type: ignore[attr-defined]
    return wrapper


def rewrite(jaxpr: Any) -> Any:
    """`jaxpr` with every equation on a selected ref turned into a switch over the refs."""
    if not any(_selects(eqn) for eqn in jaxpr.eqns):
        return jaxpr
    eqns: list[Any] = []
    for eqn in jaxpr.eqns:
        eqns.extend(_switched(eqn) if _selects(eqn) else [eqn])
    return jaxpr.replace(eqns=eqns)


def _tree_param(eqn: Any) -> str | None:
    return next((k for k in _TREE_PARAMS if k in eqn.params), None)


def _selects(eqn: Any) -> bool:
    key = _tree_param(eqn)
    if key is None:
        return False
    tree = eqn.params[key]
    # Only trees over all the operands (DMA and semaphore rules); `get`'s `tree` covers its indexers.
    if getattr(tree, "num_leaves", None) != len(eqn.invars):
        return False
    return _first_select(tree.unflatten(eqn.invars)) is not None


def _first_select(tree: Any) -> Any:
    from jax._src import tree_util
    from jax._src.state import types

    def is_ref(x: Any) -> bool:
        return isinstance(x, types.TransformedRef)

    for leaf in tree_util.tree_leaves(tree, is_leaf=is_ref):
        found = _select_in(leaf) if is_ref(leaf) else None
        if found is not None:
            return found
    return None


def _select_in(ref: Any) -> Any:
    from jax._src.state import types

    if not isinstance(ref, types.TransformedRef):
        return None
    if ref.transforms and isinstance(ref.transforms[0], types.SelectTransform):
        return ref
    return _select_in(ref.ref)


def _switched(eqn: Any) -> list[Any]:
    """The equation as a switch: traced with the refs' types, then inlined in place of `eqn`."""
    import jax
    from jax._src import core as jax_core

    key = _tree_param(eqn)
    assert key is not None
    params, tree = dict(eqn.params), eqn.params[key]
    # One argument per distinct variable: a ref used twice (two slots of one semaphore array) may
    # not be passed twice to a traced function.
    unique: list[Any] = []
    for v in eqn.invars:
        if not any(v is u for u in unique):
            unique.append(v)
    where = [next(i for i, u in enumerate(unique) if u is v) for v in eqn.invars]

    def run(*distinct: Any) -> Any:
        return _bind_picked(eqn.primitive, params, key, tree.unflatten([distinct[i] for i in where]))

    closed = jax.make_jaxpr(run)(*[v.aval for v in unique])
    inner = closed.jaxpr
    if inner.constvars:
        raise NotImplementedError("a select_ref that closes over constants")
    sub: dict[Any, Any] = dict(zip(inner.invars, unique, strict=True))
    outs = dict(zip(inner.outvars, eqn.outvars, strict=False))
    eqns = []
    for e in inner.eqns:
        invars = [sub.get(v, v) if isinstance(v, jax_core.Var) else v for v in e.invars]
        eqns.append(e.replace(invars=invars, outvars=[outs.get(v, v) for v in e.outvars]))
    return eqns


def _bind_picked(prim: Any, params: dict[str, Any], key: str, args: Any) -> Any:
    """Bind `prim` on `args`, switching over the first selected ref's choices (recursively)."""
    from jax import lax

    select = _first_select(args)
    if select is None:
        flat, tree = _flatten_like(args)
        return prim.bind(*flat, **{**params, key: tree})
    choices = select.ref
    branches = [
        functools.partial(_bind_picked, prim, params, key, _replace(args, select, choice))
        for choice in choices
    ]
    index = lax.clamp(0, lax.convert_element_type(select.transforms[0].idx, "int32"), len(choices) - 1)
    return lax.switch(index, [lambda b=b: b() for b in branches])


def _flatten_like(args: Any) -> tuple[list[Any], Any]:
    """`args` flattened as the DMA and semaphore rules flatten theirs (refs as pytree nodes)."""
    from jax._src import flattree

    flat = flattree.flatten(args)
    return list(flat.vals), flat.tree


def _replace(tree: Any, select: Any, choice: Any) -> Any:
    from jax._src import tree_util
    from jax._src.state import types

    def is_ref(x: Any) -> bool:
        return isinstance(x, types.TransformedRef)

    def swap(x: Any) -> Any:
        return _swapped(x, select, choice) if is_ref(x) else x

    return tree_util.tree_map(swap, tree, is_leaf=is_ref)


def _swapped(ref: Any, select: Any, choice: Any) -> Any:
    """`ref` with `select` (somewhere inside it) replaced by `choice`, transforms kept in order."""
    from jax._src.state import types

    if ref is select:
        return choice
    if not isinstance(ref, types.TransformedRef) or ref.multiref:
        return ref
    inner = _swapped(ref.ref, select, choice)
    if isinstance(inner, types.TransformedRef) and not inner.multiref:
        return types.TransformedRef(inner.ref, (*inner.transforms, *ref.transforms))
    return types.TransformedRef(inner, ref.transforms)
