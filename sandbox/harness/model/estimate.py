"""Estimate a function's time on a TPU chip from its traced kernels, without running anything.

`trace` turns `fn(*args)` into a jaxpr the way the TPU would get it: interpret mode off, the chip's
abstract device current (so `emit_pipeline` and `get_tpu_info` see the chip); `args` may be
`jax.ShapeDtypeStruct`s, so a 4096^3 problem allocates nothing. `estimate_jaxpr` finds every
Pallas kernel in it (`pallas_call` → `grid`, `pl.kernel` → `program`), costs them (`cost`), costs
XLA's ops around them (`outside`) and sums them up (`summary`). Small concrete arguments (scalar-prefetch tables) are read as values.
"""

from __future__ import annotations

import contextlib
import functools
import io
import math
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import jax
import numpy as np
from jax.experimental.pallas import tpu as pltpu

from sandbox.harness.jaxapi import core as jcore
from sandbox.harness.model.cost import Grid, Rates, Steps
from sandbox.harness.model.grid import model_pallas_call
from sandbox.harness.model.grid_time import grid_steps
from sandbox.harness.model.ops import CALLS, jaxpr_of, sub_jaxprs
from sandbox.harness.model.outside import Outside, outside_work
from sandbox.harness.model.program import model_kernel
from sandbox.harness.model.simulate import program_steps
from sandbox.harness.model.summary import summarize
from sandbox.harness.model.walker import ModelLimitError
from sandbox.protocol.chips import ChipInfo
from sandbox.protocol.estimate import Estimate

MAX_KNOWN_ELEMENTS = 1 << 16  # arguments up to this size are read as values (index tables)
_INTERPRET_OFF: Any = None
# Tables computed from known inputs are tiny: XLA's optimisations cost seconds and save nothing.
_QUICK_COMPILE = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}

__all__ = [
    "ModelLimitError",
    "chip_context",
    "estimate",
    "estimate_jaxpr",
    "known_values",
    "target_inputs",
    "trace",
]


@contextlib.contextmanager
def chip_context(chip: ChipInfo) -> Iterator[None]:
    """The chip's abstract device, for tracing off-TPU (the harness's `Target.chip_context` does more)."""
    device = jax.sharding.AbstractDevice(chip.device_kind, 1, "tpu")
    with jax.sharding.use_abstract_mesh(jax.sharding.AbstractMesh((), (), abstract_device=device)):
        yield


def trace(
    fn: Callable[..., Any], args: Sequence[Any], context: contextlib.AbstractContextManager[Any]
) -> Any:
    """The closed jaxpr of `fn(*args)` as built for a real TPU; the user's prints are swallowed."""
    with (
        context,
        pltpu.force_tpu_interpret_mode(_INTERPRET_OFF),
        contextlib.redirect_stdout(io.StringIO()),
    ):
        return jax.make_jaxpr(fn)(*args)


def estimate(
    fn: Callable[..., Any], args: Sequence[Any], chip: ChipInfo, *, timeline: bool = True
) -> Estimate:
    t0 = time.perf_counter()
    closed = trace(fn, args, chip_context(chip))
    return estimate_jaxpr(closed, known_values(args), chip, started=t0, timeline=timeline)


def estimate_jaxpr(
    closed: Any, known: Sequence[Any], chip: ChipInfo, *, started: float | None = None, timeline: bool = True
) -> Estimate:
    """The estimate for a traced function; `known` holds a value (or None) per flat argument."""
    t0 = time.perf_counter() if started is None else started
    rates = Rates.of(chip)
    steps: list[Steps] = []
    for plan in kernels(closed, known, chip):
        if isinstance(plan, Grid):
            steps.append(grid_steps(plan, rates))
        elif plan.unit == "sparse_core":
            steps.append(program_steps(plan, Rates.of_sparse_core(chip, plan.programs_per_core)))
        else:
            steps.append(program_steps(plan, rates))
    outside = _outside(closed, chip) if steps else None
    return summarize(
        chip.name, rates, steps, model_seconds=time.perf_counter() - t0, timeline=timeline, outside=outside
    )


