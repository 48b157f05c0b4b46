"""Semaphores as kernel operands and outputs: async copy futures across kernels (jax 0.12.0.1).

On a TPU a kernel may start a DMA and return its semaphore as an output (with
`out_specs=pl.BlockSpec(memory_space=pltpu.SEMAPHORE)`); a later kernel takes the semaphore as an
input and waits on it (JAX's "async copy futures", `tests/pallas/tpu_pallas_async_test.py`). The
copy runs in between, outside any kernel. JAX's interpreter cannot carry a semaphore out of a kernel
(its shared memory, semaphores included, is discarded at each kernel's end, and the callbacks that
move operands cannot carry the dtype: "nan + dma_sem").

With `physical.py` moving a semaphore across callbacks as one int32, this fix makes that int32 the
semaphore's count, as the simulator keeps it:
- a kernel with a semaphore *output* runs its DMAs eagerly (each copy lands when it starts, a legal
  TPU schedule: a copy may finish at any time after its start), so nothing is left in flight when
  the kernel's memory is discarded, and every output holds the copied data;
- when the interpreter moves the semaphore output out of the kernel, the count of this core (the
  bytes the copies signalled) becomes the output's value, and the semaphore is left at zero;
- when it moves a semaphore *input* into a kernel, the count is restored on this core, so
  `.wait()` on the future consumes the bytes as on a TPU; a wait for more than was signalled
  blocks, and the harness names the deadlock.
The copy's data reaches the later kernel through the buffers the kernels alias (as on a TPU, the
futures' pattern aliases the copy's destination into the waiting kernel). With several devices (a
remote copy's future, `make_async_remote_copy`), the devices meet before a count is read, so a copy
another device started toward this one has landed and signalled (one core per device; with more,
the counts are read without that meeting).

Not simulated: a semaphore output whose copy is still meant to be in flight while another kernel
reads its destination (a race on a TPU too; here the data is already there).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

from sandbox.harness.jaxapi.fixes import hostcall, physical

NAME = "semaphore_operands"
_SEMAPHORE_SPACE = "semaphore_mem"


def install(ipc: Any) -> bool:
    needed = (
        "get",
        "store",
        "fail_on_exception",
        "interpret_pallas_call",
        "TPU_MEMORY_SPACE_NAMES",
        "_get_shared_memory",
    )
    if not all(hasattr(ipc, name) for name in needed) or not physical.install(ipc):
        return False
    if not hostcall.first_time(ipc, NAME):
        return True
    hostcall.rewrap(ipc, "get", _reading_counts(ipc))
    hostcall.rewrap(ipc, "store", _restoring_counts(ipc))
    ipc.interpret_pallas_call = _eager_for_futures(ipc.interpret_pallas_call)
    return True


def _in_semaphore_space(ipc: Any, memory_space: Any) -> bool:
    return bool(ipc.TPU_MEMORY_SPACE_NAMES[int(memory_space)] == _SEMAPHORE_SPACE)


def _semaphores(ipc: Any, device_id: Any, local_core_id: Any, ids: Any) -> tuple[int, list[tuple[Any, Any]]]:
    """This core's global id and, per element of the semaphore id array `ids`, (index, semaphore)."""
    import numpy as np

    memory = ipc._get_shared_memory()
    core = memory.get_global_core_id(int(device_id), int(local_core_id))
    found = []
    for index, sem_id in np.ndenumerate(np.asarray(ids)):
        (sem,), _ = memory.get_semaphores_and_increment_clock([int(sem_id)], core)
        found.append((index, sem))
    return core, found


def _reading_counts(ipc: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def make(get: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(get)
        def wrapper(
            token: Any, device_id: Any, core_id: Any, space: Any, ids: Any, *rest: Any, **kw: Any
        ) -> Any:
            if not _in_semaphore_space(ipc, space):
                return get(token, device_id, core_id, space, ids, *rest, **kw)
            import numpy as np

            memory = ipc._get_shared_memory()
            if memory.num_devices > 1 and memory.num_cores_per_device == 1:
                memory.barrier.wait()  # every device's copies have started (and, eager, landed): see above
            core, sems = _semaphores(ipc, device_id, core_id, ids)
            counts = np.zeros(np.shape(ids), np.int32)
            for index, sem in sems:
                with sem.cv:
                    counts[index] = sem.count_by_core[core]
                    sem.count_by_core[core] = 0  # the count leaves the kernel with the output
            return token, counts

        return wrapper

    return make


def _restoring_counts(ipc: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def make(store: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(store)
        def wrapper(
            token: Any,
            device_id: Any,
            core_id: Any,
            space: Any,
            ids: Any,
            transforms: Any,
            val: Any,
            *rest: Any,
            **kw: Any,
        ) -> Any:
            if not _in_semaphore_space(ipc, space):
                return store(token, device_id, core_id, space, ids, transforms, val, *rest, **kw)
            import numpy as np

            core, sems = _semaphores(ipc, device_id, core_id, ids)
            counts = np.asarray(val).reshape(np.shape(ids))
            for index, sem in sems:
                with sem.cv:
                    sem.count_by_core[core] = counts[index]
                    sem.cv.notify_all()
            return token

        return wrapper

    return make


def _eager_for_futures(interpret: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(interpret)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if _returns_semaphores(kwargs["grid_mapping"]):
            kwargs["interpret_params"] = dataclasses.replace(
                kwargs["interpret_params"], dma_execution_mode="eager"
            )
        return interpret(*args, **kwargs)

    return wrapper


def _returns_semaphores(grid_mapping: Any) -> bool:
    from jax._src.pallas.mosaic import core as tpu_core

    outputs = grid_mapping.block_mappings[grid_mapping.num_inputs :][: grid_mapping.num_outputs]
    return any(bm.transformed_block_aval.memory_space is tpu_core.MemorySpace.SEMAPHORE for bm in outputs)
