"""`plsc.subcore_barrier()` and `plsc.fetch_and_add` on a SparseCore's vector subcores (jax 0.12.0.1 has no
CPU rule for either).

On a TPU the 16 vector subcores of a SparseCore run at once, each with its own VMEM, all sharing the
SparseCore's `VMEM_SHARED`; `subcore_barrier()` holds each subcore until every subcore reached it
(JAX's `test_scatter_add`: subcore 0 fills shared memory, a barrier, every subcore adds its rows, a
barrier, subcore 0 reads the sum). The harness runs a SparseCore kernel's subcores one after
another on one simulated core (`interpret_fixes.sparsecore_axis_index`), where no barrier can be
kept: the first subcore would wait for the others forever. JAX's interpreter had no rule at all
("MLIR translation rule for primitive 'barrier' not found for platform cpu").

For a kernel whose body contains a barrier or a `fetch_and_add`, on a mesh of one SparseCore, the
fix runs each subcore as its own simulated core (a thread, as JAX's interpreter runs a TensorCore
mesh's cores; subcore k on local core k), with its own VMEM, SMEM and semaphores, and one
`VMEM_SHARED` for all: allocations in that space on the kernel's cores are one buffer.
`plsc.fetch_and_add(ref, v, subcore_id=k)` adds `v` to subcore k's SMEM element atomically and
returns the old value, as its docstring says (JAX's interpreter handed it a buffer number instead:
"Only int32 refs are supported, but got int16"). The barrier is the interpreter's semaphore
protocol (each subcore signals every subcore once, then waits for as many signals), on a semaphore
kept for it, so the harness's deadlock watchdog sees a subcore that never arrives (`stuck` words
it). Kernels with neither keep the one-core run (cheaper). Not simulated: a mesh of several
SparseCores (their `VMEM_SHARED` is one per SparseCore, which the one-per-device sharing here
cannot say): refused with a message that says so.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Callable
from typing import Any

from sandbox.harness.jaxapi.fixes import Unsimulated, hostcall

NAME = "subcore_barrier"
# A fixed-id semaphore for the barrier; internal semaphore ids start at 2000 and stay far below it.
BARRIER_SEMAPHORE = 32000


def install(ipc: Any) -> bool:
    from jax._src.pallas.mosaic import sc_primitives
    from jax._src.pallas.mosaic.interpret import shared_memory

    barrier_p = getattr(sc_primitives, "barrier_p", None)
    add_p = getattr(sc_primitives, "fetch_and_add_p", None)
    memory_class: Any = getattr(shared_memory, "SharedMemory", None)
    needed = hasattr(memory_class, "guarantee_semaphore_with_fixed_id") and hasattr(
        ipc, "_get_randomized_grid_coordinates"
    )
    if barrier_p is None or add_p is None or not needed:
        return False
    if not hostcall.first_time(ipc, NAME):
        return True
    ipc.interpret_pallas_call = _threaded_subcores(ipc.interpret_pallas_call, (barrier_p, add_p))
    ipc._get_randomized_grid_coordinates = _in_order_when_threaded(ipc._get_randomized_grid_coordinates)
    memory_class.allocate_buffer = _one_shared_vmem(memory_class.allocate_buffer)
    ipc._initialize_shared_memory = _marking_threaded(ipc._initialize_shared_memory, ipc)
    barrier = hostcall.register(ipc, barrier_p, functools.partial(_stage_barrier, ipc), lambda: [])
    return barrier and hostcall.register(
        ipc, add_p, functools.partial(_stage_fetch_and_add, ipc), _fetched_aval
    )


def _threaded_subcores(interpret: Callable[..., Any], prims: tuple[Any, ...]) -> Callable[..., Any]:
    @functools.wraps(interpret)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from jax._src.pallas.mosaic import sc_core

        mesh = kwargs.get("mesh")
        if not isinstance(mesh, sc_core.VectorSubcoreMesh) or not _has(kwargs["jaxpr"], prims):
            return interpret(*args, **kwargs)
        if mesh.num_cores != 1:
            raise Unsimulated(
                "plsc.subcore_barrier() or plsc.fetch_and_add on a mesh of several SparseCores is not simulated "
                "(their shared VMEM is one per SparseCore); use num_cores=1"
            )
        subcores = mesh.num_subcores
        kwargs["interpret_params"] = _mark(
            dataclasses.replace(kwargs["interpret_params"], num_cores_or_threads=subcores)
        )
        kwargs["compiler_params"] = _parallel(kwargs.get("compiler_params"), len(kwargs["grid_mapping"].grid))
        _IN_ORDER.active = True
        try:
            return interpret(*args, **kwargs)
        finally:
            _IN_ORDER.active = False

    return wrapper


# Set while a threaded-subcore kernel is traced: its grid points go to the threads in order, so the
# thread of local core k is subcore k (`plsc.fetch_and_add(..., subcore_id=k)` names it).
_IN_ORDER = threading.local()


def _in_order_when_threaded(randomized: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(randomized)
    def wrapper(grid: Any, mosaic_params: Any, random_seed: Any) -> Any:
        if not getattr(_IN_ORDER, "active", False):
            return randomized(grid, mosaic_params, random_seed)
        import jax.numpy as jnp

        return tuple(jnp.arange(size, dtype=jnp.int32) for size in grid)

    return wrapper


# Ids of the interpret params of kernels whose subcores run as threads; the params are kept alive so
# that an id is never reused (one small object per such kernel traced in a job).
_THREADED: set[int] = set()
_KEEP: list[Any] = []


def _mark(params: Any) -> Any:
    _THREADED.add(id(params))
    _KEEP.append(params)
    return params


def _parallel(compiler_params: Any, rank: int) -> Any:
    from jax._src.pallas.mosaic import core as tpu_core

    semantics: Any = ("parallel",) * rank
    if compiler_params is None:
        return tpu_core.CompilerParams(dimension_semantics=semantics)
    return compiler_params.replace(dimension_semantics=semantics)


def _has(jaxpr: Any, prims: tuple[Any, ...]) -> bool:
    """Whether `jaxpr`, or a jaxpr inside one of its equations, binds one of `prims`."""
    from jax._src import core as jax_core

    for eqn in jaxpr.eqns:
        if eqn.primitive in prims:
            return True
        subs = jax_core.jaxprs_in_params(eqn.params)
        if any(_has(sub.jaxpr if hasattr(sub, "jaxpr") else sub, prims) for sub in subs):
            return True
    return False


def _marking_threaded(initialize: Callable[..., Any], ipc: Any) -> Callable[..., Any]:
    @functools.wraps(initialize)
    def wrapper(*args: Any, interpret_params: Any, **kwargs: Any) -> Any:
        token = initialize(*args, interpret_params=interpret_params, **kwargs)
        ipc._get_shared_memory().playground_one_shared_vmem = id(interpret_params) in _THREADED
        return token

    return wrapper


def _one_shared_vmem(allocate_buffer: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(allocate_buffer)
    def wrapper(self: Any, key: Any, *args: Any, **kwargs: Any) -> Any:
        space, buffer_id, device, core = key
        if space != "vmem_shared" or not getattr(self, "playground_one_shared_vmem", False):
            return allocate_buffer(self, key, *args, **kwargs)
        first = (space, buffer_id, device, 0)
        with self.lock:  # a buffer every subcore freed is gone, whichever key still names it
            if first in self.mem and self.mem[first].has_zero_ref_count():
                del self.mem[first]
        allocate_buffer(self, first, *args, **kwargs)
        with self.lock:  # every subcore's key names subcore 0's buffer, counted once per subcore
            buffer = self.mem[first]
            if core != 0 and self.mem.get(key) is not buffer:
                buffer._ref_count += 1
                self.mem[key] = buffer
        return None

    return wrapper


def _stage_barrier(ipc: Any, eqn: Any, invals: list[Any], ctx: Any, token: Any) -> tuple[Any, list[Any]]:
    token = ipc.callback.io_callback(
        functools.partial(_barrier, ipc, source_info=eqn.source_info),
        ipc.TOKEN_SHAPE_DTYPE,
        token,
        ctx.device_id,
        ctx.local_core_id,
    )
    return token, []


def _barrier(ipc: Any, token: Any, device_id: Any, local_core_id: Any, *, source_info: Any) -> Any:
    from jax._src.pallas.mosaic.interpret import utils

    memory = ipc._get_shared_memory()
    device, cores = int(device_id), memory.num_cores_per_device
    if cores == 1:
        return token  # a mesh of one subcore: nobody to wait for
    memory.guarantee_semaphore_with_fixed_id(BARRIER_SEMAPHORE)
    me = memory.get_global_core_id(device, int(local_core_id))
    (sem,), clock = memory.get_semaphores_and_increment_clock([BARRIER_SEMAPHORE], me)
    for core in range(cores):
        sem.signal(1, memory.get_global_core_id(device, core), clock)
    # The wait's source line, for the deadlock watchdog's message.
    where = utils.TPULoggingInfo(device_id=device, local_core_id=int(local_core_id), source_info=source_info)
    sem.wait(cores, me, logging_info=where)
    return token


def stuck(count: int, subcores: int) -> str:
    """What a barrier wait that can never end means, from the waiting subcore's count (for the translator)."""
    return (
        f"a subcore would wait forever at `plsc.subcore_barrier()`: {count} of the {subcores} subcores reached "
        "it, and nothing still running can bring the others. Every subcore must reach every barrier (one "
        "skipped under `pl.when` hangs a TPU too)"
    )