def _outside(closed: Any, chip: ChipInfo) -> Outside:
    """XLA's work around the kernels; an op the walk does not understand leaves it out, and says so
    (the kernels' estimate stands on its own)."""
    try:
        return outside_work(closed, chip)
    except Exception as exc:  # a primitive with an unexpected shape of params or values
        first = (str(exc).strip() or type(exc).__name__).splitlines()[0][:200]
        return Outside(notes=[f"XLA ops outside the kernels were not costed ({type(exc).__name__}: {first})"])


def known_values(args: Sequence[Any]) -> list[Any]:
    """Small concrete arrays among the (flattened) arguments, as numpy; None for the rest."""
    found: list[Any] = []
    for leaf in jax.tree_util.tree_leaves(list(args)):
        concrete = isinstance(leaf, (np.ndarray, np.generic, int, float)) or (
            isinstance(leaf, jax.Array) and not isinstance(leaf, jax.core.Tracer)
        )
        if concrete and np.size(leaf) <= MAX_KNOWN_ELEMENTS:
            found.append(np.asarray(leaf))
        else:
            found.append(None)
    return found


# What `make_inputs` raises when it needs concrete values (numpy on a random mask, `if` on a value,
# boolean-mask indexing): traced, it cannot run; called, it can.
NEEDS_VALUES = (
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerArrayConversionError,
    jax.errors.TracerIntegerConversionError,
    jax.errors.NonConcreteBooleanIndexError,
)


def target_inputs(
    make_inputs: Callable[[], Sequence[Any]], say: Callable[[str], None] = lambda _: None
) -> tuple[Any, ...]:
    """A function's inputs at a target size without running it: shapes and dtypes, except small
    integer inputs (group sizes, block tables), computed as values: a grid or the blocks a kernel
    picks may depend on them. Only those are computed (the rest is dead code to XLA).

    A `make_inputs` that needs concrete values (index tables built with numpy from a random mask)
    cannot be traced: it is called instead, on the CPU (`_concrete_inputs`), and `say` is told what
    that cost."""
    try:
        shapes = tuple(jax.eval_shape(lambda: tuple(make_inputs())))
    except NEEDS_VALUES as exc:
        return _concrete_inputs(make_inputs, exc, say)
    small = [_small_integer(s) for s in shapes]
    if not any(small):
        return shapes
    try:
        values = iter(jax.jit(lambda: [x for x, k in zip(make_inputs(), small, strict=True) if k])())
    except Exception:  # the model then treats them as unknown
        return shapes
    return tuple(next(values) if k else s for s, k in zip(shapes, small, strict=True))


def _concrete_inputs(
    make_inputs: Callable[[], Sequence[Any]], why: BaseException, say: Callable[[str], None]
) -> tuple[Any, ...]:
    """`make_inputs()` run for real on the CPU, then reduced to what `target_inputs` gives: small
    integer inputs as values, the rest as shapes (the arrays are dropped at once). It costs the
    full inputs' memory and time at the target size (block_sparse_matmul at 8192x8192x2048, bf16
    made through f32: a 1.8 GiB peak and 10-30 s on a busy 2-core CPU). The job's memory and wall
    limits bound it: inputs past them fail as make_inputs' own error, or as the job's limit."""
    t0 = time.perf_counter()
    with jax.default_device(jax.devices("cpu")[0]):
        made = jax.block_until_ready(tuple(make_inputs()))
    kept = jax.tree.map(_value_or_shape, made)
    total = sum(int(np.size(x)) * _dtype(x).itemsize for x in jax.tree.leaves(made))
    del made
    first = (str(why).strip() or type(why).__name__).splitlines()[0][:120]
    say(
        f"make_inputs needs concrete values ({type(why).__name__}: {first}), so it ran at the target "
        f"size on the CPU: {time.perf_counter() - t0:.1f} s for {total / 2**20:.0f} MiB of inputs"
    )
    return tuple(kept)


def _value_or_shape(leaf: Any) -> Any:
    shape = jax.ShapeDtypeStruct(np.shape(leaf), _dtype(leaf))
    return np.asarray(leaf) if _small_integer(shape) else shape


