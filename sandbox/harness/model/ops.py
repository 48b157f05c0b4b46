"""What one equation of a kernel body is, for the model: a dot's kind and flops, a scan's layout,
whether a body synchronises; and `Acc`, the work collected while walking (see `walker`)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

import numpy as np

from sandbox.harness.model.evaluate import size

CALLS = {"pjit": "jaxpr", "jit": "jaxpr", "closed_call": "call_jaxpr", "core_call": "call_jaxpr",
         "remat": "jaxpr", "remat2": "jaxpr", "checkpoint": "jaxpr", "custom_jvp_call": "call_jaxpr",
         "custom_vjp_call": "call_jaxpr", "custom_vjp_call_jaxpr": "fun_jaxpr"}  # fmt: skip
SYNCS = {"dma_start", "dma_wait", "semaphore_signal", "semaphore_wait"}
FREE = {"program_id", "num_programs", "axis_index", "delay", "trace_start", "trace_stop", "debug_callback"}


PADDING = "_padding"  # a dot kind's suffix for the MXU work its padding to the MXU's tiles costs


def useful(flops: dict[str, Any]) -> Any:
    """The flops of dots, without the padding (`PADDING` kinds) that only costs MXU time."""
    return sum((v for k, v in flops.items() if not k.endswith(PADDING)), start=0.0)


class Acc:
    """Work collected so far: MXU flops per dot kind, vector element ops (VALU-equivalent, and per
    unit: `UNITS`) and scalar operations (per step in grid mode). Per dot that vector work waits for
    (`barriers`): `after`, that work (also in the total), and `prefix`, the MXU flops issued up to
    the dot's end."""

    def __init__(self, zero: Any) -> None:
        self.zero = zero
        self.mxu: dict[str, Any] = {}
        self.units: dict[str, Any] = {}  # element ops per vector unit, unweighted
        # A count, made an array over the steps only once a masked (branch-only) op is counted.
        self.scalar: Any = 0.0
        self.after: dict[int, Any] = {}
        self.prefix: dict[int, dict[str, Any]] = {}
        # The largest value reduced over lanes (its padded elements): how much of the statistics'
        # chain stays in vregs (`cost.Rates.serial_share`).
        self.reduced: Any = zero

    def add(
        self, kind: str | None, flops: float, units: Mapping[str, float], mask: Any, wait: int = -1
    ) -> None:
        if kind is not None:
            self.mxu[kind] = self.mxu.get(kind, self.zero) + flops * mask
        vector = weighted(units)
        if vector:
            for unit, ops in units.items():
                self.units[unit] = self.units.get(unit, self.zero) + ops * mask
        if wait >= 0 and vector:
            self.after[wait] = self.after.get(wait, self.zero) + vector * mask

    def reduce(self, elements: float, mask: Any) -> None:
        """A lane reduction of a value of `elements` padded elements, where `mask` runs it."""
        self.reduced = np.maximum(self.reduced, elements * np.minimum(mask, 1))

    def mark(self, dot: int) -> None:
        """Dot number `dot` was just issued: the MXU work up to its end."""
        self.prefix[dot] = dict(self.mxu)

    def absorb(self, other: Acc, times: Any = 1) -> None:
        """`times` repeats of `other` (a loop counted from one iteration, or 0/1 per step for a
        branch). A dot of `other` is the last repeat's: its prefix is this one's MXU work, the
        repeats before and its own."""
        if other.after:
            kinds = set(self.mxu) | set(other.mxu)
            last, repeats = np.minimum(times, 1), np.maximum(times - 1, 0)
            before = {k: self.mxu.get(k, self.zero) + other.mxu.get(k, self.zero) * repeats for k in kinds}
            for dot, waiting in other.after.items():
                own = other.prefix[dot]
                self.prefix[dot] = {
                    k: before.get(k, self.zero) + own.get(k, self.zero) * last for k in kinds | set(own)
                }
                self.after[dot] = waiting * last
        for kind, flops in other.mxu.items():
            self.mxu[kind] = self.mxu.get(kind, self.zero) + flops * times
        for unit, ops in other.units.items():
            self.units[unit] = self.units.get(unit, self.zero) + ops * times
        self.scalar = self.scalar + other.scalar * times
        self.reduced = np.maximum(self.reduced, other.reduced * np.minimum(times, 1))

    @property
    def vector(self) -> Any:
        """VALU-equivalent element ops of the vector work (`units` weighted by `UNIT_WEIGHTS`)."""
        return weighted(self.units) + self.zero

    def weight(self) -> Any:
        return sum(self.mxu.values(), start=self.zero) + self.vector

    def later(self) -> tuple[tuple[dict[str, Any], Any], ...]:
        """Per dot that vector work waits for: (MXU flops up to its end, the vector ops that wait
        for it), as `cost.Rates.compute` takes them."""
        return tuple((self.prefix[d], ops) for d, ops in self.after.items())


