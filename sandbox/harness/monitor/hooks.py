"""The hooks: thin wrappers around JAX's TPU interpreter (jax 0.12.0.1), feeding one `Monitor`.

Interpret mode runs every ref access, DMA and semaphore operation of a kernel as a host callback into
module-level functions of `jax._src.pallas.mosaic.interpret.interpret_pallas_call`; a kernel looks
them up when it is lowered, so `install()` must run before user code is imported. The wrappers
- count what runs (grid steps, block copies, DMAs, ref and semaphore operations) for `progress`;
- note which simulated core each host thread is running, and when a core's work is done;
- attach to an exception the callback's arguments (which buffer, which range, which grid point), and
  keep the first failure of a run, the one the interpreter's own `set_failed` saw first;
- replay buffer and semaphore allocations into the `Book`, so ids get the user's names;
- note every wait on a semaphore (`Semaphore.wait`), for the deadlock watchdog;
- at a kernel's end (`_validate`, which in JAX only prints), list DMAs never waited for and
  semaphores left non-zero, as findings.
A wrapper costs a Python call and a dict update; the callbacks it wraps cost about a millisecond.

Guarded like `sandbox.harness.jaxapi.interpret_fixes`: on another JAX version, or when a wrapped function's
parameters differ from `SIGNATURES`, nothing is patched and `Monitor.reason` says why (errors are then
translated from their text alone, and there is no deadlock detection or progress).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import logging
import threading
from collections.abc import Callable
from typing import Any

from sandbox.harness.jaxapi import interpret, versions
from sandbox.harness.monitor import deadlock as dl
from sandbox.harness.monitor import racenames
from sandbox.harness.monitor.book import describe_kernel
from sandbox.harness.monitor.core import ChipMismatchError, Failure, Monitor, annotate, too_many_cores
from sandbox.harness.monitor.signatures import SIGNATURES, check
from sandbox.harness.monitor.source import source_info_location
from sandbox.protocol.chips import ChipInfo

# Callbacks whose arguments 1 and 2 are the device and the local core running them.
_ON_A_CORE = frozenset(
    {
        "get",
        "store",
        "swap",
        "dma_start",
        "dma_wait",
        "semaphore_signal",
        "semaphore_wait",
        "_check_for_revisiting",
    }
)
_COUNTED = {
    "dma_start": "dmas",
    "dma_wait": "semaphore_ops",
    "semaphore_signal": "semaphore_ops",
    "semaphore_wait": "semaphore_ops",
    "swap": "ref_ops",
    "_check_for_revisiting": "grid_steps",
}


def wrap_callback(monitor: Monitor, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    params = SIGNATURES[name]
    counter = _COUNTED.get(name)
    on_core = name in _ON_A_CORE
    after = getattr(monitor, f"after{name}" if name.startswith("_") else f"after_{name}", None)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        monitor.activity += 1
        if on_core and len(args) > 2:
            monitor.thread_core[threading.get_ident()] = (int(args[1]), int(args[2]))
        if counter is not None:
            monitor.counts[counter] += 1
        elif name in ("get", "store"):
            block = kwargs.get("input_name" if name == "get" else "output_name") is not None
            monitor.counts["block_copies" if block else "ref_ops"] += 1
        try:
            out = original(*args, **kwargs)
        except Exception as exc:
            annotate(exc, {"op": name, **dict(zip(params, args, strict=False)), **kwargs})
            raise
        if after is not None:
            after(out, {**dict(zip(params, args, strict=False)), **kwargs})
        return out

    functools.update_wrapper(wrapper, original)
    # The DMA engine calls `get.__wrapped__` / `store.__wrapped__` directly: keep those raw.
    wrapper.__wrapped__ = getattr(original, "__wrapped__", original)  # type: ignore[attr-defined]
    return wrapper


def wrap_initialize(monitor: Monitor, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def wrapper(
        token: Any, device_id: Any, num_devices: Any, num_cores: Any, *, interpret_params: Any
    ) -> Any:
        before = getattr(monitor.ipc, "_shared_memory", None)
        out = original(token, device_id, num_devices, num_cores, interpret_params=interpret_params)
        fresh = getattr(monitor.ipc, "_shared_memory", None) is not before
        device = int(device_id)
        kernel = getattr(interpret_params, "playground_kernel", None)
        monitor.book.launch(device, kernel, fresh)
        with monitor.lock:
            if fresh:
                monitor.finished.clear()
                monitor.last_signal.clear()
            monitor.finished -= {c for c in monitor.finished if c[0] == device}
        return out

    return wrapper


def wrap_validate(monitor: Monitor, original: Callable[..., Any]) -> Callable[..., Any]:
    # JAX's `_validate` only prints the first non-zero semaphore (to the user's stdout); the
    # findings here replace that print with every DMA in flight and every semaphore left over.
    @functools.wraps(original)
    def wrapper(token: Any, device_id: Any) -> Any:
        # A finding we cannot make must not fail a kernel that ran.
        with contextlib.suppress(Exception):
            monitor.find_leftovers(int(device_id))
        return token

    return wrapper


def wrap_clean_up(monitor: Monitor, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def wrapper(token: Any, device_id: Any) -> Any:
        shm = getattr(monitor.ipc, "_shared_memory", None)
        if shm is not None:
            device = int(device_id)
            with monitor.lock:
                monitor.finished |= {(device, c) for c in range(shm.num_cores_per_device)}
        return original(token, device_id)

    return wrapper


def wrap_lowering(
    monitor: Monitor, original: Callable[..., Any], tensor_core_mesh: type, params_with: Callable[..., Any]
) -> Callable[..., Any]:
    @functools.wraps(original)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            mesh = kwargs.get("mesh")
            on_mesh = isinstance(mesh, tensor_core_mesh)
            params = kwargs["interpret_params"]
            cores = int(getattr(mesh, "num_cores", 1)) if on_mesh else int(params.num_cores_or_threads)
            kernel = describe_kernel(kwargs, cores, on_mesh, monitor.files)
            kwargs["interpret_params"] = params_with(params, kernel)
        except Exception:  # the kernel runs unnamed rather than not at all
            cores, on_mesh = 1, False
        if on_mesh and monitor.chip is not None and cores > monitor.chip.device_tensor_cores:
            raise ChipMismatchError(too_many_cores(cores, monitor.chip))
        return original(*args, **kwargs)

    wrapper._playground_monitor = True  # type: ignore[attr-defined]
    return wrapper


def wrap_wait(monitor: Monitor, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def wait(
        sem: Any, value: Any, global_core_id: Any, *, has_tasks: bool = False, logging_info: Any = None
    ) -> Any:
        me = threading.get_ident()
        gci = int(global_core_id)
        device, core = sem.shared_memory.global_core_id_to_thread(gci)
        location = source_info_location(getattr(logging_info, "source_info", None), monitor.files)
        waiting = dl.Wait(device, core, sem.id, int(value), bool(has_tasks), location, sem, gci)
        queued = list(sem.tasks[gci])
        with monitor.lock:
            monitor.waits[me] = waiting
        try:
            out = original(sem, value, global_core_id, has_tasks=has_tasks, logging_info=logging_info)
        finally:
            with monitor.lock:
                monitor.waits.pop(me, None)
        if queued:
            monitor.note_overtaking(waiting, queued, list(sem.tasks[gci]))
        return out

    return wait


def wrap_dma_part(monitor: Monitor, original: Callable[..., Any], part: str) -> Callable[..., Any]:
    @functools.wraps(original)
    def run(dma: Any) -> Any:
        try:
            return original(dma)
        except Exception as exc:
            annotate(exc, {"op": f"dma {part}", "dma": dma})
            raise

    return run


def wrap_run_jaxpr(monitor: Monitor, original: Callable[..., Any]) -> Callable[..., Any]:
    # One simulated core of a multi-core kernel runs in its own thread (`thread_map`); when its
    # program returns, that core's work is done.
    @functools.wraps(original)
    def run(*args: Any, **kwargs: Any) -> Any:
        me = threading.get_ident()
        monitor.thread_core.pop(me, None)
        try:
            return original(*args, **kwargs)
        finally:
            core = monitor.thread_core.pop(me, None)
            if core is not None:
                with monitor.lock:
                    monitor.finished.add(core)

    return run


def wrap_set_failed(monitor: Monitor, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def set_failed(shm: Any, exception: Exception, failed_thread: Any = None, top_level: bool = True) -> Any:
        with monitor.lock:
            if monitor.failure is None:
                monitor.failure = Failure(exception, failed_thread)
        return original(shm, exception, failed_thread=failed_thread, top_level=top_level)

    return set_failed


def install(files: tuple[str, ...], chip: ChipInfo | None = None) -> Monitor:
    """Wrap the interpreter, if this JAX is the one the hooks were written for."""
    import jax

    if not versions.support(jax.__version__).internals:
        return Monitor(files, versions.pinned(jax.__version__, "interpreter monitor"))
    ipc: Any = interpret.interpreter()  # its functions are replaced below
    shared_memory, thread_map = interpret.shared_memory(), interpret.thread_map()
    if getattr(ipc.interpret_pallas_call, "_playground_monitor", False):
        return Monitor(files, "the interpreter is already monitored in this process")
    reason = check(ipc, shared_memory, thread_map)
    if reason:
        return Monitor(files, reason)
    monitor = Monitor(files, chip=chip)
    monitor.ipc = ipc
    for name in SIGNATURES:
        if name == "_initialize_shared_memory":
            setattr(ipc, name, wrap_initialize(monitor, getattr(ipc, name)))
        elif name == "_validate":
            setattr(ipc, name, wrap_validate(monitor, getattr(ipc, name)))
        elif name == "_clean_up_shared_memory":
            setattr(ipc, name, wrap_clean_up(monitor, getattr(ipc, name)))
        else:
            setattr(ipc, name, wrap_callback(monitor, name, getattr(ipc, name)))
    ipc.interpret_pallas_call = wrap_lowering(
        monitor, ipc.interpret_pallas_call, interpret.tensor_core_mesh(), _params_with_kernel
    )
    # Methods of the interpreter's classes, replaced on the class (every instance uses them).
    _patch(shared_memory.Semaphore, "wait", lambda f: wrap_wait(monitor, f))
    _patch(shared_memory.GenericSharedMemory, "set_failed", lambda f: wrap_set_failed(monitor, f))
    _patch(ipc.DMA, "execute_read", lambda f: wrap_dma_part(monitor, f, "read"))
    _patch(ipc.DMA, "execute_write", lambda f: wrap_dma_part(monitor, f, "write"))
    _patch(thread_map, "_run_jaxpr", lambda f: wrap_run_jaxpr(monitor, f))
    _patch(ipc, "callback", lambda module: _SourceInfoForWaits(module, ipc))
    monitor.pipelines.install()
    racenames.install(monitor.book)
    _keep_callback_log(monitor)
    dl.Watchdog(monitor.snapshot, monitor.declare_deadlock).start()
    return monitor


class _SourceInfoForWaits:
    """`ipc.callback` (the module jax._src.callback, as the interpreter sees it), passing the traced
    line to `semaphore_wait`.

    jax 0.12.0.1's interpreter hands every DMA and semaphore callback the `source_info` of the
    operation it interprets, except `semaphore_wait`, whose callback it stages out bare; a stuck wait
    could then not say its line. It stages callbacks inside `source_info_util.user_context(...)` of
    the operation, so the line is the current one when `io_callback` is called for it.
    """

    def __init__(self, module: Any, ipc: Any) -> None:
        self._module = module
        self._ipc = ipc

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)

    def io_callback(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        if fn is self._ipc.semaphore_wait:  # whoever wraps it last (the trace capture, too)
            fn = functools.partial(fn, source_info=interpret.current_source_info())
        return self._module.io_callback(fn, *args, **kwargs)


def _patch(owner: Any, name: str, wrap: Callable[[Any], Any]) -> None:
    setattr(owner, name, wrap(getattr(owner, name)))


class _CallbackLog(logging.Handler):
    """JAX logs every failed callback, traceback and all, to stderr (the user's); keep it for the log."""

    def __init__(self, kept: list[str]) -> None:
        super().__init__(level=logging.DEBUG)
        self.kept = kept

    def emit(self, record: logging.LogRecord) -> None:
        if len(self.kept) < 20:
            self.kept.append(self.format(record))


def _keep_callback_log(monitor: Monitor) -> None:
    logger = logging.getLogger(interpret.CALLBACK_LOGGER)
    logger.addHandler(_CallbackLog(monitor.callback_log))
    logger.propagate = False


_PARAMS_TYPES: dict[type, type] = {}


def _params_type(base: type) -> type:
    """`base` (an InterpretParams class) with one more field, the KernelInfo of the kernel it runs."""
    if base in _PARAMS_TYPES:
        return _PARAMS_TYPES[base]
    field = ("playground_kernel", Any, dataclasses.field(default=None))
    _PARAMS_TYPES[base] = dataclasses.make_dataclass(
        f"Monitored{base.__name__}", [field], bases=(base,), frozen=True, kw_only=True
    )
    return _PARAMS_TYPES[base]


def _params_with_kernel(params: Any, kernel: Any) -> Any:
    # The kernel description rides on the params because `_initialize_shared_memory` receives them
    # at the start of every launch (even after the interpreter's own `dataclasses.replace`).
    values = {f.name: getattr(params, f.name) for f in dataclasses.fields(params) if f.init}
    return _params_type(type(params))(**{**values, "playground_kernel": kernel})
