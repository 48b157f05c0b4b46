"""Reshaped and bitcast refs (`ref.reshape(...)`, `ref.bitcast(...)`) in loads, stores and DMAs (jax 0.12.0.1).

On a TPU a kernel may read, write or copy through a view of a ref: `x_ref.reshape(2, 8, 128)[1]`,
`pltpu.async_copy(x_hbm.bitcast(jnp.int32), o_hbm, sem)` (JAX's tests `test_load_reshaped_ref`,
`test_dma_bitcasted_ref`). JAX's interpreter passes the view's transforms to its host functions,
which only know index ranges ("'ReshapeTransform' object has no attribute 'indices'").

The fix teaches the host functions the views: the indexing before the first view picks the region
of the buffer to touch (so bounds checks and the race detector see real buffer ranges); the rest is
applied to that region's array. A read returns the viewed value; a write reads the region, updates
the viewed part and writes the region back; a DMA does both through the same functions. A bitcast
that changes the element width packs along the second-minor dimension, as JAX's own definition of
a TPU ref bitcast (`jax._src.state.utils.bitcast`) does; a reshape is row-major, as on a TPU.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from sandbox.harness.jaxapi.fixes import Unsimulated, hostcall

NAME = "ref_views"
_GET_KEYWORDS = ("src_device_id", "src_local_core_id", "clock", "source_info")


def install(ipc: Any) -> bool:
    from jax._src.state import types

    if not all(hasattr(types, t) for t in ("ReshapeTransform", "BitcastTransform")):
        return False
    if not all(hasattr(ipc, name) for name in ("get", "store", "swap", "fail_on_exception")):
        return False
    if not hostcall.first_time(ipc, NAME):
        return True
    bare_get = ipc.get.__wrapped__
    hostcall.rewrap(ipc, "get", functools.partial(_viewing_get))
    hostcall.rewrap(ipc, "store", functools.partial(_viewing_store, bare_get))
    hostcall.rewrap(ipc, "swap", functools.partial(_viewing_swap, bare_get, ipc))
    return True


def _split(transforms: Any) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """(the index transforms before the first view, the view and everything after it); with a view, the
    indices as ints (as the interpreter's own functions read them)."""
    import jax
    from jax._src.state import indexing

    transforms = tuple(transforms or ())
    first = next(
        (i for i, t in enumerate(transforms) if not isinstance(t, indexing.NDIndexer)), len(transforms)
    )
    if first == len(transforms):
        return transforms, ()
    transforms = tuple(jax.tree.map(int, transforms))
    return transforms[:first], transforms[first:]


def _viewing_get(get: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(get)
    def wrapper(
        token: Any,
        device_id: Any,
        core_id: Any,
        space: Any,
        buffer_id: Any,
        transforms: Any,
        *rest: Any,
        **kw: Any,
    ) -> Any:
        region, view = _split(transforms)
        if not view:
            return get(token, device_id, core_id, space, buffer_id, transforms, *rest, **kw)
        token, value = get(token, device_id, core_id, space, buffer_id, region, *rest, **kw)
        return token, viewed(value, view)

    return wrapper


def _viewing_store(bare_get: Callable[..., Any], store: Callable[..., Any]) -> Callable[..., Any]:
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
        region, view = _split(transforms)
        if not view:
            return store(token, device_id, core_id, space, buffer_id, transforms, val, *rest, **kw)
        reading = {k: v for k, v in kw.items() if k in _GET_KEYWORDS}
        _, old = bare_get(token, device_id, core_id, space, buffer_id, region, **reading)
        return store(
            token, device_id, core_id, space, buffer_id, region, updated(old, view, val), *rest, **kw
        )

    return wrapper


def _viewing_swap(bare_get: Callable[..., Any], ipc: Any, swap: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(swap)
    def wrapper(
        token: Any,
        device_id: Any,
        core_id: Any,
        space: Any,
        buffer_id: Any,
        transforms: Any,
        val: Any,
        mask: Any,
        **kw: Any,
    ) -> Any:
        region, view = _split(transforms)
        if not view:
            return swap(token, device_id, core_id, space, buffer_id, transforms, val, mask, **kw)
        import numpy as np

        _, old = bare_get(token, device_id, core_id, space, buffer_id, region, **kw)
        before = viewed(old, view)
        new = np.asarray(val) if mask is None else np.where(np.asarray(mask), val, before)
        token, _ = swap(
            token, device_id, core_id, space, buffer_id, region, updated(old, view, new), None, **kw
        )
        return token, before

    return wrapper


def viewed(array: Any, view: tuple[Any, ...]) -> Any:
    """`array` seen through `view` (index, reshape and bitcast transforms, applied in order)."""
    from jax._src.pallas.mosaic.interpret import utils
    from jax._src.state import indexing, types

    for transform in view:
        if isinstance(transform, indexing.NDIndexer):
            array = array[utils.to_range((transform,))]
        elif isinstance(transform, types.ReshapeTransform):
            array = array.reshape(transform.shape)
        elif isinstance(transform, types.BitcastTransform):
            array = bitcast(array, transform.dtype)
        else:
            raise Unsimulated(f"a ref view by {type(transform).__name__}")
    return array


def updated(array: Any, view: tuple[Any, ...], value: Any) -> Any:
    """A copy of `array` whose part seen through `view` is `value`."""
    import numpy as np
    from jax._src.pallas.mosaic.interpret import utils
    from jax._src.state import indexing, types

    if not view:
        return np.asarray(value, dtype=array.dtype).reshape(array.shape)
    first, rest = view[0], view[1:]
    if isinstance(first, indexing.NDIndexer):
        where = utils.to_range((first,))
        out = np.array(array, copy=True)
        out[where] = updated(array[where], rest, value)
        return out
    if isinstance(first, types.ReshapeTransform):
        return updated(array.reshape(first.shape), rest, value).reshape(array.shape)
    if isinstance(first, types.BitcastTransform):
        return bitcast(updated(bitcast(array, first.dtype), rest, value), array.dtype)
    raise Unsimulated(f"a ref view by {type(first).__name__}")


def bitcast(array: Any, dtype: Any) -> Any:
    """A TPU ref bitcast of `array`: a width change packs or unpacks rows of the second-minor dimension."""
    import numpy as np

    dtype = np.dtype(dtype)
    ours, theirs = array.dtype.itemsize, dtype.itemsize
    if ours == theirs:
        return np.ascontiguousarray(array).view(dtype)
    if array.ndim < 2:
        raise Unsimulated("a bitcast of a 1-D ref that changes the element width")
    shape = (*array.shape[:-2], array.shape[-2] * ours // theirs, array.shape[-1])
    if ours < theirs:  # `ratio` consecutive rows become the sub-words of one row
        ratio = theirs // ours
        grouped = array.reshape(*array.shape[:-2], array.shape[-2] // ratio, ratio, array.shape[-1]).swapaxes(
            -1, -2
        )
        return np.ascontiguousarray(grouped).view(dtype).reshape(shape)
    split = np.ascontiguousarray(array).view(dtype).reshape(*array.shape, ours // theirs)
    return split.swapaxes(-1, -2).reshape(shape)
