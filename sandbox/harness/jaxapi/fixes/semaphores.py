"""`pl.semaphore_read` in TPU interpret mode (jax 0.12.0.1 has no CPU rule for it).

On a TPU, `pl.semaphore_read(sem)` returns the semaphore's current count on this core without
changing it. The interpreter keeps each semaphore's count per core in its shared memory, but has no
rule for the primitive, so the read fell through to XLA ("MLIR translation rule for primitive
'semaphore_read' not found for platform cpu").

The fix registers an interpreter rule (JAX's own `_interpret_impls` table) that stages one host
callback, ordered with the kernel's other memory and semaphore callbacks by the interpreter's token,
which returns the count. In the default DMA mode (`on_wait`) the interpreter moves a copy's data only
when someone waits for it; a read first completes the copies already started toward this core's
semaphore, so a kernel that polls a DMA semaphore sees them land (on a TPU they land on their own,
at a time the simulator cannot know: a kernel whose result depends on *when* a read sees a copy is
racy on a TPU too).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

NAME = "semaphore_read"


def install(ipc: Any) -> bool:
    from jax._src.pallas import primitives

    prim = getattr(primitives, "semaphore_read_p", None)
    table = getattr(ipc, "_interpret_impls", None)
    if prim is None or table is None:
        return False
    if prim in table:
        return True
    read_p = _read_primitive()
    table[prim] = functools.partial(_impl, read_p)
    ipc._interpret_jaxpr = _with_reads(ipc._interpret_jaxpr, ipc, read_p)
    return True


def _read_primitive() -> Any:
    import jax.numpy as jnp
    from jax._src import core as jax_core

    read_p = jax_core.Primitive("playground_semaphore_read")
    read_p.def_abstract_eval(lambda *avals, args_tree: jax_core.ShapedArray((), jnp.dtype("int32")))
    return read_p


def _impl(read_p: Any, *flat: Any, args_tree: Any) -> Any:
    # Traced by the interpreter into a one-equation jaxpr, which `_with_reads` then runs with the token.
    return read_p.bind(*flat, args_tree=args_tree)


def _with_reads(interpret_jaxpr: Callable[..., Any], ipc: Any, read_p: Any) -> Callable[..., Any]:
    @functools.wraps(interpret_jaxpr)
    def wrapper(jaxpr: Any, *args: Any, ctx: Any, token: Any) -> Any:
        eqns = jaxpr.eqns
        if len(eqns) != 1 or eqns[0].primitive is not read_p:
            return interpret_jaxpr(jaxpr, *args, ctx=ctx, token=token)
        import jax
        import jax.numpy as jnp
        from jax._src.state import discharge

        flat = args[len(jaxpr.constvars) :]
        ref, transforms = eqns[0].params["args_tree"].unflatten(flat)
        sem = discharge.transform_array(ref, transforms)
        token, value = ipc.callback.io_callback(
            functools.partial(_read, ipc),
            (ipc.TOKEN_SHAPE_DTYPE, jax.ShapeDtypeStruct((), jnp.int32)),
            token,
            ctx.device_id,
            ctx.local_core_id,
            sem,
        )
        return token, [value]

    return wrapper


def _read(ipc: Any, token: Any, device_id: Any, local_core_id: Any, sem_id: Any) -> tuple[Any, Any]:
    import numpy as np

    memory = ipc._get_shared_memory()
    core = memory.get_global_core_id(int(device_id), int(local_core_id))
    (sem,), _ = memory.get_semaphores_and_increment_clock([int(sem_id)], core)
    while True:  # complete the copies already started toward this semaphore (see the docstring)
        with sem.cv:
            task = sem.tasks[core].pop() if sem.tasks[core] else None
        if task is None:
            break
        task()
    with sem.cv:
        return token, np.int32(sem.count_by_core[core])