def jaxpr_of(value: Any) -> Any:
    return value if hasattr(value, "eqns") else getattr(value, "jaxpr", value)


def sub_jaxprs(eqn: Any) -> list[Any]:
    """The jaxprs inside `eqn`'s params (a loop's body, a cond's branches, a closed call's)."""
    found = []
    for value in eqn.params.values():
        for item in value if isinstance(value, (tuple, list)) else (value,):
            sub = jaxpr_of(item)
            if hasattr(sub, "eqns"):
                found.append(sub)
    return found


@functools.lru_cache(maxsize=4096)
def has_sync(jaxpr: Any) -> bool:
    return any(eqn.primitive.name in SYNCS or any(has_sync(s) for s in sub_jaxprs(eqn)) for eqn in jaxpr.eqns)


def scan_counts(params: dict[str, Any]) -> tuple[int, int]:
    """(constants, carries) of a scan: jax 0.12 packs them in `ft_in` (consts, carry, xs)."""
    if "num_consts" in params:
        return int(params["num_consts"]), int(params["num_carry"])
    consts, carry, _ = params["ft_in"].unpack()
    return len(consts.vals), len(carry.vals)


def dot_kind(eqn: Any) -> str:
    """The MXU rate a dot runs at. f32 operands are rounded to bf16 (one pass) unless a higher
    precision is asked for: Pallas lowers `precision=None` and `DEFAULT` to no Mosaic contract
    precision, and JAX's Pallas TPU guide (docs/pallas/tpu/details.rst, "Precision control") says
    32-bit operands "will be rounded to bfloat16 unless float32 precision is requested"; `HIGH` is
    Mosaic's bf16x3 (3 passes), `HIGHEST` its fp32 (6 passes, `lax.Precision`'s doc)."""
    lhs, rhs = (str(v.aval.dtype) for v in eqn.invars[:2])
    types = {lhs, rhs}
    if types & {"float32", "float64"}:
        precision = eqn.params.get("precision")
        first = precision[0] if isinstance(precision, tuple) else precision
        name = str(getattr(first, "name", ""))
        return {"HIGHEST": "f32", "HIGH": "f32_3pass"}.get(name, "bf16")
    if all(t.startswith(("int", "uint")) for t in types):
        return "int8"
    if any("float8" in t for t in types):
        return "fp8"
    return "bf16"


def dot_flops(eqn: Any) -> int:
    (lhs_contract, _), _ = eqn.params["dimension_numbers"]
    lhs_shape = eqn.invars[0].aval.shape
    depth = size(lhs_shape[d] for d in lhs_contract)
    return 2 * size(eqn.outvars[0].aval.shape) * depth