def _dtype(leaf: Any) -> np.dtype[Any]:
    """An array's dtype; a Python number's as numpy would hold it (no copy of a large array)."""
    return np.dtype(leaf.dtype) if hasattr(leaf, "dtype") else np.asarray(leaf).dtype


def _small_integer(shape: Any) -> bool:
    return (
        isinstance(shape, jax.ShapeDtypeStruct)
        and np.issubdtype(shape.dtype, np.integer)
        and math.prod(shape.shape) <= MAX_KNOWN_ELEMENTS
    )


def kernels(closed: Any, known: Sequence[Any], chip: ChipInfo) -> list[Any]:
    """The model's plan (`Grid` or `Program`) for every Pallas kernel the function runs, in order."""
    plans: list[Any] = []
    jaxpr = jaxpr_of(closed)
    consts = [
        np.asarray(c) if np.size(c) <= MAX_KNOWN_ELEMENTS else None for c in getattr(closed, "consts", ())
    ]
    _walk(jaxpr, [*consts, *known], chip, plans, inside_loop=False)
    return plans


def _walk(
    jaxpr: Any, values: Sequence[Any], chip: ChipInfo, plans: list[Any], inside_loop: bool
) -> list[Any]:
    """Plan every kernel in `jaxpr`; the values of its outputs where they are known (else None)."""
    env: dict[Any, Any] = dict(zip([*jaxpr.constvars, *jaxpr.invars], values, strict=False))
    computed = _evaluate_known(jaxpr, env)  # these hold no kernel: nothing more to look at

    def value(atom: Any) -> Any:
        return np.asarray(atom.val) if isinstance(atom, jcore.Literal) else env.get(atom)

    mine: list[tuple[Any, Any]] = []  # (plan, eqn) of the kernels at this level, for overlaps
    for eqn in (e for e in jaxpr.eqns if id(e) not in computed):
        name = eqn.primitive.name
        operands = [value(v) for v in eqn.invars]
        if name == "pallas_call":
            plans.append(model_pallas_call(eqn, operands, chip))
            mine.append((plans[-1], eqn))
        elif name == "mpmd_map":
            plans.append(model_kernel(eqn, operands, chip))
            mine.append((plans[-1], eqn))
        elif name == "shard_map":  # one device's program; its operands are per-shard slices
            body = jaxpr_of(eqn.params["jaxpr"])
            _walk(body, [None] * (len(body.constvars) + len(body.invars)), chip, plans, inside_loop)
            continue
        elif name in CALLS:
            closed = eqn.params[CALLS[name]]
            inner = jaxpr_of(closed)
            outs = _walk(inner, [*getattr(closed, "consts", ()), *operands], chip, plans, inside_loop)
            env.update(zip(eqn.outvars, outs, strict=False))
            continue
        elif sub_jaxprs(eqn):
            for sub in sub_jaxprs(eqn):
                _walk(sub, [None] * (len(sub.constvars) + len(sub.invars)), chip, plans, True)
            continue
        else:
            continue
        if inside_loop:
            plans[-1].notes.append("this kernel sits inside a loop or branch of the function: counted once")
    _mark_overlaps(mine)
    return [value(v) for v in jaxpr.outvars]


def _mark_overlaps(kernels: list[tuple[Any, Any]]) -> None:
    """A SparseCore kernel whose outputs no later kernel of the same program reads runs beside the
    TensorCore kernels (XLA schedules the two units independently): it is marked to overlap them."""
    if not any(getattr(plan, "unit", "tensor_core") == "tensor_core" for plan, _ in kernels):
        return
    for i, (plan, eqn) in enumerate(kernels):
        if getattr(plan, "unit", "") != "sparse_core":
            continue
        outs = {v for v in eqn.outvars if isinstance(v, jcore.Var)}
        if not any(
            v in outs for _, later in kernels[i + 1 :] for v in later.invars if isinstance(v, jcore.Var)
        ):
            plan.overlaps = True
            plan.notes.append("it overlaps the TensorCore kernels (none of them reads its outputs)")


