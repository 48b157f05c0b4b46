"""`emit_pipeline` calls, as the user wrote them: grid, BlockSpecs and the refs each spec pipelines.

Inside `pl.kernel` a pipeline's BlockSpecs never reach the interpreter as such: they become DMAs in
the kernel body, and an index map that points past an array shows up as an out-of-bounds read of
"(0 0 hbm 101)". To say which BlockSpec did it, and at which grid step, the public
`pltpu.emit_pipeline` is wrapped (before user code is imported): each call made from the user's file
is recorded with its grid, its specs (block shape, index map and the index map's line) and, when the
pipeline is applied to refs, the names those refs have in the calling function. `step_of` later
replays an index map over the grid, in Python, to find the first grid step that asks for a block.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from sandbox.harness.monitor.book import block_size
from sandbox.harness.monitor.source import Location, location_of_function, unwrap

MAX_RECORDS = 200
MAX_STEPS = 100_000  # grid points replayed when looking for a block


@dataclasses.dataclass
class Spec:
    role: str  # "input" | "output"
    index: int
    block_shape: tuple[int, ...]
    index_map: Callable[..., Any] | None
    location: Location | None  # where the index map is defined
    ref_name: str = ""  # the name of the ref this spec pipelines, in the function that applied it


@dataclasses.dataclass
class PipelineCall:
    location: Location | None  # the emit_pipeline(...) call
    grid: tuple[Any, ...]
    specs: list[Spec]
    core_axis_name: Any = None
    dimension_semantics: Any = None

    def grid_names(self) -> tuple[str, ...]:
        for spec in self.specs:
            code = getattr(unwrap(spec.index_map), "__code__", None)
            if code is not None and code.co_argcount >= len(self.grid):
                return tuple(code.co_varnames[: len(self.grid)])
        return tuple(f"axis {d}" for d in range(len(self.grid)))

    def static_grid(self) -> tuple[int, ...] | None:
        try:
            return tuple(int(d) for d in self.grid)
        except Exception:
            return None


class Pipelines:
    def __init__(self, files: tuple[str, ...]) -> None:
        self.files = files
        self._lock = threading.Lock()
        self.calls: list[PipelineCall] = []

    def install(self) -> None:
        from jax.experimental.pallas import tpu as pltpu

        if getattr(pltpu.emit_pipeline, "_playground_pipelines", False):
            return
        pltpu.emit_pipeline = self._wrap(pltpu.emit_pipeline)

    def _wrap(self, original: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(original)
        def emit_pipeline(body: Any, *args: Any, **kwargs: Any) -> Any:
            pipeline = original(body, *args, **kwargs)
            call = self._record(kwargs, _caller(self.files))
            if call is None:
                return pipeline
            return self._applied(pipeline, call)

        emit_pipeline._playground_pipelines = True  # type: ignore[attr-defined]
        return emit_pipeline

    def _record(self, kwargs: dict[str, Any], where: Location | None) -> PipelineCall | None:
        if where is None:
            return None  # made by library code, not in the user's file
        try:
            specs = [_spec("input", i, s, self.files) for i, s in enumerate(_listed(kwargs.get("in_specs")))]
            specs += [
                _spec("output", i, s, self.files) for i, s in enumerate(_listed(kwargs.get("out_specs")))
            ]
            call = PipelineCall(
                where,
                tuple(kwargs.get("grid", ())),
                specs,
                kwargs.get("core_axis_name"),
                kwargs.get("dimension_semantics"),
            )
        except Exception:  # a spec we cannot read: no record, the pipeline still runs
            return None
        with self._lock:
            if len(self.calls) < MAX_RECORDS:
                self.calls.append(call)
        return call

    def _applied(self, pipeline: Callable[..., Any], call: PipelineCall) -> Callable[..., Any]:
        @functools.wraps(pipeline)
        def applied(*refs: Any, **kwargs: Any) -> Any:
            names = _local_names(sys._getframe(1), refs)
            for spec, name in zip(call.specs, names, strict=False):
                spec.ref_name = spec.ref_name or name
            return pipeline(*refs, **kwargs)

        return applied

    def find(self, ref_name: str, block: tuple[int, ...]) -> list[PipelineCall]:
        """Pipelines that move blocks of this shape of a ref with this name (most recent first)."""
        with self._lock:
            calls = list(reversed(self.calls))
        return [c for c in calls if any(s.ref_name == ref_name and s.block_shape == block for s in c.specs)]


def step_of(call: PipelineCall, spec: Spec, block: tuple[int, ...]) -> tuple[int, ...] | None:
    """The first grid point (in grid order) at which `spec`'s index map returns `block`."""
    grid = call.static_grid()
    if grid is None or spec.index_map is None:
        return None
    for point in itertools.islice(itertools.product(*(range(n) for n in grid)), MAX_STEPS):
        try:
            got = spec.index_map(*point)
            indices = tuple(int(i) for i in (got if isinstance(got, tuple) else (got,)))
        except Exception:  # an index map that needs the kernel's traced values cannot be replayed
            return None
        if indices == block:
            return point
    return None


def _spec(role: str, index: int, spec: Any, files: tuple[str, ...]) -> Spec:
    index_map = getattr(spec, "index_map", None)
    shape = getattr(spec, "block_shape", None) or ()
    return Spec(
        role, index, tuple(block_size(d) for d in shape), index_map, location_of_function(index_map, files)
    )


def _listed(specs: Any) -> list[Any]:
    if specs is None:
        return []
    if isinstance(specs, (list, tuple)):
        return list(specs)
    return [specs]


def _caller(files: tuple[str, ...]) -> Location | None:
    """The innermost frame of the stack that is in the user's files."""
    for frame in _frames(sys._getframe(2)):
        if frame.f_code.co_filename in files:
            return Location(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
    return None


def _frames(frame: Any) -> Iterator[Any]:
    while frame is not None:
        yield frame
        frame = frame.f_back


def _local_names(frame: Any, refs: tuple[Any, ...]) -> list[str]:
    """For each ref, the name it has among the caller's local variables (or "")."""
    found = []
    local = frame.f_locals.items()
    for ref in refs:
        found.append(next((name for name, value in local if value is ref), ""))
    return found