# -- vector work, counted in vreg-sized element ops --------------------------------------------
#
# The VPU works on whole vregs of (sublanes, 128) 32-bit elements: a (128, 64) f32 tile takes
# as many vreg operations as a (128, 128) one, and a (128, 1) row statistic as many as (128, 128).
# So an operation's cost is its padded elements: leading dims x ceil(rows / sublanes) x
# ceil(cols / 128) x a vreg's elements, counted per unit that runs it (`UNITS`): the VALUs
# ("alu"), the EUP ("eup": transcendentals; a `div` is an EUP reciprocal and a VALU multiply),
# the cross-lane unit ("xlu"), VMEM loads and stores. A reduction over lanes is lowered as
# Mosaic's apply_vector_layout lowers it (vector_multi_reduction_rule, jax-ml/jax@43d14af^): the
# source vregs of each result vreg are combined element-wise on the VALU (one op per extra vreg),
# then the combined vreg goes once through the cross-lane unit (`tpu.all_reduce`). At 128-wide
# tiles that is one cross-lane vreg per vreg reduced; a (1024, 256) tile costs 128 x 1 VALU and
# 128 cross-lane vregs, not 256. Transposes and scans count one cross-lane op per vreg. A `tile`
# or `concatenate` of whole vregs (the running max tiled across a wide logits chunk) moves no
# data: the result is the same vregs. Two more, from the compiler's own listing of the v5e's
# programs (bench/tpu/v5e/listings.jsonl, its operations per unit): a `pltpu.bitcast` reinterprets
# vregs and issues nothing (no such operation in ragged paged attention's loop, which bitcasts 16
# times a step), and a conversion to a packed type (f32 to bf16) issues one `vpack` per result vreg,
# so it costs the packed result's vregs, half the f32 operand's.
# Two ways to turn the counts into time (`cost.Rates.compute`): each unit at its own rate, a
# step's vector work as long as its busiest unit's (where the chip table has per-unit rates), or
# all units added up in VALU issue slots at one fitted rate, with `UNIT_WEIGHTS`: a transcendental
# 2 (the EUP issues one vreg per cycle where the VALUs issue two), a cross-lane op 7 (a
# rotate-and-combine tree over 128 lanes, log2(128) = 7 steps), a load or store 1. The weights
# are assumptions from that structure (scaling-book, tpus.md: VPU, EUP and XLU are separate units).
LANES = 128
LDST_WEIGHT = 1.0  # a VMEM load or store of one vreg, in VALU issue slots
EUP_WEIGHT = 2.0
XLU_WEIGHT = 7.0
UNITS = ("alu", "eup", "xlu", "load", "store")
UNIT_WEIGHTS = {"alu": 1.0, "eup": EUP_WEIGHT, "xlu": XLU_WEIGHT, "load": LDST_WEIGHT, "store": LDST_WEIGHT}
TRANSCENDENTAL = frozenset(
    {"exp", "exp2", "log", "log1p", "tanh", "logistic", "rsqrt", "sqrt", "erf", "erf_inv", "pow"}
    | {"sin", "cos", "tan", "atan2", "expm1", "cbrt", "erfc"}
)
REDUCTIONS = frozenset({"reduce_max", "reduce_min", "reduce_sum", "reduce_prod", "argmax", "argmin"})
REDUCTIONS |= frozenset({"reduce_and", "reduce_or", "reduce_xor"})
CROSS_LANE = frozenset({"transpose", "cumsum", "cummax", "cummin", "cumprod", "cumlogsumexp", "roll"})
# `bitcast` is `pltpu.bitcast` (vregs reinterpreted), `bitcast_convert_type` `lax.bitcast_convert_type`.
LAYOUT_FREE = frozenset({"reshape", "squeeze", "expand_dims", "bitcast_convert_type", "bitcast"})


def weighted(units: Mapping[str, Any]) -> Any:
    """VALU-equivalent element ops of per-unit counts (`UNIT_WEIGHTS`)."""
    return sum((UNIT_WEIGHTS[unit] * ops for unit, ops in units.items()), start=0.0)


