"""What one equation of a kernel body is, for the model: a dot's kind and flops, a scan's layout,
whether a body synchronises; and `Acc`, the work collected while walking (see `walker`)."""

from __future__ import annotations

import functools
from typing import Any

from sandbox.harness.model.evaluate import size

CALLS = {"pjit": "jaxpr", "jit": "jaxpr", "closed_call": "call_jaxpr", "core_call": "call_jaxpr",
         "remat": "jaxpr", "checkpoint": "jaxpr", "custom_jvp_call": "call_jaxpr",
         "custom_vjp_call": "call_jaxpr", "custom_vjp_call_jaxpr": "fun_jaxpr"}  # fmt: skip
SYNCS = {"dma_start", "dma_wait", "semaphore_signal", "semaphore_wait"}
FREE = {"program_id", "num_programs", "axis_index", "delay", "trace_start", "trace_stop", "debug_callback"}


class Acc:
    """Work collected so far: MXU flops per dot kind and vector element ops (per step in grid mode)."""

    def __init__(self, zero: Any) -> None:
        self.zero = zero
        self.mxu: dict[str, Any] = {}
        self.vector: Any = zero

    def add(self, kind: str | None, flops: float, vector: float, mask: Any) -> None:
        if kind is not None:
            self.mxu[kind] = self.mxu.get(kind, self.zero) + flops * mask
        if vector:
            self.vector = self.vector + vector * mask

    def absorb(self, other: Acc, times: Any = 1) -> None:
        for kind, flops in other.mxu.items():
            self.mxu[kind] = self.mxu.get(kind, self.zero) + flops * times
        self.vector = self.vector + other.vector * times

    def weight(self) -> Any:
        return sum(self.mxu.values(), start=self.zero) + self.vector


def jaxpr_of(value: Any) -> Any:
    return value if hasattr(value, "eqns") else getattr(value, "jaxpr", value)


@functools.lru_cache(maxsize=4096)
def has_sync(jaxpr: Any) -> bool:
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in SYNCS:
            return True
        for value in eqn.params.values():
            for item in value if isinstance(value, (tuple, list)) else (value,):
                sub = jaxpr_of(item)
                if hasattr(sub, "eqns") and has_sync(sub):
                    return True
    return False


def scan_counts(params: dict[str, Any]) -> tuple[int, int]:
    """(constants, carries) of a scan: jax 0.12 packs them in `ft_in` (consts, carry, xs)."""
    if "num_consts" in params:
        return int(params["num_consts"]), int(params["num_carry"])
    consts, carry, _ = params["ft_in"].unpack()
    return len(consts.vals), len(carry.vals)


def dot_kind(eqn: Any) -> str:
    lhs, rhs = (str(v.aval.dtype) for v in eqn.invars[:2])
    types = {lhs, rhs}
    if types & {"float32", "float64"}:
        precision = eqn.params.get("precision")
        first = precision[0] if isinstance(precision, tuple) else precision
        return "f32_3pass" if str(getattr(first, "name", "")) == "HIGH" else "f32"
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
