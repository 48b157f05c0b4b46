"""Which buffer and which semaphore is which: the user's names for the interpreter's numbers.

TPU interpret mode knows a kernel's memory as `(device core space id)` tuples and semaphores as
integers from 2000 up. What a learner knows is `y_ref`, `acc_ref` and `sem`. `describe_kernel` reads,
when a kernel is lowered, every operand the interpreter will allocate, in the order it allocates
them (jax 0.12.0.1's `interpret_pallas_call`: the HBM arrays of the inputs, then of the outputs that
do not alias an input, then the scalar-prefetch operands in SMEM, then one allocation per kernel
parameter that does not live in HBM: a semaphore array, or a VMEM/SMEM buffer for a block or a
scratch ref). At run time `Book` replays that order against the ids the interpreter hands out, so an
id maps back to a name. Allocations after that prologue come from `run_scoped` (and so from
`emit_pipeline`'s buffers); they are named by the line that made them.

Pure bookkeeping over duck-typed JAX objects: no JAX import, so the rules are unit-testable.
"""

from __future__ import annotations

import dataclasses
import math
import threading
from typing import Any

from sandbox.harness.monitor.source import Location, location_of_function_info


@dataclasses.dataclass(frozen=True)
class Operand:
    """One kernel parameter, as the user wrote it."""

    name: str  # the kernel's parameter name ("y_ref"), or "input 1" when JAX does not know it
    role: str  # "input", "output", "input and output", "scalar prefetch", "scratch"
    index: int  # position among operands of its role (0-based)
    shape: tuple[int, ...]  # the whole array (inputs/outputs) or the scratch ref's shape
    dtype: str
    space: str  # "hbm", "vmem", "smem", "semaphore", "any"
    block_shape: tuple[int, ...] | None = None  # the BlockSpec's block (pallas_call grid operands)
    index_map: Location | None = None  # where the BlockSpec's index map is defined

    def describe(self) -> str:
        """`y_ref` (input 2, f32[256, 256])"""
        shape = ", ".join(str(n) for n in self.shape)
        what = {"scratch": "scratch", "scalar prefetch": "scalar prefetch"}.get(self.role, self.role)
        number = f" {self.index + 1}" if self.role not in ("scratch",) else ""
        return f"`{self.name}` ({what}{number}, {_short_dtype(self.dtype)}[{shape}])"


@dataclasses.dataclass(frozen=True)
class KernelInfo:
    """What lowering tells about one kernel; rides on its InterpretParams to the run (hashable)."""

    name: str
    location: Location | None
    grid: tuple[int | None, ...]  # None: a dynamic grid dimension
    grid_names: tuple[str, ...]
    operands: tuple[Operand, ...]
    # The prologue, in the interpreter's order: ("buffer" | "semaphore", operand index, what it holds).
    allocations: tuple[tuple[str, int, str], ...]
    cores: int  # simulated cores per device
    on_mesh: bool  # a pl.kernel / core_map over a TensorCoreMesh

    def operand_named(self, name: str) -> Operand | None:
        return next((o for o in self.operands if o.name == name), None)


@dataclasses.dataclass(frozen=True)
class Named:
    """A buffer or semaphore the book knows: whose it is and what it holds."""

    operand: Operand | None
    what: str  # "array", "block buffer", "scratch", "semaphore", "run_scoped buffer", …
    element: tuple[int, ...] = ()  # for one semaphore of a semaphore array
    location: Location | None = None  # for run_scoped allocations: the line that made them
    kernel: KernelInfo | None = None

    def describe(self) -> str:
        if self.operand is None:
            where = f" made at line {self.location.line}" if self.location and self.location.line else ""
            return f"a {self.what}{where}"
        name = self.operand.name + "".join(f"[{i}]" for i in self.element)
        if self.what == "semaphore":
            return f"semaphore `{name}`"
        if self.what == "block buffer":
            return f"the VMEM block buffer of `{self.operand.name}`"
        return self.operand.describe()