def padded_elements(shape: Any, sublanes: int = 8, packing: int = 1, lanes: int = LANES) -> int:
    """Elements of `shape` padded to whole vregs of (sublanes x packing, lanes); a SparseCore's
    vregs are one row of its 8 or 16 lanes (sublanes = 1)."""
    dims = tuple(int(d) for d in shape) or (1,)
    rows, cols = (dims[-2], dims[-1]) if len(dims) >= 2 else (1, dims[-1])
    lead = size(dims[:-2]) if len(dims) > 2 else 1
    tile_rows = sublanes * packing
    return lead * -(-rows // tile_rows) * -(-cols // lanes) * sublanes * lanes


def vector_cost(eqn: Any, sublanes: int = 8, lanes: int = LANES) -> float:
    """VALU-equivalent element ops of one vector equation (0 for scalars and layout no-ops)."""
    return float(weighted(vector_units(eqn, sublanes, lanes)))


def vector_units(eqn: Any, sublanes: int = 8, lanes: int = LANES) -> dict[str, float]:
    """Element ops of one vector equation per unit that runs it (empty for scalars and layout no-ops)."""
    name = eqn.primitive.name
    if name in LAYOUT_FREE:
        return {}
    out = max((size(getattr(v.aval, "shape", ())) for v in eqn.outvars), default=0)
    if name in REDUCTIONS:
        combine, cross = reduction_parts(eqn, sublanes, lanes)
        return {"alu": combine} if cross is None else {"alu": combine, "xlu": cross / XLU_WEIGHT}
    if name in {"tile", "concatenate"} and _whole_vregs(eqn, sublanes, lanes):
        return {}
    if out <= 1:
        return {}
    shape = max((getattr(v.aval, "shape", ()) for v in eqn.outvars), key=size)
    elements = float(padded_elements(shape, sublanes, lanes=lanes))
    if name in TRANSCENDENTAL:
        return {"eup": elements}
    if name == "div":
        return {"eup": elements, "alu": elements}
    if name in CROSS_LANE:
        return {"xlu": elements}
    if name == "convert_element_type" and (packing := _packing(eqn.outvars[0].aval.dtype)) > 1:
        # Narrowing to a packed type: one pack per result vreg, two (or four) f32 vregs in each.
        elements = float(padded_elements(shape, sublanes, packing=packing, lanes=lanes))
    return {"alu": elements}


def _packing(dtype: Any) -> int:
    """How many values of `dtype` share one 32-bit vreg element (2 for bf16, 4 for int8)."""
    return max(4 // max(int(getattr(dtype, "itemsize", 4) or 4), 1), 1)


def reduction_parts(eqn: Any, sublanes: int = 8, lanes: int = LANES) -> tuple[float, float | None]:
    """A reduction's element-wise part and, for one over the last (lane) axis, its cross-lane part
    in VALU-equivalent ops (None when the lanes are kept). Mosaic's lane reduction combines each
    result vreg's source vregs element-wise (one VALU op per extra vreg), then sends the combined
    vreg once through the cross-lane unit."""
    operand = getattr(eqn.invars[0].aval, "shape", ())
    if size(operand) <= 1:
        return 0.0, None
    axes = tuple(eqn.params.get("axes", ()) or (eqn.params.get("axis", -1),))
    reduced = {a % max(len(operand), 1) for a in axes}
    elements = padded_elements(operand, sublanes, lanes=lanes)
    if (len(operand) - 1) not in reduced:
        return float(elements), None
    kept = tuple(1 if axis in reduced else dim for axis, dim in enumerate(operand))
    results = padded_elements(kept, sublanes, lanes=lanes)
    return float(elements - results), float(results * XLU_WEIGHT)


def _whole_vregs(eqn: Any, sublanes: int, lanes: int) -> bool:
    """Whether a `tile` or `concatenate` only places whole vregs: Pallas lowers `tile` to
    `tpu.concatenate`, whose vregs are the operands' own when every piece starts on a vreg boundary
    (`tpu_concatenate_rule`); a piece cut across a vreg needs a select."""
    shape = tuple(getattr(eqn.invars[0].aval, "shape", ()))
    if eqn.primitive.name == "tile":
        axes = [a for a, r in enumerate(eqn.params["reps"]) if r > 1]
        pieces = [shape]
    else:
        axes = [int(eqn.params["dimension"])]
        pieces = [tuple(getattr(v.aval, "shape", ())) for v in eqn.invars]
    packing = _packing(eqn.invars[0].aval.dtype)
    tile = {len(shape) - 1: lanes, len(shape) - 2: sublanes * packing}
    return all(piece[a] % tile.get(a, 1) == 0 for a in axes for piece in pieces)


def memory_cost(shape: Any, dtype: Any, sublanes: int = 8, lanes: int = LANES) -> float:
    """The element ops of a VMEM load or store of `shape` (unweighted: its unit is "load" or
    "store"): packed dtypes (bf16, int8) fill a vreg's sublanes 2 or 4 deep."""
    return float(padded_elements(shape, sublanes, packing=_packing(dtype), lanes=lanes))


def padded_dot_flops(eqn: Any, mxu: int) -> int:
    """A dot's flops on the MXU: the contraction and output columns padded to the MXU's width
    (weights are loaded as mxu x mxu tiles), the rows to a sublane multiple (8)."""
    (lhs_contract, rhs_contract), (lhs_batch, _) = eqn.params["dimension_numbers"]
    lhs_shape, rhs_shape = eqn.invars[0].aval.shape, eqn.invars[1].aval.shape
    depth = size(lhs_shape[d] for d in lhs_contract)
    batch = size(lhs_shape[d] for d in lhs_batch)
    rows = size(lhs_shape[d] for d in range(len(lhs_shape)) if d not in lhs_contract and d not in lhs_batch)
    rhs_free = [
        d
        for d in range(len(rhs_shape))
        if d not in rhs_contract and d not in eqn.params["dimension_numbers"][1][1]
    ]
    cols = size(rhs_shape[d] for d in rhs_free)
    pad = lambda n, m: -(-max(n, 1) // m) * m  # noqa: E731
    return 2 * batch * pad(rows, 8) * pad(depth, mxu) * pad(cols, mxu)
