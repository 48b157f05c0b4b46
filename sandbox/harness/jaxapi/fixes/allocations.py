"""`jax.empty_ref(...)` inside a kernel body, in TPU interpret mode (jax 0.12.0.1 cannot run it).

On a TPU, a VMEM or SMEM ref allocated in the body lives until the kernel ends, like a scratch
buffer. JAX's interpreter passed the allocation on to the enclosing program, which made a real
mutable array there and then failed ("No state discharge rule implemented for primitive:
io_callback").

The fix registers an interpreter rule for `empty_ref` (JAX's own `_interpret_impls` table) that
allocates a simulated buffer in the kernel's memory, filled like any uninitialised buffer, ordered
with the kernel's other callbacks by the interpreter's token. The buffer is freed with the kernel's
memory at its end; one allocated inside a loop gets a fresh buffer on every iteration. Allocations
in HBM or another space are left to JAX (and stay unsupported).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

NAME = "empty_ref_in_kernel"


def install(ipc: Any) -> bool:
    from jax._src import core as jax_core

    prim = getattr(jax_core, "empty_ref_p", None)
    table = getattr(ipc, "_interpret_impls", None)
    if prim is None or table is None or not hasattr(ipc, "_call_allocate_buffer"):
        return False
    if prim in table:
        return True
    marker = jax_core.Primitive("playground_empty_ref")
    marker.def_abstract_eval(lambda *, ty, memory_space: ty)
    table[prim] = functools.partial(_impl, marker, ipc, prim)
    ipc._interpret_jaxpr = _with_allocations(ipc._interpret_jaxpr, ipc, marker)
    return True


def _impl(marker: Any, ipc: Any, prim: Any, *args: Any, ty: Any, memory_space: Any, **params: Any) -> Any:
    space = _space(ipc, memory_space)
    if space is None:  # not a kernel-local space: what JAX does without the fix
        return prim.bind(*args, ty=ty, memory_space=memory_space, **params)
    return marker.bind(ty=ty, memory_space=space)


def _space(ipc: Any, memory_space: Any) -> Any:
    from jax._src.pallas.mosaic import core as tpu_core

    if memory_space is None:
        return tpu_core.MemorySpace.VMEM
    found = ipc._forward_any_to_hbm(memory_space)
    return found if found in (tpu_core.MemorySpace.VMEM, tpu_core.MemorySpace.SMEM) else None


def _with_allocations(interpret_jaxpr: Callable[..., Any], ipc: Any, marker: Any) -> Callable[..., Any]:
    @functools.wraps(interpret_jaxpr)
    def wrapper(jaxpr: Any, *args: Any, ctx: Any, token: Any) -> Any:
        eqns = jaxpr.eqns
        if len(eqns) != 1 or eqns[0].primitive is not marker:
            return interpret_jaxpr(jaxpr, *args, ctx=ctx, token=token)
        from jax._src.pallas.mosaic.interpret import utils

        ty, space = eqns[0].params["ty"], eqns[0].params["memory_space"]
        fill = utils.get_uninitialized_array(ty.shape, ty.dtype, ctx.interpret_params.uninitialized_memory)
        token, buffer_id = ipc._call_allocate_buffer(
            token, ctx.device_id, ctx.local_core_id, space, fill, ctx.interpret_params, eqns[0].source_info
        )
        return token, [buffer_id]

    return wrapper
