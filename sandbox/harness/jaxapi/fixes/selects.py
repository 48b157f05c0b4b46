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
it either). Rewritten: DMA starts and waits (refs, views and semaphores selected in them, the form
JAX's own tests use). A selected ref read or written directly, or signalled with
`pl.semaphore_signal`, is not rewritten and fails as before.
"""

from __future__ import annotations

import functools
from typing import Any

from sandbox.harness.jaxapi.fixes import rewrite

NAME = "select_ref"


def install(ipc: Any) -> bool:
    from jax._src.state import types

    if not hasattr(types, "SelectTransform"):
        return False
    return rewrite.install(ipc, NAME, (selects, _switched))


def selects(eqn: Any) -> bool:
    key = rewrite.tree_param(eqn)
    return key is not None and _first_select(eqn.params[key].unflatten(eqn.invars)) is not None


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


def _switched(eqn: Any, *operands: Any) -> Any:
    key = rewrite.tree_param(eqn)
    assert key is not None
    return _bind_picked(eqn.primitive, dict(eqn.params), key, eqn.params[key].unflatten(operands))


def _bind_picked(prim: Any, params: dict[str, Any], key: str, args: Any) -> Any:
    """Bind `prim` on `args`, switching over the first selected ref's choices (recursively)."""
    from jax import lax

    select = _first_select(args)
    if select is None:
        flat, tree = rewrite.flatten(args)
        return prim.bind(*flat, **{**params, key: tree})
    choices = select.ref
    branches = [
        functools.partial(_bind_picked, prim, params, key, _replace(args, select, choice))
        for choice in choices
    ]
    index = lax.clamp(0, lax.convert_element_type(select.transforms[0].idx, "int32"), len(choices) - 1)
    return lax.switch(index, [lambda b=b: b() for b in branches])


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
