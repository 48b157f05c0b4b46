"""A `pallas_call` as the model sees it: its grid, which blocks each step copies, what its body does.

Every grid step's block indices come from evaluating the BlockSpecs' index maps over the whole grid
at once (numpy arrays over the steps), scalar-prefetch tables included when their values are
known. A block is copied when its index differs from the previous step's on the same core
(revisits skip the copy); an output block is written back when its index is about to change.
The body's work per step comes from `walker.Walker` in grid mode. A body that starts its own DMAs
or signals semaphores is simulated step by step instead (`cost.Program`), with the same block copies.

A grid runs on one TensorCore unless it is split across the chip's TensorCores: a dimension marked
`pltpu.CORE_PARALLEL` (the outermost such one, in contiguous parts) on any chip with several, or,
on a megacore chip (v5p: its two TensorCores are one JAX device), the grid's leading "parallel"
dimensions (vmapped axes are "parallel", as Pallas lowers them). That is what JAX's Pallas TPU
pipelining guide states ("By specifying `dimension_semantics`, we now execute the kernel
simultaneously on each TensorCore"; a no-op on chips without megacore) and how JAX's own TPU
interpret mode divides a grid between a device's cores: the subgrid of the leading "parallel"
dimensions, flattened in grid order, in contiguous parts of ceil(points / cores)
(`interpret_pallas_call.py`, jax-ml/jax@cec06d1).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from sandbox.harness.model import families
from sandbox.harness.model.cost import Event, Grid, Program, Wait
from sandbox.harness.model.evaluate import UNKNOWN, Ref, inner, itemsize, size, space_of
from sandbox.harness.model.ops import jaxpr_of
from sandbox.harness.model.walker import ModelLimitError, Walker
from sandbox.protocol.chips import ChipInfo

MAX_GRID_STEPS = 1 << 22


class _Operand:
    """One BlockSpec'd operand: its block bytes, block index per step, where its block lives."""

    def __init__(
        self, name: str, block_bytes: int, array_bytes: int, space: str, index: Any, scalar_ops: Any = 0
    ) -> None:
        self.name, self.block_bytes, self.array_bytes, self.space, self.index = (
            name,
            block_bytes,
            array_bytes,
            space,
            index,
        )
        self.scalar_ops = scalar_ops  # per step: the index map's scalar operations (table lookups)

    @property
    def copied(self) -> bool:
        return self.space in ("vmem", "smem")


def kernel_name(eqn: Any) -> str:
    name = eqn.params.get("name")
    if name:
        return str(name)
    info = getattr(jaxpr_of(eqn.params.get("jaxpr")), "debug_info", None)
    return str(getattr(info, "func_name", None) or "kernel")


