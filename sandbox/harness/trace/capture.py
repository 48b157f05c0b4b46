"""Kernel trace capture: the TPU interpreter's callbacks, recorded during the first call of a case.

TPU interpret mode runs every DMA, semaphore operation and ref access of a kernel as a host callback
into module-level functions of `jax._src.pallas.mosaic.interpret.interpret_pallas_call`. A kernel
looks them up when it is traced, so `install()` wraps them before user code is imported; while
`recording()` is active each wrapper notes what its callback did (`sandbox.harness.trace.records`), with
host times. Besides those:
- `interpret_pallas_call`, called when a kernel is lowered, tells each kernel's operands and, for a
  pallas_call grid, is given `InterpretParams(grid_point_recorder=...)`, which reports every grid
  point with its core;
- `_initialize_shared_memory` marks where a launch begins on a device, and `_allocate_buffer` which
  buffer ids the launch gave its operands, with every buffer's dtype and shape.
The DMA engine calls `get.__wrapped__` / `store.__wrapped__` directly; the wrappers keep those, so the
data a DMA moves is not counted again as a load or a store. Outside `recording()` a wrapper only
passes the call on, and kernels lowered then get no grid-point recorder.

Written for jax 0.12.0.1 and guarded like `sandbox.harness.jaxapi.interpret_fixes`: on another version, or if a
wrapped function's parameters differ, nothing is patched and the trace says why it is unavailable.
What the records mean (steps, the grid view, caps) is `sandbox.harness.trace.timeline`'s job.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import functools
import inspect
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from sandbox.harness.jaxapi import interpret, versions
from sandbox.harness.trace import timeline
from sandbox.harness.trace.records import Kernel, Recorder, describe
from sandbox.protocol.trace import Trace

# Records kept in memory; later ones are only counted (a kernel that long hits the wall clock first).
RAW_LIMIT = 50_000

# The parameters of every wrapped function in jax 0.12.0.1; the recorders read arguments by these names.
SIGNATURES: dict[str, tuple[str, ...]] = {
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
    "_allocate_buffer": (
        "token", "device_id", "local_core_id", "memory_space", "val", "padded_shape", "source_info",
    ),
    "_initialize_shared_memory": (
        "token", "device_id", "num_devices", "num_cores_per_device", "interpret_params",
    ),
}  # fmt: skip
LOWERING_KEYWORDS = ("jaxpr", "grid_mapping", "input_output_aliases", "mesh", "interpret_params", "name")


class Capture:
    """Wraps the interpreter once; `recording()` arms it, `result()` shapes what it saw into a `Trace`."""

    def __init__(self, reason: str = "") -> None:
        self.reason = reason  # why there is no trace; "" when there can be one
        self._lock = threading.Lock()
        self._armed = False
        self._space_names: dict[int, str] = {}
        self._to_range: Callable[[Any], Any] = lambda transforms: ()
        self._tensor_core_mesh: type = type(None)
        self._params_type: type = type(None)
        self._reset()

    @property
    def available(self) -> bool:
        return not self.reason

    def _reset(self) -> None:
        self._t0 = time.perf_counter()
        self.seconds = 0.0
        self.records: list[dict[str, Any]] = []
        self.counts: collections.Counter[str] = collections.Counter()
        self.failures: list[str] = []
        self.recorder = Recorder(self._space_names, self._to_range)

    @contextlib.contextmanager
    def recording(self) -> Iterator[None]:
        """Record every interpreter callback made inside the block (e.g. one kernel call)."""
        with self._lock:
            self._reset()
            self._armed = self.available
        try:
            yield
        finally:
            self._armed = False
            self.seconds = time.perf_counter() - self._t0

    def result(self, case: str, hbm_bandwidth: float) -> Trace:
        """What the last `recording()` saw, as the protocol's `Trace`."""
        if not self.available:
            return Trace(available=False, reason=self.reason)
        return timeline.build(
            self.records,
            operands=self.recorder.operands,
            counts=dict(self.counts),
            seconds=self.seconds,
            case=case,
            hbm_bandwidth=hbm_bandwidth,
            failures=self.failures,
        )

    def wrap(
        self, ipc: Any, to_range: Callable[[Any], Any], tensor_core_mesh: type, params_type: type
    ) -> None:
        """Put the recording wrappers in place of the interpreter's functions (module `ipc`)."""
        self._space_names = {i: ("hbm" if n == "any" else n) for i, n in ipc.TPU_MEMORY_SPACE_NAMES.items()}
        self._to_range = to_range
        self._tensor_core_mesh = tensor_core_mesh
        kernel_field = ("kernel", Any, dataclasses.field(default=None))
        self._params_type = dataclasses.make_dataclass(
            "TracedInterpretParams", [kernel_field], bases=(params_type,), frozen=True, kw_only=True
        )
        for name in SIGNATURES:
            setattr(ipc, name, self._wrapped(name, getattr(ipc, name)))
        ipc.interpret_pallas_call = self._lowering(ipc.interpret_pallas_call)

    def _wrapped(self, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        params = SIGNATURES[name]

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if not self._armed:
                return original(*args, **kwargs)
            start = time.perf_counter()
            out = original(*args, **kwargs)
            self._note(name, start, out, {**dict(zip(params, args, strict=False)), **kwargs})
            return out

        functools.update_wrapper(wrapper, original)
        # The DMA engine calls `get.__wrapped__` (the undecorated function) directly: keep it that.
        wrapper.__wrapped__ = getattr(original, "__wrapped__", original)  # type: ignore[attr-defined]
        return wrapper

    def _lowering(self, original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if self._armed:
                try:
                    kwargs["interpret_params"] = self._traced_params(kwargs)
                except Exception as exc:  # the kernel still runs, with its operands left unnamed
                    self._failed("interpret_pallas_call", exc)
            return original(*args, **kwargs)

        wrapper._playground_trace = True  # type: ignore[attr-defined]
        return wrapper

    def _traced_params(self, kwargs: dict[str, Any]) -> Any:
        """The kernel's InterpretParams, carrying its description and, for a grid, a grid-point recorder.

        The description rides on the params because `_initialize_shared_memory` receives them (even
        after the interpreter's own `dataclasses.replace`). On a TensorCore mesh the recorder would
        only mark each core's start, yet it stays in the compiled kernel and costs ~4 ms a call in
        the timing repeats, so those kernels get none.
        """
        kernel = describe(kwargs, self._tensor_core_mesh)
        params = kwargs["interpret_params"]
        recorder = params.grid_point_recorder
        if not kernel.on_cores:
            recorder = GridPoints(self, kernel, recorder)
        values = {f.name: getattr(params, f.name) for f in dataclasses.fields(params) if f.init}
        return self._params_type(**{**values, "grid_point_recorder": recorder, "kernel": kernel})

    def _note(self, name: str, start: float, out: Any, args: dict[str, Any]) -> None:
        end = time.perf_counter()
        try:
            with self._lock:
                record = getattr(self.recorder, name.lstrip("_"))(out, args)
                if record is not None:
                    self._add(record, start, end - start)
        except Exception as exc:  # the kernel runs on even if a record cannot be made; the note says so
            self._failed(name, exc)

    def _failed(self, name: str, exc: Exception) -> None:
        with self._lock:
            if len(self.failures) < 5:
                self.failures.append(f"{name}: {exc!r}")

    def _add(self, record: dict[str, Any], start: float, dur: float) -> None:
        self.counts[record["kind"]] += 1
        if len(self.records) < RAW_LIMIT:
            record.update(t=start - self._t0, dur=dur, thread=threading.get_ident())
            self.records.append(record)

    def grid_point(self, kernel: Kernel, grid_point: Any, core_id: Any) -> None:
        if not self._armed:
            return
        start = time.perf_counter()
        with self._lock:
            self._add(self.recorder.grid_point(kernel, grid_point, core_id), start, 0.0)


class GridPoints:
    """`InterpretParams.grid_point_recorder` for one kernel: `(token, grid_point, core_id) -> token`."""

    def __init__(self, capture: Capture, kernel: Kernel, chained: Callable[..., Any] | None) -> None:
        self.capture = capture
        self.kernel = kernel
        self.chained = chained  # a recorder the user's own InterpretParams asked for

    def __call__(self, token: Any, grid_point: Any, core_id: Any) -> Any:
        self.capture.grid_point(self.kernel, grid_point, core_id)
        if self.chained is not None:
            return self.chained(token, grid_point, core_id)
        return token


def install() -> Capture:
    """Wrap the interpreter for tracing, if this JAX is the one the wrappers were written for."""
    import jax

    if not versions.support(jax.__version__).internals:
        return Capture(versions.pinned(jax.__version__, "kernel trace"))
    ipc = interpret.interpreter()
    if getattr(ipc.interpret_pallas_call, "_playground_trace", False):
        return Capture("the interpreter is already wrapped for tracing in this process")
    reason = check(ipc)
    if reason:
        return Capture(reason)
    capture = Capture()
    capture.wrap(ipc, interpret.to_range, interpret.tensor_core_mesh(), interpret.interpret_params_type())
    return capture


def check(ipc: Any) -> str:
    """'' if the interpreter has every function we wrap, with the parameters we read; else why not."""
    for name, expected in SIGNATURES.items():
        fn = getattr(ipc, name, None)
        if fn is None:
            return f"the interpreter has no `{name}` to trace"
        found = tuple(inspect.signature(fn).parameters)
        if found != expected:
            return f"the interpreter's `{name}` takes ({', '.join(found)}), not ({', '.join(expected)})"
    lowering = getattr(ipc, "interpret_pallas_call", None)
    params = set(inspect.signature(lowering).parameters) if lowering is not None else set()
    missing = [k for k in LOWERING_KEYWORDS if k not in params]
    if missing:
        return f"the interpreter's `interpret_pallas_call` lacks {', '.join(missing)}"
    if not hasattr(ipc, "TPU_MEMORY_SPACE_NAMES"):
        return "the interpreter has no memory-space table to name buffers with"
    if "grid_point_recorder" not in {f.name for f in dataclasses.fields(interpret.interpret_params_type())}:
        return "InterpretParams has no grid_point_recorder"
    return ""
