"""Indexed DMAs (SparseCore gather and scatter) in TPU interpret mode (jax 0.12.0.1 cannot run them).

On a TPU, `pltpu.sync_copy(table_hbm.at[ids_vmem], rows_vmem)` copies row `ids[k]` of the table to
row k of the destination for every k: one instruction gathers a window of rows (and
`pltpu.sync_copy(rows_vmem, out_hbm.at[ids_vmem])` scatters them). JAX's interpreter does not know
that an index may be a ref: it took the ref's internal buffer number for a row number, so a correct
kernel read "row 103" and was told it reads past the table.

The fix rewrites such a copy, before the interpreter runs it, into what it means: read the ids,
then one row copy per id on the same semaphore (the row copies' bytes add up to the whole copy's,
so the kernel's `.wait()` waits for all of them). An id outside the table is then reported as the
out-of-bounds row it is. Handled: a 1-D ids ref, or a 1-D view of one (`ids_vmem.at[0]`), indexing
the first axis of the source (gather) or of the destination (scatter).

An accumulating indexed copy (`add=True`, SparseCore only) adds each row into its destination row
instead of overwriting it: `dst[k] += src[ids[k]]` (gather-add), `dst[ids[k]] += src[k]`
(scatter-add, a repeated id adding once per occurrence), as JAX's own TPU tests `test_gather_add` and
`test_scatter_add` define it (int32 and float32). The row copies carry a name scope that the
interpreter's store (`_accumulating_store`) recognises. Other forms (ids on another axis, a 2-D ids
ref, `add=True` without ids, which the TPU compiler rejects too) are refused with a message that
says so, rather than guessed.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from sandbox.harness.jaxapi.fixes import Unsimulated, hostcall, rewrite

NAME = "indexed_dma"
# The name scope of the row copies, so a message about one can say it came from an id.
SCOPE = "playground_indexed_dma"
# The name scope of the row copies of an accumulating copy, which the store adds instead of writing.
ADDING = "playground_dma_add"
_ADDING_LOCK = threading.Lock()


class UnsupportedIndexedDMA(Unsimulated):
    """An indexed or accumulating DMA of a form the simulator does not run (the message says which)."""


def install(ipc: Any) -> bool:
    from jax._src.pallas.mosaic import primitives as tpu_primitives

    prim = getattr(tpu_primitives, "dma_start_p", None)
    if prim is None or not all(hasattr(ipc, name) for name in ("get", "store", "fail_on_exception")):
        return False
    if hostcall.first_time(ipc, NAME):
        hostcall.rewrap(ipc, "store", functools.partial(_accumulating_store, ipc.get.__wrapped__))
    return rewrite.install(ipc, NAME, (lambda eqn: _applies(eqn, prim), _row_copies))


def is_row_copy(source_info: Any) -> bool:
    """Whether a DMA with this source info is a row copy of an indexed DMA (for its messages)."""
    return SCOPE in str(getattr(source_info, "name_stack", ""))


def _applies(eqn: Any, prim: Any) -> bool:
    if eqn.primitive is not prim or rewrite.tree_param(eqn) != "tree":
        return False
    src, dst, *_ = eqn.params["tree"].unflatten(eqn.invars)
    if _ref_index(src) is not None or _ref_index(dst) is not None:
        return True
    # An accumulating copy without ids is refused, unless it is one of the row copies made here.
    return bool(eqn.params.get("add")) and ADDING not in str(eqn.source_info.name_stack)


def _ref_index(ref: Any) -> tuple[int, int] | None:
    """(which transform, which axis) of the first index that is itself a ref or a view of one, if any."""
    from jax._src.state import indexing, types

    if not isinstance(ref, types.TransformedRef) or ref.multiref:
        return None
    for t, transform in enumerate(ref.transforms):
        if not isinstance(transform, indexing.NDIndexer):
            continue
        for axis, index in enumerate(transform.indices):
            if isinstance(index, types.TransformedRef) or isinstance(
                getattr(index, "aval", None), types.AbstractRef
            ):
                return t, axis
    return None


def _no_scope() -> Any:
    import contextlib

    return contextlib.nullcontext()


def _accumulating_store(get: Callable[..., Any], store: Callable[..., Any]) -> Callable[..., Any]:
    """The interpreter's store, adding into the destination for a row copy of an accumulating DMA."""

    @functools.wraps(store)
    def wrapper(
        token: Any,
        device_id: Any,
        core_id: Any,
        space: Any,
        buffer_id: Any,
        transforms: Any,
        val: Any,
        *rest: Any,
        **kw: Any,
    ) -> Any:
        if ADDING not in str(getattr(kw.get("source_info"), "name_stack", "")):
            return store(token, device_id, core_id, space, buffer_id, transforms, val, *rest, **kw)
        reading = {
            k: kw[k] for k in ("src_device_id", "src_local_core_id", "clock", "source_info") if k in kw
        }
        with _ADDING_LOCK:  # the hardware adds atomically: subcores adding into one row must not interleave
            _, current = get(token, device_id, core_id, space, buffer_id, transforms, **reading)
            return store(token, device_id, core_id, space, buffer_id, transforms, current + val, *rest, **kw)

    return wrapper


def _row_copies(eqn: Any, *operands: Any) -> list[Any]:
    import jax
    from jax import lax

    params = dict(eqn.params)
    src, dst, dst_sem, src_sem, device = params["tree"].unflatten(operands)
    adding = bool(params.get("add"))
    if adding and _ref_index(src) is None and _ref_index(dst) is None:
        raise UnsupportedIndexedDMA(
            "an accumulating DMA (add=True) is simulated only as an indexed copy (`x.at[ids_ref]`), the "
            "form the TPU compiler takes"
        )
    gather = _ref_index(src) is not None
    ids_ref = _ids_of(src if gather else dst)
    ids = ids_ref[...]

    def one_row(k: Any, carry: Any) -> Any:
        row_src = _at_id(src, ids[k]) if gather else src.at[k]
        row_dst = dst.at[k] if gather else _at_id(dst, ids[k])
        flat, tree = rewrite.flatten((row_src, row_dst, dst_sem, src_sem, device))
        with jax.named_scope(SCOPE), jax.named_scope(ADDING) if adding else _no_scope():
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