def describe_kernel(kwargs: dict[str, Any], cores: int, on_mesh: bool, files: tuple[str, ...]) -> KernelInfo:
    """A KernelInfo from `interpret_pallas_call`'s keyword arguments (jax 0.12.0.1)."""
    mapping, jaxpr = kwargs["grid_mapping"], kwargs["jaxpr"]
    debug = getattr(jaxpr, "debug_info", None)
    names = list(getattr(debug, "arg_names", None) or ())
    n_index, n_in, n_out = mapping.num_index_operands, mapping.num_inputs, mapping.num_outputs
    aliased_outputs = {out: i - n_index for i, out in kwargs.get("input_output_aliases", ())}
    operands: list[Operand] = []
    for position, var in enumerate(jaxpr.invars):
        operands.append(_operand(position, var, names, mapping, aliased_outputs, files))
    grid = tuple(d if isinstance(d, int) else None for d in mapping.grid)
    return KernelInfo(
        name=str(kwargs.get("name") or getattr(debug, "func_name", "") or "kernel").split(".")[-1],
        location=location_of_function_info(getattr(debug, "func_src_info", None), files),
        grid=grid,
        grid_names=_grid_names(mapping, len(grid)),
        operands=tuple(operands),
        allocations=_prologue(operands, n_index, n_in, n_out, aliased_outputs),
        cores=cores,
        on_mesh=on_mesh,
    )


def _operand(
    position: int,
    var: Any,
    names: list[str],
    mapping: Any,
    aliased_outputs: dict[int, int],
    files: tuple[str, ...],
) -> Operand:
    n_index, n_in, n_out = mapping.num_index_operands, mapping.num_inputs, mapping.num_outputs
    aval = getattr(var, "aval", None)
    inner = getattr(aval, "inner_aval", aval)
    shape = tuple(int(n) for n in getattr(inner, "shape", ()) if isinstance(n, int))
    dtype = str(getattr(inner, "dtype", ""))
    space = memory_space_name(getattr(aval, "memory_space", None))
    name = names[position] if position < len(names) and names[position] else ""
    block = position - n_index
    if position < n_index:
        return Operand(name or f"prefetch {position}", "scalar prefetch", position, shape, dtype, "smem")
    if block < n_in + n_out:
        bm = mapping.block_mappings[block]
        is_output = block >= n_in
        role = "output" if is_output else "input"
        index = block - n_in if is_output else block
        if not is_output and index in aliased_outputs.values():
            role = "input and output"
        array = tuple(int(n) for n in bm.array_aval.shape)
        block_space = memory_space_name(getattr(bm.block_aval, "memory_space", None))
        index_info = getattr(getattr(bm.index_map_jaxpr, "jaxpr", None), "debug_info", None)
        return Operand(
            name or f"{role} {index + 1}",
            role,
            index,
            array,
            str(bm.array_aval.dtype),
            block_space,
            block_shape=tuple(block_size(d) for d in bm.block_shape),
            index_map=location_of_function_info(getattr(index_info, "func_src_info", None), files),
        )
    index = block - n_in - n_out
    return Operand(name or f"scratch {index + 1}", "scratch", index, shape, dtype, space)


def _prologue(
    operands: list[Operand], n_index: int, n_in: int, n_out: int, aliased_outputs: dict[int, int]
) -> tuple[tuple[str, int, str], ...]:
    steps: list[tuple[str, int, str]] = []
    steps += [("buffer", n_index + i, "array") for i in range(n_in)]
    steps += [("buffer", n_index + n_in + j, "array") for j in range(n_out) if j not in aliased_outputs]
    steps += [("buffer", i, "array") for i in range(n_index)]
    for position in range(n_index, len(operands)):
        operand = operands[position]
        if operand.space == "semaphore":
            steps.append(("semaphore", position, "semaphore"))
        elif operand.space not in ("hbm", "any"):
            steps.append(("buffer", position, "scratch" if operand.role == "scratch" else "block buffer"))
    return tuple(steps)


def _grid_names(mapping: Any, rank: int) -> tuple[str, ...]:
    """The grid axes as the index maps name them (`i, j, k`), else `axis 0`, `axis 1`, …"""
    for bm in mapping.block_mappings:
        info = getattr(getattr(bm.index_map_jaxpr, "jaxpr", None), "debug_info", None)
        names = tuple(getattr(info, "arg_names", None) or ())[:rank]
        if len(names) == rank and all(n.isidentifier() for n in names):
            return names
    return tuple(f"axis {d}" for d in range(rank))


