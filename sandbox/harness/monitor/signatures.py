"""The interpreter functions the monitor wraps, with their parameters in jax 0.12.0.1, and the check.

The hooks read callback arguments by these names; `check` refuses to patch an interpreter whose
functions take anything else (a newer JAX), so that a rename never turns into a wrong report.
"""

from __future__ import annotations

import inspect
from typing import Any

# Parameters of every wrapped interpreter function in jax 0.12.0.1 (checked before patching).
SIGNATURES: dict[str, tuple[str, ...]] = {
    "get": (
        "token", "device_id", "local_core_id", "memory_space", "buffer_id", "transforms", "block_indices",
        "grid_loop_idx", "src_device_id", "src_local_core_id", "clock", "source_info", "input_name",
    ),
    "store": (
        "token", "device_id", "local_core_id", "memory_space", "buffer_id", "transforms", "val",
        "block_indices", "grid_loop_idx", "src_device_id", "src_local_core_id", "clock", "source_info",
        "output_name",
    ),
    "swap": (
        "token", "device_id", "local_core_id", "memory_space", "buffer_id", "transforms", "val", "mask",
        "source_info",
    ),
    "dma_start": (
        "token", "device_id", "src_local_core_id", "src_memory_space", "src_id", "src_transforms",
        "dst_memory_space", "dst_id", "dst_transforms", "dst_sem_id", "src_sem_id", "dst_device_id",
        "dst_local_core_id", "source_info",
    ),
    "dma_wait": ("token", "device_id", "local_core_id", "sem_id", "size", "source_info"),
    "semaphore_signal": (
        "token", "device_id", "local_core_id", "sem_id", "inc", "target_device_id", "target_local_core_id",
        "source_info",
    ),
    "semaphore_wait": ("token", "device_id", "local_core_id", "sem_id", "value", "source_info"),
    "_check_for_revisiting": ("token", "device_id", "local_core_id", "loop_idx", "output_blocks"),
    "_allocate_buffer": (
        "token", "device_id", "local_core_id", "memory_space", "val", "padded_shape", "source_info",
    ),
    "_allocate_semaphores": ("token", "device_id", "local_core_id", "shape"),
    "get_barrier_semaphore": ("token", "device_id", "collective_id"),
    "_initialize_shared_memory": (
        "token", "device_id", "num_devices", "num_cores_per_device", "interpret_params",
    ),
    "_validate": ("token", "device_id"),
    "_clean_up_shared_memory": ("token", "device_id"),
}  # fmt: skip
LOWERING_KEYWORDS = ("jaxpr", "grid_mapping", "input_output_aliases", "mesh", "interpret_params", "name")


def check(ipc: Any, shared_memory: Any, thread_map: Any) -> str:
    """'' if the interpreter has everything the hooks wrap, with the parameters they read; else why not."""
    for name, expected in SIGNATURES.items():
        fn = getattr(ipc, name, None)
        if fn is None:
            return f"the interpreter has no `{name}`"
        found = tuple(inspect.signature(fn).parameters)
        if found != expected:
            return f"the interpreter's `{name}` takes ({', '.join(found)}), not ({', '.join(expected)})"
    lowering = set(inspect.signature(ipc.interpret_pallas_call).parameters)
    if any(k not in lowering for k in LOWERING_KEYWORDS):
        return "the interpreter's `interpret_pallas_call` lacks a parameter the monitor reads"
    wait = tuple(inspect.signature(shared_memory.Semaphore.wait).parameters)
    if wait != ("self", "value", "global_core_id", "has_tasks", "logging_info"):
        return f"the interpreter's `Semaphore.wait` takes ({', '.join(wait)})"
    failed = tuple(inspect.signature(shared_memory.GenericSharedMemory.set_failed).parameters)
    if failed != ("self", "exception", "failed_thread", "top_level"):
        return f"the interpreter's `set_failed` takes ({', '.join(failed)})"
    if not all(hasattr(ipc.DMA, part) for part in ("execute_read", "execute_write")):
        return "the interpreter's DMA has no execute_read / execute_write"
    if not hasattr(thread_map, "_run_jaxpr") or not hasattr(ipc, "_shared_memory"):
        return "the interpreter's thread map or shared memory moved"
    return ""
