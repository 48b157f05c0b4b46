"""Indexed DMAs (SparseCore gather and scatter) in TPU interpret mode (jax 0.12.0.1 cannot run them).

On a TPU, `pltpu.sync_copy(table_hbm.at[ids_vmem], rows_vmem)` copies row `ids[k]` of the table to
row k of the destination for every k: one instruction gathers a window of rows (and
`pltpu.sync_copy(rows_vmem, out_hbm.at[ids_vmem])` scatters them). JAX's interpreter does not know
that an index may be a ref: it took the ref's internal buffer number for a row number, so a correct
kernel read "row 103" and was told it reads past the table.

The fix rewrites such a copy, before the interpreter runs it, into what it means: read the ids,
then one row copy per id on the same semaphore (the row copies' bytes add up to the whole copy's,
so the kernel's `.wait()` waits for all of them). An id outside the table is then reported as the
out-of-bounds row it is. Handled: a 1-D ids ref indexing the first axis of the source (gather) or of
the destination (scatter). Other forms (ids on another axis, a 2-D ids ref) and accumulating copies
(`add=True`, which the interpreter would silently treat as plain copies) are refused with a
message that says so, rather than guessed.
"""

from __future__ import annotations

from typing import Any

from sandbox.harness.fixes import rewrite

NAME = "indexed_dma"
# The name scope of the row copies, so a message about one can say it came from an id.
SCOPE = "playground_indexed_dma"


class UnsupportedIndexedDMA(NotImplementedError):
    """An indexed or accumulating DMA of a form the simulator does not run (the message says which)."""


def install(ipc: Any) -> bool:
    from jax._src.pallas.mosaic import primitives as tpu_primitives

    prim = getattr(tpu_primitives, "dma_start_p", None)
    if prim is None:
        return False
    return rewrite.install(ipc, NAME, (lambda eqn: _applies(eqn, prim), _row_copies))


def is_row_copy(source_info: Any) -> bool:
    """Whether a DMA with this source info is a row copy of an indexed DMA (for its messages)."""
    return SCOPE in str(getattr(source_info, "name_stack", ""))


def _applies(eqn: Any, prim: Any) -> bool:
    if eqn.primitive is not prim or rewrite.tree_param(eqn) != "tree":
        return False
    src, dst, *_ = eqn.params["tree"].unflatten(eqn.invars)
    return bool(eqn.params.get("add")) or _ref_index(src) is not None or _ref_index(dst) is not None


def _ref_index(ref: Any) -> tuple[int, int] | None:
    """(which transform, which axis) of the first index that is itself a ref, if any."""
    from jax._src.state import indexing, types

    if not isinstance(ref, types.TransformedRef) or ref.multiref:
        return None
    for t, transform in enumerate(ref.transforms):
        if not isinstance(transform, indexing.NDIndexer):
            continue
        for axis, index in enumerate(transform.indices):
            if isinstance(getattr(index, "aval", None), types.AbstractRef):
                return t, axis
    return None


def _row_copies(eqn: Any, *operands: Any) -> list[Any]:
    import jax
    from jax import lax

    params = dict(eqn.params)
    src, dst, dst_sem, src_sem, device = params["tree"].unflatten(operands)
    if params.get("add"):
        raise UnsupportedIndexedDMA(
            "an accumulating DMA (add=True) is not simulated: the interpreter would copy instead of add"
        )
    gather = _ref_index(src) is not None
    ids_ref = _ids_of(src if gather else dst)
    ids = ids_ref[...]

    def one_row(k: Any, carry: Any) -> Any:
        row_src = _at_id(src, ids[k]) if gather else src.at[k]
        row_dst = dst.at[k] if gather else _at_id(dst, ids[k])
        flat, tree = rewrite.flatten((row_src, row_dst, dst_sem, src_sem, device))
        with jax.named_scope(SCOPE):
            eqn.primitive.bind(*flat, **{**params, "tree": tree})
        return carry

    lax.fori_loop(0, ids.shape[0], one_row, 0)
    return []


def _ids_of(ref: Any) -> Any:
    found = _ref_index(ref)
    assert found is not None
    t, axis = found
    transform = ref.transforms[t]
    ids_ref = transform.indices[axis]
    others = [i for a, i in enumerate(transform.indices) if a != axis]
    if t != len(ref.transforms) - 1 or axis != 0 or len(ids_ref.shape) != 1 or _has_ints(others):
        raise UnsupportedIndexedDMA(
            "an indexed DMA is simulated only with a 1-D ids ref on the first axis (`x_hbm.at[ids_ref]`)"
        )
    return ids_ref


def _has_ints(indices: list[Any]) -> bool:
    from jax._src.state import indexing

    return any(not isinstance(i, indexing.Slice) for i in indices)


def _at_id(ref: Any, row: Any) -> Any:
    """`ref` with its ids index replaced by one id: the row it names (other indices kept)."""
    from jax._src.state import types

    t, axis = _ref_index(ref)  # type: ignore[misc]
    transform = ref.transforms[t]
    rest = transform.indices[axis + 1 :]
    base = types.TransformedRef(ref.ref, ref.transforms[:t]) if t else ref.ref
    return base.at[(row, *rest)]