def _evaluate_known(jaxpr: Any, env: dict[Any, Any]) -> set[int]:
    """Compute, in one compiled call, every equation of `jaxpr` that only needs known small values
    (group sizes → tile tables and the grid size of a megablox `gmm`); their outputs join `env`."""
    known = {v for v, value in env.items() if value is not None}
    computable = []
    for eqn in jaxpr.eqns:
        inputs = [v for v in eqn.invars if isinstance(v, jcore.Var)]
        if all(v in known for v in inputs) and _evaluable(eqn):
            computable.append(eqn)
            known.update(eqn.outvars)
    # Only what a kernel reads as a value (grid sizes, scalar-prefetch and SMEM operands): computing
    # anything else would cost a compile for nothing.
    wanted = {v for eqn in jaxpr.eqns for v in _value_operands(eqn)}
    chosen = []
    for eqn in reversed(computable):
        if any(v in wanted for v in eqn.outvars):
            chosen.append(eqn)
            wanted.update(v for v in eqn.invars if isinstance(v, jcore.Var))
    chosen.reverse()
    if not chosen:
        return set()
    produced = {v for e in chosen for v in e.outvars}
    used = dict.fromkeys(v for e in chosen for v in e.invars if isinstance(v, jcore.Var))
    inputs = [v for v in used if v not in produced]
    outs = [
        v for v in dict.fromkeys(v for e in chosen for v in e.outvars) if not isinstance(v, jcore.DropVar)
    ]
    info = jcore.debug_info("the model's known values", _tables, tuple(inputs), {})
    info = info._replace(result_paths=tuple(f"[{i}]" for i in range(len(outs))))
    sub = jcore.Jaxpr([], inputs, outs, chosen, debug_info=info)
    args = [env[v] for v in inputs]
    key = (str(sub), tuple((a.dtype.str, a.shape, a.tobytes()) for a in map(np.asarray, args)))
    found = _KNOWN.get(key)
    if found is None:
        try:
            lowered = jax.jit(functools.partial(jcore.eval_jaxpr, sub, [])).lower(*args)
            found = [np.asarray(v) for v in lowered.compile(compiler_options=_QUICK_COMPILE)(*args)]
        except Exception:  # something the host cannot run: those values stay unknown
            return set()
        _remember_known(key, found)
    env.update(zip(outs, found, strict=True))
    return {id(e) for e in chosen}


# The same table computation on the same inputs (a sweep varying only tk and tn of a gmm; the same
# kernel at one size on several chips) is compiled once: keyed by its printed jaxpr and its inputs.
_KNOWN: dict[Any, list[Any]] = {}
MAX_KNOWN_ENTRIES = 256


def _remember_known(key: Any, found: list[Any]) -> None:
    if len(_KNOWN) >= MAX_KNOWN_ENTRIES:
        _KNOWN.pop(next(iter(_KNOWN)))
    _KNOWN[key] = found


def _value_operands(eqn: Any) -> list[Any]:
    """The operands of `eqn` whose values the model reads: a pallas_call's dynamic grid sizes and
    scalar-prefetch tables, every operand of a `pl.kernel` or of a call that holds a kernel."""
    name = eqn.primitive.name
    if name == "pallas_call":
        mapping = eqn.params["grid_mapping"]
        lead = int(getattr(mapping, "num_dynamic_grid_bounds", 0) or 0) + mapping.num_index_operands
        return list(eqn.invars[:lead])
    if name == "mpmd_map" or (name in CALLS and not _evaluable(eqn)):
        return list(eqn.invars)
    return []


def _tables(*values: Any) -> Any:
    """What `_evaluate_known` computes, named for JAX's debug info."""
    return values


def _evaluable(eqn: Any) -> bool:
    if eqn.effects or eqn.primitive.name in ("pallas_call", "mpmd_map"):
        return False
    if any(math.prod(getattr(v.aval, "shape", ())) > MAX_KNOWN_ELEMENTS for v in eqn.outvars):
        return False
    return all(_evaluable(e) for sub in sub_jaxprs(eqn) for e in sub.eqns)