def _fetched_aval(x_ref: Any, value: Any, *rest: Any) -> Any:
    return value


def _stage_fetch_and_add(
    ipc: Any, eqn: Any, invals: list[Any], ctx: Any, token: Any
) -> tuple[Any, list[Any]]:
    import jax
    from jax._src.pallas.mosaic import core as tpu_core

    buffer_id, value, *indices, subcore_id = invals
    space = ipc.TPU_MEMORY_SPACE_IDXS[tpu_core.MemorySpace.SMEM]  # the only space the primitive takes
    aval = eqn.outvars[0].aval
    token, old = ipc.callback.io_callback(
        functools.partial(_fetch_and_add, ipc),
        (ipc.TOKEN_SHAPE_DTYPE, jax.ShapeDtypeStruct(aval.shape, aval.dtype)),
        token,
        ctx.device_id,
        space,
        buffer_id,
        value,
        subcore_id,
        *indices,
    )
    return token, [old]


def _fetch_and_add(
    ipc: Any,
    token: Any,
    device_id: Any,
    space: Any,
    buffer_id: Any,
    value: Any,
    subcore_id: Any,
    *indices: Any,
) -> tuple[Any, Any]:
    """Atomically add `value` to the element of subcore `subcore_id`'s copy of the SMEM buffer; the old value."""
    import numpy as np

    memory = ipc._get_shared_memory()
    target = int(subcore_id)
    if not 0 <= target < memory.num_cores_per_device:
        raise IndexError(
            f"plsc.fetch_and_add: subcore_id={target}, but the mesh has {memory.num_cores_per_device}"
        )
    key = (ipc.TPU_MEMORY_SPACE_NAMES[int(space)], int(buffer_id), int(device_id), target)
    where = tuple(int(i) for i in indices)
    with memory.lock:
        buffer = memory.mem[key]
        old = np.array(buffer[where], copy=True)
        buffer.set_in_bounds_portion(where, old + np.asarray(value, old.dtype))
    return token, old
