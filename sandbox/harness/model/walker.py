"""Walk a kernel body's jaxpr as a TPU core would run it, collecting its work but touching no data.

Two modes, one walker:
- grid mode (`Walker(steps=n)`): a pallas_call body for all n grid steps at once. Scalars are
  arrays over the steps; a branch costs where its predicate selects it (a mask); a loop's body
  is walked once per iteration while any step still runs it. The result is MXU flops per dot kind
  and vector ops per step (`Acc`). A body that starts DMAs or signals semaphores sets `syncs`:
  it needs program mode.
- program mode (`Walker(steps=None)`): one core, in order. Loops run iteration by iteration, a
  branch runs the branch its (known) predicate picks, and the walk emits `cost.Program` events:
  work between synchronisation points, DMA starts and waits, semaphore signals and waits, and a
  step marker for every loop iteration that talks to the DMA engine.

In both modes the work that waits for a reduction across a dot's result is kept apart, per dot it
waits for (`barriers`): it cannot overlap that dot.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from sandbox.harness.jaxapi import core as jcore
from sandbox.harness.model.common import repeated
from sandbox.harness.model.control import ControlFlow
from sandbox.harness.model.evaluate import (
    UNKNOWN,
    Ref,
    inner,
    read,
    scalar_rules,
    size,
    space_of,
)
from sandbox.harness.model.hoisting import NOTHING, reload, work_of
from sandbox.harness.model.iteration_classes import masked
from sandbox.harness.model.memory import MemoryAccess
from sandbox.harness.model.ops import (
    CALLS,
    FREE,
    PADDING,
    REDUCTIONS,
    Acc,
    dot_flops,
    dot_kind,
    jaxpr_of,
    memory_cost,
    padded_dot_flops,
    padded_elements,
    reduction_parts,
    vector_units,
)
from sandbox.harness.model.replication import replicated_costs
from sandbox.harness.model.syncs import Synchronisation

MAX_PROGRAM_EQNS = 3_000_000  # program mode stops past this many equations (a very long kernel)


_RULE, _HANDLER, _CALL, _VECTOR = object(), object(), object(), object()
_REPEATED = object()  # a vector equation's plan when an earlier one of its body computed its value


def _atom(var: Any) -> tuple[bool, Any, Any]:
    """(is a literal, its numpy value or the Var, its Python value)."""
    if isinstance(var, jcore.Literal):
        value = np.asarray(var.val)
        return True, value, value.item()
    return False, var, None


class ModelLimitError(Exception):
    """The kernel is too long to simulate step by step."""


class Walker(ControlFlow, Synchronisation, MemoryAccess):
    def __init__(
        self,
        *,
        steps: int | None,
        program_ids: dict[int, Any] | None = None,
        grid: tuple[int, ...] = (),
        core: int = 0,
        core_axes: frozenset[str] = frozenset(),
        label: str = "",
        sublanes: int = 8,
        mxu: int = 0,
        lanes: int = 128,
        axis_values: dict[str, int] | None = None,
    ) -> None:
        self.sequential = steps is None
        self.sublanes = sublanes  # the chip's vreg shape: vector work is counted in padded vregs
        self.mxu = mxu  # the chip's MXU width: dots pad to it (0: count exact flops)
        self.lanes = lanes  # 128 on a TensorCore; a SparseCore subcore's 8 or 16
        self.axis_values = axis_values or {}  # mesh axes with their value in this program (SparseCore)
        zero: Any = 0.0 if steps is None else np.zeros(steps)
        self.acc = Acc(zero)
        self.mask: Any = 1.0
        self.program_ids = program_ids or {}
        self.grid = grid
        self.core = core
        self.core_axes = core_axes
        self.label = label
        self.notes: set[str] = set()
        self.syncs = False
        self.events: list[tuple[Any, ...]] = []
        self.pending = Acc(0.0)
        self.codes: dict[Any, tuple[int, int]] = {}  # `barriers`: which values wait for a dot
        self.ref_codes: dict[Any, tuple[int, int]] = {}
        self.dots = 0
        self.eqns = 0
        self.record: list[Any] | None = None  # grid mode: what iteration classes depend on
        self.hoisted = NOTHING  # the loop-invariant equations paid for already (`hoisting`)
        self._static: dict[Any, tuple[Any, ...]] = {}
        self._plans: dict[int, tuple[Any, list[tuple[object, Any, Any]]]] = {}

    # -- the walk ------------------------------------------------------------------------------

    def run(self, jaxpr: Any, env: dict[Any, Any]) -> list[Any]:
        plan = self._plan(jaxpr)
        self.eqns += len(plan)
        if self.sequential and self.eqns > MAX_PROGRAM_EQNS:
            raise ModelLimitError(f"more than {MAX_PROGRAM_EQNS:,} operations to simulate")
        python = self.sequential
        for kind, eqn, extra in plan:
            if kind is _RULE:
                rule_np, rule_py, atoms, out = extra
                args = []
                for literal, np_value, py_value in atoms:
                    value = (py_value if python else np_value) if literal else env.get(np_value, UNKNOWN)
                    if value is UNKNOWN or type(value) is Ref:
                        break
                    args.append(value)
                else:
                    try:
                        env[out] = rule_py(*args) if python else np.asarray(rule_np(*args))
                    except (TypeError, ValueError, ArithmeticError, IndexError):
                        env[out] = UNKNOWN
                    self._scalar()
                    continue
                env[out] = UNKNOWN  # a scalar from data: it may wait for a dot
                if self.codes:
                    self._through(eqn, eqn.primitive.name in REDUCTIONS)
                self._scalar()
            elif kind is _HANDLER:
                extra(eqn, env)
            elif kind is _CALL:
                if extra is None:  # a common subexpression: its values, no work (`common`)
                    self._uncosted(lambda: self._call(eqn, env, eqn.params[CALLS[eqn.primitive.name]]))  # noqa: B023
                elif id(eqn) in self.hoisted.eqns:  # computed before the loop (`hoisting`)
                    self._uncosted(lambda: self._call(eqn, env, extra))  # noqa: B023  (called at once)
                    if reloaded := self._reload(eqn, lambda: work_of([eqn], self.sublanes, self.lanes)):  # noqa: B023
                        self._work(None, 0, reloaded)
                else:
                    self._call(eqn, env, extra)
            else:
                if extra is _REPEATED:  # a common subexpression: no work (`common`)
                    if self.codes:
                        self._through(eqn, False)
                    continue
                units, cross, reduced = extra
                if id(eqn) in self.hoisted.eqns:  # computed before the loop (`hoisting`)
                    units, cross = self._reload(eqn, lambda: units), None  # noqa: B023
                elif reduced:
                    self._reduced(reduced)
                waits, wait = self._through(eqn, cross is not None) if self.codes else (-1, -1)
                if waits != wait:  # a lane reduction of a dot's result: its cross-lane part waits
                    self._work(None, 0, {u: ops for u, ops in units.items() if u != "xlu"}, waits)
                    self._work(None, 0, {"xlu": units.get("xlu", 0.0)}, wait)
                elif units:
                    self._work(None, 0, units, wait)
        return [self._read(env, v) for v in jaxpr.outvars]

    def _read(self, env: dict[Any, Any], atom: Any) -> Any:
        """A value: Python numbers in program mode (one core, in order), numpy arrays in grid mode."""
        value = read(env, atom)
        if self.sequential and isinstance(value, np.ndarray) and value.ndim == 0:
            return value.item()
        return value

    def _plan(self, jaxpr: Any) -> list[tuple[object, Any, Any]]:
        """How to walk each equation of `jaxpr`, worked out once per jaxpr."""
        found = self._plans.get(id(jaxpr))
        if found is not None:
            return found[1]
        plan: list[tuple[object, Any, Any]] = []
        fewer = replicated_costs(jaxpr, self.sublanes, self.lanes)
        again = repeated(jaxpr)
        for index, eqn in enumerate(jaxpr.eqns):
            name = eqn.primitive.name
            handler = getattr(self, "_" + name, None)
            rules = None if handler is not None else scalar_rules(eqn)
            if handler is not None:
                plan.append((_HANDLER, eqn, handler))
            elif rules is not None:
                atoms = tuple(_atom(v) for v in eqn.invars)
                plan.append((_RULE, eqn, (*rules, atoms, eqn.outvars[0])))
            elif name in CALLS:
                plan.append((_CALL, eqn, None if index in again else eqn.params[CALLS[name]]))
            elif index in again:
                plan.append((_VECTOR, eqn, _REPEATED))
            elif name not in FREE:  # costless ones too: a dot's result may pass through them
                units = fewer.get(index, vector_units(eqn, self.sublanes, self.lanes))
                cross = reduction_parts(eqn, self.sublanes, self.lanes)[1] if name in REDUCTIONS else None
                reduced = (
                    padded_elements(eqn.invars[0].aval.shape, self.sublanes, lanes=self.lanes) if cross else 0
                )
                plan.append((_VECTOR, eqn, (units, cross, reduced)))
        self._plans[id(jaxpr)] = (jaxpr, plan)  # the jaxpr is kept alive with its plan
        return plan

    def _call(self, eqn: Any, env: dict[Any, Any], closed: Any) -> None:
        jaxpr = jaxpr_of(closed)
        inner_env = dict(
            zip(jaxpr.constvars, [np.asarray(c) for c in getattr(closed, "consts", ())], strict=False)
        )
        inner_env.update(zip(jaxpr.invars, [self._read(env, v) for v in eqn.invars], strict=False))
        self._bind(jaxpr.invars, eqn.invars)
        for var, value in zip(eqn.outvars, self.run(jaxpr, inner_env), strict=False):
            env[var] = value
        self._bind(eqn.outvars, jaxpr.outvars)

    def _reload(self, eqn: Any, computed: Callable[[], Mapping[str, float]]) -> dict[str, float]:
        """A hoisted equation's cost in a later iteration (`computed`: what computing it costs, asked
        only where needed): its value's reload or computing it again, if the loop reads it."""
        if id(eqn) not in self.hoisted.read_in_loop:
            return {}
        return reload(eqn, computed, self.sublanes, self.lanes)

    def _uncosted(self, walk: Callable[[], None]) -> None:
        """`walk` for its values alone: the work it finds is not added (a hoisted call's)."""
        acc, pending = self.acc, self.pending
        self.acc, self.pending = Acc(acc.zero), Acc(0.0)
        try:
            walk()
        finally:
            self.acc, self.pending = acc, pending

    def _vector(self, eqn: Any, wait: int) -> None:
        """A VMEM load: its value's vregs (packed dtypes fill them deeper)."""
        out = eqn.outvars[0].aval
        if size(getattr(out, "shape", ())) > 1:
            self._work(None, 0, {"load": memory_cost(out.shape, out.dtype, self.sublanes, self.lanes)}, wait)

    def _scalar(self) -> None:
        """One scalar operation (index arithmetic, a comparison, an SMEM lookup) where it runs."""
        if self.sequential:
            self.pending.scalar += 1
        else:
            self.acc.scalar = self.acc.scalar + self.mask

    def _reduced(self, elements: float) -> None:
        """A lane reduction of a value of `elements` padded elements, where it runs (`Acc.reduce`)."""
        if self.sequential:
            self.pending.reduce(elements, 1)
        else:
            self.acc.reduce(elements, self.mask)

    def _work(self, kind: str | None, flops: float, units: Mapping[str, float], wait: int = -1) -> None:
        """Work where it runs: MXU flops of a dot `kind`, vector element ops per unit; `wait`: the
        dot it waits for the end of (`barriers`), -1 none."""
        if self.sequential:
            self.pending.add(kind, flops, units, 1, wait)
        else:
            self.acc.add(kind, flops, units, self.mask, wait)

    def _sync(self) -> None:
        self._restart()
        if self.pending.mxu or self.pending.vector or self.pending.scalar:
            work: tuple[Any, ...] = (
                "work", dict(self.pending.mxu), float(self.pending.vector), float(self.pending.scalar),
            )  # fmt: skip
            after = tuple((prefix, float(ops)) for prefix, ops in self.pending.later())
            if after or self.pending.units:  # work that waits for a dot's end (`barriers`), per unit
                work += (after,)
            if self.pending.units:
                work += (
                    {unit: float(ops) for unit, ops in self.pending.units.items()},
                    float(self.pending.reduced),
                )
            self.events.append(work)
            self.pending = Acc(0.0)

    def _remember(self, value: Any) -> None:
        """Grid mode, finding iteration classes: a value an iteration's events depend on, where reached."""
        if self.record is not None:
            self.record.append(masked(value, self.mask, np.size(self.acc.zero)))

    def flush(self) -> None:
        self._sync()

    def step(self, label: str, kind: int | None = None) -> None:
        """A step marker; `kind` (from `iteration_classes`) names steps whose events are the very same objects."""
        self._sync()
        self.events.append(("step", label) if kind is None else ("step", label, kind))

    # -- primitives with their own rules -------------------------------------------------------

    def _dot_general(self, eqn: Any, env: dict[Any, Any]) -> None:
        kind, flops = dot_kind(eqn), dot_flops(eqn)
        number, wait = self._dot_code(eqn)
        self._work(kind, flops, {}, wait)
        padding = padded_dot_flops(eqn, self.mxu) - flops if self.mxu else 0
        if padding > 0:  # MXU time the padding costs, kept apart from the dot's useful flops
            self._work(kind + PADDING, padding, {}, wait)
        (self.pending if self.sequential else self.acc).mark(number)

    def _multiple_of(self, eqn: Any, env: dict[Any, Any]) -> None:
        """`pl.multiple_of`: a hint to the compiler, no instruction; its value is its operand's."""
        env[eqn.outvars[0]] = self._read(env, eqn.invars[0])

    def _program_id(self, eqn: Any, env: dict[Any, Any]) -> None:
        env[eqn.outvars[0]] = self.program_ids.get(eqn.params["axis"], UNKNOWN)

    def _num_programs(self, eqn: Any, env: dict[Any, Any]) -> None:
        axis = eqn.params["axis"]
        known = axis < len(self.grid)
        env[eqn.outvars[0]] = (
            (self.grid[axis] if self.sequential else np.asarray(self.grid[axis])) if known else UNKNOWN
        )

    def _axis_index(self, eqn: Any, env: dict[Any, Any]) -> None:
        names = eqn.params["axis_name"]
        names = names if isinstance(names, tuple) else (names,)
        if len(names) == 1 and names[0] in self.axis_values:
            value = self.axis_values[names[0]]
            env[eqn.outvars[0]] = value if self.sequential else np.asarray(value, np.int32)
            return
        known = all(n in self.core_axes for n in names)
        core = self.core if self.sequential else np.asarray(self.core, np.int32)
        env[eqn.outvars[0]] = core if known else UNKNOWN

    def _run_scoped(self, eqn: Any, env: dict[Any, Any]) -> None:
        body = jaxpr_of(eqn.params["jaxpr"])
        inner_env = dict(zip(body.constvars, [self._read(env, v) for v in eqn.invars], strict=False))
        self._bind(body.constvars, eqn.invars)
        for i, var in enumerate(body.invars):
            aval = inner(var.aval)
            key = (id(eqn), i)
            inner_env[var] = Ref(key, tuple(aval.shape), aval.dtype, space_of(var.aval, "vmem"))
        outs = self.run(body, inner_env)
        for var, value in zip(eqn.outvars, outs, strict=False):
            env[var] = value
        self._bind(eqn.outvars, body.outvars)