def model_pallas_call(eqn: Any, known: Sequence[Any], chip: ChipInfo) -> Grid | Program:
    """`known`: a value per operand of the call (numpy arrays for small known ones, else None)."""
    mapping = eqn.params["grid_mapping"]
    name = kernel_name(eqn)
    dynamic = int(getattr(mapping, "num_dynamic_grid_bounds", 0) or 0)
    grid = _grid(name, mapping.grid, known[:dynamic]) or (1,)
    known = known[dynamic:]  # then the scalar-prefetch operands, then the inputs
    steps = math.prod(grid)
    if steps > MAX_GRID_STEPS:
        raise ModelLimitError(f"{name}: {steps:,} grid steps, more than the model walks ({MAX_GRID_STEPS:,})")
    if steps == 0:
        raise ModelLimitError(f"{name}: its grid {grid} has no steps at this size")
    ids = np.indices(grid).reshape(len(grid), -1).astype(np.int32)
    core, cores = _cores(grid, ids, eqn.params.get("compiler_params"), mapping, chip)
    if cores > 1:  # each core's steps together, in grid order within the core
        order = np.argsort(core, kind="stable")
        ids, core = ids[:, order], core[order]
    program_ids = {axis: ids[axis] for axis in range(len(mapping.grid))}
    notes: list[str] = []
    if dynamic:
        notes.append(f"its grid {grid} was sized by values computed from the inputs at this size")
    prefetch = [
        _smem_ref(("prefetch", i), var, known[i] if i < len(known) else None)
        for i, var in enumerate(eqn.invars[dynamic : dynamic + mapping.num_index_operands])
    ]
    if any(r.values is None for r in prefetch):
        notes.append(
            "scalar-prefetch values are unknown at this size: blocks they pick are assumed to change every step"
        )
    operands = [_operand(bm, program_ids, prefetch, grid, steps) for bm in mapping.block_mappings]
    body = jaxpr_of(eqn.params["jaxpr"])
    env = _body_env(body, prefetch, operands, mapping)
    axes = _user_axes(mapping, grid)
    walker = Walker(
        steps=steps,
        program_ids={user: ids[axis] for user, axis in enumerate(axes)},
        grid=tuple(grid[axis] for axis in axes),
        sublanes=chip.sublanes,
        mxu=chip.mxu_size,
    )
    # The grid-mode walk forgets SMEM it cannot track per step (`Walker._swap`): it walks copies of the
    # scalar-prefetch refs, so a self-synchronising body's step-by-step walk (`_program`) starts from
    # their values (JAX's paged attention reads its init flag and buffer index there).
    walker.run(body, _body_env(body, [_smem_copy(r) for r in prefetch], operands, mapping))
    notes += sorted(n for n in walker.notes if n)
    inputs, outputs = operands[: mapping.num_inputs], operands[mapping.num_inputs :]
    changed = {id(o): _changed(o.index, core, steps) for o in operands}
    min_bytes = float(sum(_distinct_bytes(o) for o in operands))
    if walker.syncs:
        return _program(
            name, eqn, body, env, grid, ids, core, cores, inputs, outputs, changed, min_bytes, notes, chip
        )
    copy_in = sum((o.block_bytes * changed[id(o)] for o in inputs if o.copied), start=np.zeros(steps))
    last = np.append(core[1:] != core[:-1], True)
    copy_out = np.zeros(steps)
    # DMAs each step starts: the next step's changed blocks, and its own write-backs.
    dmas = sum(
        (np.append(changed[id(o)][1:], False) & ~last for o in inputs if o.copied), start=np.zeros(steps)
    )
    for o in outputs:
        if o.copied:
            written = np.append(changed[id(o)][1:], True) | last
            copy_out += o.block_bytes * written
            dmas = dmas + written
    index_ops = sum(o.scalar_ops for o in operands)
    return Grid(
        kernel=name,
        core=core,
        points=ids.T,
        copy_in=copy_in,
        copy_out=copy_out,
        mxu={k: np.broadcast_to(v, (steps,)).astype(float) for k, v in walker.acc.mxu.items()},
        vector=np.broadcast_to(walker.acc.vector, (steps,)).astype(float),
        after=tuple(_per_step(*wait, steps) for wait in walker.acc.later()),
        units={u: np.broadcast_to(v, (steps,)).astype(float) for u, v in walker.acc.units.items()},
        reduced=np.broadcast_to(walker.acc.reduced, (steps,)).astype(float),
        scalar=np.broadcast_to(walker.acc.scalar + index_ops, (steps,)).astype(float),
        dmas=np.asarray(dmas, dtype=float),
        min_bytes=min_bytes,
        prologue_bytes=float(sum(r.values.nbytes for r in prefetch if r.values is not None)),
        cores=cores,
        notes=notes,
        family=families.classify(
            families.Traits.of_grid(body, prefetch=bool(prefetch), dynamic=bool(dynamic))
        ),
    )


def _per_step(prefix: dict[str, Any], ops: Any, steps: int) -> Wait:
    """A dot's MXU work up to its end and the vector work waiting for it (`barriers`), per step."""
    flops = {k: np.broadcast_to(f, (steps,)).astype(float) for k, f in prefix.items()}
    return flops, np.broadcast_to(ops, (steps,)).astype(float)


def _grid(name: str, grid: Sequence[Any], bounds: Sequence[Any]) -> tuple[int, ...]:
    """The grid with its dynamic sizes (`pl.pallas_call(grid=(n, traced, k))`) filled in from the
    call's leading operands, known when they are computed from small known inputs (group sizes)."""
    sizes, given = [], iter(bounds)
    for g in grid:
        if isinstance(g, (int, np.integer)):
            sizes.append(int(g))
            continue
        value = next(given, None)
        if value is None or np.size(value) != 1:
            raise ModelLimitError(
                f"{name}: a grid size is computed from values the model does not know at this size; "
                "give the inputs it depends on (e.g. the group sizes) as concrete arrays"
            )
        sizes.append(int(np.asarray(value).reshape(())))
    return tuple(sizes)