def memory_space_name(space: Any) -> str:
    text = str(getattr(space, "value", space)).lower()
    for known in ("semaphore", "vmem_shared", "vmem", "smem", "hbm", "any"):
        if known in text:
            return known
    return "vmem"  # pallas's default memory space is VMEM on a TPU


def block_size(dim: Any) -> int:
    # Blocked / Element / BoundedSlice carry `block_size`; Squeezed (and `None`) is one row.
    size = getattr(dim, "block_size", None)
    return int(size) if size is not None else (int(dim) if isinstance(dim, int) else 1)


def _short_dtype(dtype: str) -> str:
    return {"float32": "f32", "bfloat16": "bf16", "float16": "f16", "int32": "i32", "int8": "i8"}.get(
        dtype, dtype
    )


@dataclasses.dataclass
class _Launch:
    kernel: KernelInfo | None
    next_step: int = 0


class Book:
    """Buffer and semaphore ids → names, for the launches of this process (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._launches: dict[int, _Launch] = {}
        self._buffers: dict[tuple[str, int, int], Named] = {}  # (space, id, device)
        self._semaphores: dict[int, Named] = {}
        self.last_kernel: KernelInfo | None = None

    def launch(self, device: int, kernel: KernelInfo | None, fresh: bool) -> None:
        """A kernel starts on `device`; `fresh` when the interpreter made a new shared memory for it."""
        with self._lock:
            self._launches[device] = _Launch(kernel)
            if fresh:  # buffer and semaphore ids restart with the interpreter's shared memory
                self._buffers.clear()
                self._semaphores.clear()
            if kernel is not None:
                self.last_kernel = kernel

    def kernel(self, device: int) -> KernelInfo | None:
        launch = self._launches.get(device)
        return launch.kernel if launch else None

    def buffer_allocated(
        self, device: int, shared: bool, space: str, buffer_id: int, location: Location | None
    ) -> None:
        with self._lock:
            launch = self._launches.get(device)
            named = Named(None, f"{space.upper()} buffer from run_scoped", location=location)
            if launch is not None and launch.kernel is not None and shared:
                step = self._next(launch, "buffer")
                if step is not None:
                    _, position, what = step
                    named = Named(launch.kernel.operands[position], what, kernel=launch.kernel)
            self._buffers[(space, buffer_id, device)] = named

    def semaphores_allocated(self, device: int, shared: bool, first: int, shape: tuple[int, ...]) -> None:
        with self._lock:
            launch = self._launches.get(device)
            step = None
            if launch is not None and launch.kernel is not None and shared:
                step = self._next(launch, "semaphore")
            count = math.prod(shape)
            for offset in range(count):
                if step is not None and launch is not None and launch.kernel is not None:
                    element = _unravel(offset, shape)
                    named = Named(launch.kernel.operands[step[1]], "semaphore", element, kernel=launch.kernel)
                else:
                    named = Named(None, "semaphore from run_scoped (e.g. emit_pipeline's DMA semaphores)")
                self._semaphores.setdefault(first + offset, named)

    def barrier_semaphore(self, sem_id: int) -> None:
        with self._lock:
            self._semaphores.setdefault(
                sem_id, Named(None, "barrier semaphore (pltpu.get_barrier_semaphore)")
            )

    def buffer(self, space: str, buffer_id: int, device: int) -> Named | None:
        with self._lock:
            return self._buffers.get((space, buffer_id, device))

    def semaphore(self, sem_id: int) -> Named | None:
        with self._lock:
            return self._semaphores.get(sem_id)

    def _next(self, launch: _Launch, kind: str) -> tuple[str, int, str] | None:
        steps = launch.kernel.allocations if launch.kernel else ()
        if launch.next_step >= len(steps) or steps[launch.next_step][0] != kind:
            return None
        step = steps[launch.next_step]
        launch.next_step += 1
        return step


def _unravel(offset: int, shape: tuple[int, ...]) -> tuple[int, ...]:
    if not shape:
        return ()
    index = []
    for size in reversed(shape):
        index.append(offset % size)
        offset //= size
    return tuple(reversed(index))
