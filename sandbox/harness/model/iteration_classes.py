"""A long pipelined loop walked once per distinct iteration class, not once per step (program mode).

An iteration class is the loop iterations whose walks emit the same events; not the estimate's step
classes (`summary`, `StepClass`: steps that cost the same).

An `emit_pipeline` over a 4096^3 matmul in 128-blocks is a loop of 32,768 iterations, each a few
hundred scalar equations and a handful of DMAs: walking every iteration costs seconds. Most
iterations do the same thing (copy the next blocks, wait for this step's, accumulate); only a few
differ (the first, the last k, the last step). So, exactly:

1. `carry_sequence`: the loop's scalar carries (grid indices, buffer slots, the iteration count)
   for every iteration, from the slice of the body that computes them, compiled once to a small
   Python function (the same Python rules as the walker's program mode, so the same values).
2. `signatures`: the body walked once in grid mode over all iterations at once (scalars as numpy
   arrays over the iterations), recording everything an iteration's events depend on: the branch
   each `cond` takes, the semaphore slot each DMA and semaphore operation uses, the values they
   signal and wait for, each `while` loop's continue flag. Iterations with equal records are one
   class: their walks emit equal events.
3. The walker walks one iteration per class and repeats its events (`Walker._scan`).

Anything this cannot see exactly (a carry computed from data or in a branch, a body that writes
SMEM, an unknown branch) returns None, and the loop is walked iteration by iteration as before.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from sandbox.harness.jaxapi import core as jcore
from sandbox.harness.model.evaluate import UNKNOWN, Ref, scalar_rules
from sandbox.harness.model.hoisting import NOTHING, Hoisted

_KINDS = itertools.count()  # step kinds, unique across loops and kernels (`steady` compares them)
MIN_ITERATIONS = 64  # shorter loops are walked step by step (the set-up is not worth it)


def carry_sequence(
    body: Any, consts: Sequence[Any], carry: Sequence[Any], length: int
) -> list[tuple[Any, ...]] | None:
    """The carries entering each of `length` iterations, plus the final ones (length + 1 tuples)."""
    if any(v is UNKNOWN or isinstance(v, Ref) for v in carry):
        return None
    try:
        step = _compile(body, len(consts), len(carry))
    except (KeyError, SyntaxError, TypeError, ValueError):  # a jaxpr shape this compiler does not know
        return None
    if step is None:
        return None
    fixed = [v.item() if isinstance(v, np.ndarray) and v.ndim == 0 else v for v in consts]
    values = tuple(v.item() if isinstance(v, np.ndarray) and v.ndim == 0 else v for v in carry)
    found = [values]
    try:
        for _ in range(length):
            values = step(fixed, values)
            found.append(values)
    except (TypeError, ValueError, ArithmeticError, IndexError):
        return None
    return found


def _compile(body: Any, consts_n: int, carry_n: int) -> Callable[..., tuple[Any, ...]] | None:
    """One Python function (consts, carries) → next carries, from the equations the carries need."""
    names: dict[Any, str] = {}
    for i, var in enumerate(body.invars[: consts_n + carry_n]):
        names[var] = f"c[{i}]" if i < consts_n else f"x[{i - consts_n}]"
    needed = {v for v in body.outvars[:carry_n] if isinstance(v, jcore.Var)}
    used: list[Any] = []
    for eqn in reversed(body.eqns):
        if not any(v in needed for v in eqn.outvars):
            continue
        if scalar_rules(eqn) is None:
            return None  # a carry from a branch, a ref read or array data: not a plain scalar chain
        used.append(eqn)
        needed.update(v for v in eqn.invars if isinstance(v, jcore.Var))
    if any(v in needed and v not in names for v in body.invars):
        return None  # a carry needs a scanned-over input
    scope: dict[str, Any] = {}
    lines = ["def step(c, x):"]
    seen: dict[tuple[Any, ...], str] = {}  # common subexpressions: the index arithmetic repeats
    for n, eqn in enumerate(reversed(used)):
        args = [_operand(atom, names, scope, f"k{n}_{a}") for a, atom in enumerate(eqn.invars)]
        key = (eqn.primitive.name, str(eqn.params), *(_constant(a, scope) for a in args))
        alias = _alias(eqn.primitive.name, args, scope) or seen.get(key)
        if alias is not None:
            names[eqn.outvars[0]] = alias
            continue
        names[eqn.outvars[0]] = seen[key] = f"v{n}"
        lines.append(f"    v{n} = {_expression(eqn, n, args, scope)}")
    outs = [_operand(atom, names, scope, f"o{a}") for a, atom in enumerate(body.outvars[:carry_n])]
    lines.append(f"    return ({', '.join(outs)},)")
    exec("\n".join(lines), scope)  # generated from the jaxpr's structure only: names we made up
    return scope["step"]  # type: ignore[no-any-return]


# The Python rules of `evaluate.PY_RULES` that are plain operators, written inline (a call each
# is most of the cost); the rest are called.
_INFIX = {"add": "+", "sub": "-", "mul": "*", "and": "&", "or": "|", "xor": "^", "eq": "==", "ne": "!="}
_INFIX |= {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "shift_left": "<<"}


def _expression(eqn: Any, n: int, args: list[str], scope: dict[str, Any]) -> str:
    name = eqn.primitive.name
    if name in _INFIX and len(args) == 2:
        return f"({args[0]} {_INFIX[name]} {args[1]})"
    if name == "select_n" and len(args) == 3:
        return f"({args[2]} if {args[0]} else {args[1]})"
    scope[f"r{n}"] = scalar_rules(eqn)[1]  # type: ignore[index]
    return f"r{n}({', '.join(args)})"


def _operand(atom: Any, names: dict[Any, str], scope: dict[str, Any], name: str) -> str:
    if isinstance(atom, jcore.Literal):
        scope[name] = np.asarray(atom.val).item()
        return name
    return names[atom]


def _alias(primitive: str, args: list[str], scope: dict[str, Any]) -> str | None:
    """The operand an equation merely passes on (`x + 0`, a select on a constant), else None."""
    known = [scope.get(a, _NONE) for a in args]
    if primitive == "select_n" and isinstance(known[0], (bool, int)) and 1 + int(known[0]) < len(args):
        return args[1 + int(known[0])]
    if primitive in ("add", "sub", "or", "xor") and len(args) == 2 and type(known[1]) is int:
        return args[0] if known[1] == 0 else None
    return None


_NONE = object()


def _constant(name: str, scope: dict[str, Any]) -> Any:
    """A literal by its type and value (0, 0.0 and False are equal keys otherwise), a var by name."""
    value = scope.get(name, _NONE)
    return name if value is _NONE else (type(value).__name__, value)


def signatures(records: Sequence[Any], length: int) -> np.ndarray | None:
    """Class id per iteration from the grid-mode records (one row per recorded value), or None."""
    rows = []
    for value in records:
        if value is UNKNOWN or isinstance(value, Ref):
            return None
        rows.append(np.broadcast_to(np.asarray(value).astype(np.int64), (length,)))
    if not rows:
        return np.zeros(length, dtype=np.int64)
    table = np.stack(rows)
    low = table.min(axis=1, keepdims=True)
    span = table.max(axis=1) - low[:, 0] + 1
    if float(np.prod(span.astype(float))) >= 2**62:
        _, inverse = np.unique(table, axis=1, return_inverse=True)
        return np.asarray(inverse).reshape(length)
    key = np.zeros(length, dtype=np.int64)
    for row, n in zip(table - low, span, strict=True):
        key = key * int(n) + row  # one mixed-radix number per iteration: a 1-D unique is fast
    return np.unique(key, return_inverse=True)[1].reshape(length)


def masked(value: Any, mask: Any, length: int) -> Any:
    """A recorded value where the iteration reaches it, -1 where its branch is not taken."""
    if value is UNKNOWN or isinstance(value, Ref):
        return UNKNOWN
    where = np.broadcast_to(np.asarray(mask).astype(bool), (length,))
    return np.where(where, np.broadcast_to(np.asarray(value).astype(np.int64), (length,)), -1)


def walk_by_class(
    walker: Any,
    body: Any,
    consts: list[Any],
    carry: list[Any],
    length: int,
    carry_n: int,
    hoisted: Hoisted = NOTHING,
) -> list[Any] | None:
    """Program mode: emit the loop's events, one walk per iteration class; the final carries, or None.

    Each iteration gets its step marker as before; an iteration whose class was walked already
    gets that walk's events again (its trailing work included, as the next marker would flush it).
    The last iteration is walked as usual, so its trailing work merges with what follows the loop.
    The first iteration is walked alone, with the loop's invariant work (`hoisted`) it alone pays for.
    """
    sequence = carry_sequence(body, consts, carry, length)
    if sequence is None:
        return None
    grid = type(walker)(
        steps=length,
        program_ids=walker.program_ids,
        grid=walker.grid,
        core=walker.core,
        core_axes=walker.core_axes,
    )
    grid.record = []
    columns = [np.asarray([s[i] for s in sequence[:-1]]) for i in range(len(carry))]
    try:
        grid.run(body, dict(zip(body.invars, [*consts, *columns], strict=False)))
    except Exception:  # anything the vectorised walk cannot do: walk step by step, as before
        return None
    classes = signatures(grid.record, length)
    if classes is None:
        return None
    walked: dict[int, tuple[int, list[Any]]] = {}
    for i in range(length - 1):
        found = walked.get(int(classes[i])) if i else None
        if found is not None:
            walker.step(f"{walker.label}loop step {i}", found[0])
            walker.events.extend(found[1])
            continue
        kind = next(_KINDS)
        walker.step(f"{walker.label}loop step {i}", kind)
        start = len(walker.events)
        with walker._hoisting(hoisted if i else NOTHING):
            walker.run(body, dict(zip(body.invars, [*consts, *sequence[i]], strict=False)))
        walker.flush()
        if i:
            walked[int(classes[i])] = (kind, walker.events[start:])
    walker.step(f"{walker.label}loop step {length - 1}")
    with walker._hoisting(hoisted if length > 1 else NOTHING):
        return walker.run(body, dict(zip(body.invars, [*consts, *sequence[-2]], strict=False)))[:carry_n]
