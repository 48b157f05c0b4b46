"""Values Mosaic keeps as one vreg per row group or per lane column, and what work on them costs.

Mosaic gives a 2-D iota along its rows a layout replicated along lanes, and one along its columns a
layout replicated along sublanes (`infer(tpu::IotaOp)` in `infer_vector_layout.cc`), and builds it
from one vreg per row group (or lane column) that every vreg position of that row (or column)
shares (`tpu_iota_rule` in `apply_vector_layout.cc`: `broadcasted_tiles[...] = tiles[row]`);
a scalar broadcast is one splat vreg. Element-wise work whose array operands are all such values
then runs once per distinct vreg, not once per vreg of the tile: megablox's store mask (a row iota
offset and compared with the group's bounds, `_get_store_mask`) costs tm / 8 vregs per op, not
tm x tn / 1024. Work that mixes such a value with a full tile (the `select` that applies the mask)
is costed in full, as before.
"""

from __future__ import annotations

from typing import Any

from sandbox.harness.model.evaluate import size
from sandbox.harness.model.ops import LANES, padded_elements, vector_units

# Element-wise primitives: an output element depends on the same element of each operand.
ELEMENTWISE = frozenset(
    {"add", "sub", "mul", "max", "min", "neg", "abs", "sign", "floor", "ceil", "round", "rem"}
    | {"eq", "ne", "lt", "le", "gt", "ge", "and", "or", "not", "xor", "select_n"}
    | {"convert_element_type", "integer_pow", "shift_left", "shift_right_logical"}
    | {"shift_right_arithmetic", "clamp"}
)

# Per value of rank 2 or more: (the same in every row of a vreg: replicated along sublanes,
# the same in every lane: replicated along lanes). A scalar is both.
_SCALAR = (True, True)
_FULL = (False, False)


def replicated_costs(jaxpr: Any, sublanes: int = 8, lanes: int = LANES) -> dict[int, dict[str, float]]:
    """Per equation index of `jaxpr` whose result Mosaic holds in fewer vregs than its shape: the
    element ops it costs per unit (`vector_units` scaled to the distinct vregs)."""
    kinds: dict[Any, tuple[bool, bool]] = {}
    costs: dict[int, dict[str, float]] = {}
    for index, eqn in enumerate(jaxpr.eqns):
        if len(eqn.outvars) != 1:
            continue
        out = eqn.outvars[0]
        shape = tuple(getattr(out.aval, "shape", ()))
        kind = _kind(eqn, kinds)
        if kind is None or len(shape) < 2:
            continue
        kinds[out] = kind
        if kind == _FULL:
            continue
        distinct = list(shape)
        if kind[0]:
            distinct[-2] = 1
        if kind[1]:
            distinct[-1] = 1
        full = padded_elements(shape, sublanes, lanes=lanes)
        fewer = padded_elements(distinct, sublanes, lanes=lanes)
        costs[index] = {unit: ops * fewer / full for unit, ops in vector_units(eqn, sublanes, lanes).items()}
    return costs


def _kind(eqn: Any, kinds: dict[Any, tuple[bool, bool]]) -> tuple[bool, bool] | None:
    """How the result of `eqn` is replicated, or None when it is not a vector value of rank 2+."""
    name = eqn.primitive.name
    shape = tuple(getattr(eqn.outvars[0].aval, "shape", ()))
    if len(shape) < 2:
        return None
    if name == "iota":
        dimension = int(eqn.params["dimension"])
        return (
            (False, True)
            if dimension == len(shape) - 2
            else (True, False)
            if dimension == len(shape) - 1
            else _FULL
        )
    if name == "broadcast_in_dim":
        return (
            _SCALAR
            if size(getattr(eqn.invars[0].aval, "shape", ())) == 1 and not eqn.params["broadcast_dimensions"]
            else _FULL
        )
    if name not in ELEMENTWISE:
        return _FULL
    rows, cols = True, True
    for var in eqn.invars:
        operand = _of(var, kinds)
        rows, cols = rows and operand[0], cols and operand[1]
    return rows, cols


def _of(var: Any, kinds: dict[Any, tuple[bool, bool]]) -> tuple[bool, bool]:
    if not getattr(var.aval, "shape", ()):
        return _SCALAR  # a literal or a scalar value, splat where it meets a vector
    return kinds.get(var, _FULL)
