"""PRNG keys and semaphores across the interpreter's host callbacks, as their raw data (jax 0.12.0.1).

JAX's interpreter keeps every buffer of the simulated TPU in host memory and moves each value in or
out of it through a host callback (`io_callback`). A callback carries plain arrays only, so a kernel
operand, output or scratch buffer whose dtype is a PRNG key (`key<pl>`, `key<fry>`) or a semaphore
(`dma_sem`, `sem`) failed ("Cannot interpret 'key<pl>' as a data type"), and its uninitialised fill
failed before that ("nan + key<pl>").

Both are extended dtypes with a documented physical representation (`jax.random.key_data`: uint32
words; a semaphore: one int32). This module converts them at the boundary: a value crossing a
callback travels as its physical array and is wrapped back into its dtype on the traced side; a
buffer holding keys stores their key data (the key's words as trailing dimensions, which the
interpreter's leading-dimension indexing leaves whole). A key buffer's uninitialised fill is the
integer poison of its words; a semaphore's is a zero count. What a semaphore's physical value means
to the simulator (its count) is `futures.py`'s business.

`install` is shared by the fixes that need it (`keys.py`, `futures.py`) and applies once.
"""

from __future__ import annotations

import dataclasses
import functools
import types
from collections.abc import Callable
from typing import Any


def install(ipc: Any) -> bool:
    from jax._src.pallas.mosaic.interpret import utils

    if getattr(ipc.callback, "_playground_physical", False):
        return True
    needed = ("callback", "_call_allocate_buffer")
    if not all(hasattr(ipc, name) for name in needed) or not hasattr(utils, "get_uninitialized_array"):
        return False
    ipc.callback = _PhysicalCallbacks(ipc.callback)
    utils.get_uninitialized_array = _uninitialized(utils.get_uninitialized_array)
    ipc._call_allocate_buffer = _allocating_physical(ipc._call_allocate_buffer)
    return True


def is_extended(dtype: Any) -> bool:
    from jax._src import dtypes

    return isinstance(dtype, dtypes.ExtendedDType)


def is_key(dtype: Any) -> bool:
    from jax._src.random import prng

    return isinstance(dtype, prng.KeyTy)


def to_physical(value: Any) -> Any:
    """`value` as its physical array if its dtype is a key or a semaphore, else unchanged."""
    import jax
    import jax.numpy as jnp

    dtype = getattr(value, "dtype", None)
    if not is_extended(dtype):
        return value
    if is_key(dtype):
        return jax.random.key_data(value)
    return jax.lax.convert_element_type(value, jnp.int32)


def from_physical(data: Any, dtype: Any) -> Any:
    """The physical array `data` wrapped back into the key or semaphore dtype `dtype`."""
    import jax
    from jax._src.random import prng

    if is_key(dtype):
        return prng.random_wrap(data, impl=dtype._impl)
    return jax.lax.convert_element_type(data, dtype)


def physical_shape(shape: Any) -> Any:
    """A result shape of a callback, with the physical shape and dtype for keys and semaphores."""
    import jax
    from jax._src import core

    dtype = getattr(shape, "dtype", None)
    if not is_extended(dtype):
        return shape
    aval = core.physical_aval(core.ShapedArray(tuple(shape.shape), dtype))
    return jax.ShapeDtypeStruct(aval.shape, aval.dtype)


class _PhysicalCallbacks(types.ModuleType):
    """JAX's `callback` module as the interpreter sees it, with `io_callback` taking physical values."""

    _playground_physical = True

    def __init__(self, inner: types.ModuleType) -> None:
        super().__init__(inner.__name__)
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def io_callback(self, callback: Callable[..., Any], result_shape: Any, *args: Any, **kwargs: Any) -> Any:
        import jax

        shapes, tree_def = jax.tree.flatten(result_shape)
        tree: Any = tree_def
        extended = [is_extended(getattr(s, "dtype", None)) for s in shapes]
        if not any(extended) and not any(
            is_extended(getattr(a, "dtype", None)) for a in jax.tree.leaves(args)
        ):
            return self._inner.io_callback(callback, result_shape, *args, **kwargs)
        physical = tree.unflatten([physical_shape(s) for s in shapes])
        out = self._inner.io_callback(callback, physical, *jax.tree.map(to_physical, args), **kwargs)
        values = tree.flatten_up_to(out)
        wrapped = [
            from_physical(v, s.dtype) if e else v for v, s, e in zip(values, shapes, extended, strict=True)
        ]
        return tree.unflatten(wrapped)


def _uninitialized(get_uninitialized_array: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(get_uninitialized_array)
    def wrapper(shape: Any, dtype: Any, uninitialized_memory: Any) -> Any:
        if not is_extended(dtype):
            return get_uninitialized_array(shape, dtype, uninitialized_memory)
        import jax.numpy as jnp
        from jax._src import core

        aval = core.physical_aval(core.ShapedArray(tuple(shape), dtype))
        if is_key(dtype):  # a key's words are poisoned like any integer memory
            fill = get_uninitialized_array(aval.shape, aval.dtype, uninitialized_memory)
        else:  # a semaphore starts at a zero count
            fill = jnp.zeros(aval.shape, aval.dtype)
        return from_physical(fill, dtype)

    return wrapper


def _allocating_physical(call_allocate_buffer: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(call_allocate_buffer)
    def wrapper(
        token: Any,
        device_id: Any,
        local_core_id: Any,
        memory_space: Any,
        val: Any,
        interpret_params: Any,
        *rest: Any,
        **kw: Any,
    ) -> Any:
        if is_extended(getattr(val, "dtype", None)):
            # Padding to the TPU's tiles would pad a key's words: such a buffer keeps its logical shape.
            interpret_params = dataclasses.replace(interpret_params, buffer_bounds="logical")
            val = to_physical(val)
        return call_allocate_buffer(
            token, device_id, local_core_id, memory_space, val, interpret_params, *rest, **kw
        )

    return wrapper