def _cores(
    grid: tuple[int, ...], ids: np.ndarray, params: Any, mapping: Any, chip: ChipInfo
) -> tuple[np.ndarray, int]:
    one = np.zeros(ids.shape[1], dtype=np.int32), 1
    cores = chip.device_tensor_cores  # a kernel runs on one JAX device's TensorCores
    if cores < 2:
        return one
    semantics = _semantics(params, mapping, len(grid))
    for axis, meaning in enumerate(semantics):
        if meaning == "core_parallel" and grid[axis] >= cores:
            chunk = -(-grid[axis] // cores)
            return ids[axis] // chunk, cores
    lead = next((axis for axis, meaning in enumerate(semantics) if meaning != "parallel"), len(grid))
    points = math.prod(grid[:lead])
    if not chip.megacore or points < 2:
        return one
    flat = np.ravel_multi_index(tuple(ids[:lead]), grid[:lead]) if lead > 1 else ids[0]
    return (flat // -(-points // cores)).astype(np.int32), cores


def _semantics(params: Any, mapping: Any, rank: int) -> tuple[str, ...]:
    """Each grid axis's meaning: the user's `dimension_semantics` ("arbitrary" where none is given),
    with "parallel" for the axes `jax.vmap` added (Pallas's Mosaic lowering does the same)."""
    given = iter(
        str(getattr(m, "value", m)).lower() for m in (getattr(params, "dimension_semantics", None) or ())
    )
    vmapped = set(getattr(mapping, "vmapped_dims", ()))
    return tuple("parallel" if axis in vmapped else next(given, "arbitrary") for axis in range(rank))


def _smem_ref(key: Any, var: Any, value: Any) -> Ref:
    aval = inner(var.aval)
    values = np.asarray(value) if value is not None else None
    return Ref(key, tuple(aval.shape), aval.dtype, "smem", values)


def _smem_copy(ref: Ref) -> Ref:
    return Ref(ref.key, ref.shape, ref.dtype, ref.space, None if ref.values is None else ref.values.copy())


def _user_axes(mapping: Any, grid: tuple[int, ...]) -> list[int]:
    """The grid dimensions the kernel body sees, in order. `jax.vmap` of a `pallas_call` adds a
    grid dimension per mapped axis (`vmapped_dims`): the index maps get its index, but the body's
    `program_id(a)` and `num_programs(a)` count only the other dimensions (as Mosaic lowers them)."""
    vmapped = set(getattr(mapping, "vmapped_dims", ()))
    return [axis for axis in range(len(grid)) if axis not in vmapped]


def _operand(
    bm: Any, program_ids: dict[int, Any], prefetch: list[Ref], grid: tuple[int, ...], steps: int
) -> _Operand:
    closed = bm.index_map_jaxpr
    jaxpr = jaxpr_of(closed)
    walker = Walker(steps=steps, program_ids=program_ids, grid=grid)
    env: dict[Any, Any] = dict(zip(jaxpr.constvars, [np.asarray(c) for c in closed.consts], strict=False))
    values = [program_ids[a] for a in range(len(program_ids))] + list(prefetch)
    env.update(zip(jaxpr.invars, values, strict=False))
    index = walker.run(jaxpr, env)
    block = inner(bm.block_aval)
    array = bm.array_aval
    space = space_of(bm.block_aval, "vmem")
    unknown = any(i is UNKNOWN or isinstance(i, Ref) for i in index)
    stacked = (
        None
        if unknown
        else np.stack([np.broadcast_to(np.asarray(i), (steps,)) for i in index] or [np.zeros(steps)])
    )
    return _Operand(
        name=str(bm.origin),
        block_bytes=size(block.shape) * itemsize(block.dtype),
        array_bytes=size(array.shape) * itemsize(array.dtype),
        space=space,
        index=stacked,
        scalar_ops=walker.acc.scalar,
    )


def _changed(index: np.ndarray | None, core: np.ndarray, steps: int) -> np.ndarray:
    """Per step: does this operand's block differ from the previous step's on the same core?"""
    first = np.append(True, core[1:] != core[:-1])
    if index is None:
        return np.ones(steps, dtype=bool)
    return first | np.append(True, (index[:, 1:] != index[:, :-1]).any(axis=0))


def _distinct_bytes(o: _Operand) -> int:
    if not o.copied:
        return o.array_bytes if o.space == "hbm" else 0
    if o.index is None:
        return o.array_bytes
    return min(o.array_bytes, distinct_columns(o.index) * o.block_bytes)


def distinct_columns(index: np.ndarray) -> int:
    """How many distinct block indices (columns of `index`) there are, via one mixed-radix key."""
    low = index.min(axis=1, keepdims=True)
    span = index.max(axis=1) - low[:, 0] + 1
    if float(np.prod(span.astype(float))) >= 2**62:
        return len(np.unique(index, axis=1).T)
    key = np.zeros(index.shape[1], dtype=np.int64)
    for row, n in zip(index - low, span, strict=True):
        key = key * int(n) + row
    total = int(np.prod(span))
    if total <= 1 << 24:  # a bitmap of the key range: linear, no sort
        seen = np.zeros(total, dtype=bool)
        seen[key] = True
        return int(seen.sum())
    return len(np.unique(key))


def _body_env(body: Any, prefetch: list[Ref], operands: list[_Operand], mapping: Any) -> dict[Any, Any]:
    invars = body.invars
    env: dict[Any, Any] = dict(zip(invars[: len(prefetch)], prefetch, strict=False))
    offset = len(prefetch)
    for i, (var, o) in enumerate(zip(invars[offset : offset + len(operands)], operands, strict=False)):
        aval = inner(var.aval)
        env[var] = Ref(("block", i), tuple(aval.shape), aval.dtype, "hbm" if o.space == "hbm" else o.space)
    for i, var in enumerate(invars[offset + len(operands) :]):
        aval = inner(var.aval)
        env[var] = Ref(("scratch", i), tuple(aval.shape), aval.dtype, space_of(var.aval, "vmem"))
    return env


def _program(
    name: str,
    eqn: Any,
    body: Any,
    env: dict[Any, Any],
    grid: tuple[int, ...],
    ids: np.ndarray,
    core: np.ndarray,
    cores: int,
    inputs: list[_Operand],
    outputs: list[_Operand],
    changed: dict[int, np.ndarray],
    min_bytes: float,
    notes: list[str],
    chip: ChipInfo,
) -> Program:
    """A pallas_call whose body synchronises itself: simulate its grid step by step, block copies included."""
    axes = _user_axes(eqn.params["grid_mapping"], grid)
    events: list[list[Event]] = []
    for c in range(cores):
        steps = np.nonzero(core == c)[0]
        walker = Walker(
            steps=None, grid=tuple(grid[a] for a in axes), core=c, sublanes=chip.sublanes, mxu=chip.mxu_size
        )
        pending: list[_Operand] = []  # write-backs started at the previous step, waited during this one
        for s in steps:
            if s == steps[0]:
                _copies(walker.events, inputs, changed, s, "in")
            walker.step(f"grid point {tuple(int(v) for v in ids[:, s])}")
            _waits(walker.events, inputs, changed, s, "in")
            if s != steps[-1]:
                _copies(walker.events, inputs, changed, s + 1, "in")
            walker.program_ids = {user: int(ids[axis, s]) for user, axis in enumerate(axes)}
            walker.run(body, dict(env))
            walker.flush()
            written = [o for o in outputs if o.copied and (s == steps[-1] or changed[id(o)][s + 1])]
            for o in written:
                walker.events.append(("dma", o.block_bytes, ("out", id(o), int(s)), "out"))
            for o in pending:
                walker.events.append(("wait", ("out", id(o), int(s) - 1), o.block_bytes))
            pending = written
        for o in pending:
            walker.events.append(("wait", ("out", id(o), int(steps[-1])), o.block_bytes))
        events.append(walker.events)
        notes += sorted(n for n in walker.notes if n and n not in notes)
    # A pallas_call's copies are its own BlockSpecs' and its body's: remote ones are not looked for.
    family = families.classify(families.Traits.of_program(body, remote=False))
    return Program(kernel=name, events=events, min_bytes=min_bytes, notes=notes, family=family)


def _copies(
    events: list[Event], inputs: list[_Operand], changed: dict[int, np.ndarray], s: int, way: str
) -> None:
    for o in inputs:
        if o.copied and changed[id(o)][s]:
            events.append(("dma", o.block_bytes, (way, id(o), int(s)), way))


def _waits(
    events: list[Event], inputs: list[_Operand], changed: dict[int, np.ndarray], s: int, way: str
) -> None:
    for o in inputs:
        if o.copied and changed[id(o)][s]:
            events.append(("wait", (way, id(o), int(s)), o.block_bytes))
