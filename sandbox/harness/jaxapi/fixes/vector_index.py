"""SparseCore indexed vector loads and stores (`plsc.load_gather`, `plsc.store_scatter`,
`plsc.addupdate_scatter`) in TPU interpret mode (jax 0.12.0.1 has no rule for them).

The interpreter passes such an equation on with its ref replaced by the buffer's id, so the
primitive's own type check then failed on the id ("ref.dtype=int16 must be int32 or float32") and
the user was told the construct is unsupported under the name of `load_gather` even for a scatter.

The fix rewrites each one, before the interpreter runs it, into a read of the (transformed) ref, the
same indexing in jnp, and for the stores a write back: `load_gather(ref, [i, j])` is
`ref[...][i, j]`; `store_scatter` sets and `addupdate_scatter` adds (duplicate indices accumulate,
as the TPU's atomic add does). Masked-off lanes of a store leave memory alone. What the hardware's
documentation does not say is not guessed: a masked-off lane of a load, and an unmasked index
outside the ref, read the simulator's uninitialised fill (NaN, or the largest int) instead of
whatever a TPU returns, and an unmasked store outside the ref is dropped. The dtypes stay the ones the
primitives accept on a TPU (int32 and float32; their type check runs when the kernel is traced).
"""

from __future__ import annotations

from typing import Any

from sandbox.harness.jaxapi.fixes import rewrite

NAME = "vector_gather_scatter"


def install(ipc: Any) -> bool:
    try:
        from jax._src.pallas.mosaic import sc_primitives
    except ImportError:
        return False
    gather_p = getattr(sc_primitives, "gather_p", None)
    scatter_p = getattr(sc_primitives, "scatter_p", None)
    if gather_p is None or scatter_p is None:
        return False
    rewrite.install(ipc, "load_gather", (lambda eqn: eqn.primitive is gather_p, _gather))
    rewrite.install(ipc, "store_scatter", (lambda eqn: eqn.primitive is scatter_p, _scatter))
    return True


def _view(ref: Any, transforms: Any) -> Any:
    from jax._src.state import types

    return types.TransformedRef(ref, tuple(transforms)) if transforms else ref


def _gather(eqn: Any, *operands: Any) -> Any:
    import jax
    import jax.numpy as jnp
    from jax._src.pallas.mosaic.interpret import utils

    ref, transforms, indices, mask = jax.tree.unflatten(eqn.params["tree"], operands)
    whole = _view(ref, transforms)[...]
    fill = utils.get_uninitialized_value(whole.dtype, "nan")
    picked = whole.at[tuple(indices)].get(mode="fill", fill_value=fill)
    return picked if mask is None else jnp.where(mask, picked, jnp.asarray(fill, whole.dtype))


def _scatter(eqn: Any, *operands: Any) -> list[Any]:
    import jax
    import jax.numpy as jnp

    ref, transforms, indices, x, mask = jax.tree.unflatten(eqn.params["tree"], operands)
    view = _view(ref, transforms)
    whole = view[...]
    if mask is not None:  # a masked-off lane aims past the ref, where mode="drop" leaves it out
        indices = [jnp.where(mask, i, n) for i, n in zip(indices, whole.shape, strict=True)]
    at = whole.at[tuple(indices)]
    view[...] = at.add(x, mode="drop") if eqn.params["add"] else at.set(x, mode="drop")
    return []
