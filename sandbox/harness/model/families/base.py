"""The interface every kernel family implements, and what its classification reads from a traced kernel.

A family (`Family`) is one kind of kernel as far as trusting an estimate goes: the text every estimate
shows (`name`), whether a traced kernel is of it (`matches`, on the kernel's `Traits`), and which
published kernels the model's error on it is measured on (`validation_points`: `kernel` names in
tests/data/published_tpu_timings.toml). That error per chip, a `Band`, is generated from the
measurements into `published.py` (and from the v5e sweeps into `measured.py`), never typed in.
Each family lives in its own module beside this one; `registry.FAMILIES` lists them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from sandbox.harness.model.ops import jaxpr_of, sub_jaxprs

# Row reductions and the transcendental unit: what attention and norms add to a matmul step.
SOFTMAX_PRIMITIVES = frozenset(
    {"exp", "exp2", "log", "log1p", "tanh", "logistic", "rsqrt", "sqrt", "erf", "pow", "div"}
    | {"reduce_max", "reduce_min", "reduce_sum", "argmax", "argmin", "cumsum", "cummax"}
)
_QUANTIZED = ("float8", "int8", "uint8", "int4", "uint4")

# How the model costs the kernel: a `pallas_call` as a BlockSpec pipeline, a `pl.kernel` or DMA-driven
# program simulated event by event, or a program on SparseCore subcores.
Form = Literal["grid", "program", "sparse_core"]


@dataclass(frozen=True)
class Band:
    """The model's signed error (estimate / measured - 1) over `points` measured kernels of a family."""

    family: str
    chip: str
    low: float
    high: float
    points: int
    source: str


@dataclass(frozen=True)
class Traits:
    """What a traced kernel does, as far as its family goes."""

    form: Form
    names: frozenset[str] = frozenset()  # every primitive in its body and the jaxprs inside it
    prefetch: bool = False  # scalar-prefetched operands (block tables, block masks)
    dynamic: bool = False  # a grid sized by the inputs
    quantized: bool = False  # 8- or 4-bit dots (looked for in a grid sized by the inputs only)
    remote: bool = False  # DMAs to another device (over ICI)

    @property
    def dots(self) -> bool:
        return "dot_general" in self.names

    @property
    def softmax_like(self) -> bool:
        return bool(self.names & SOFTMAX_PRIMITIVES)

    @classmethod
    def of_grid(cls, body: Any, *, prefetch: bool, dynamic: bool) -> Traits:
        """A `pallas_call` costed as a BlockSpec pipeline."""
        jaxpr = jaxpr_of(body)
        names = frozenset(primitives(jaxpr))
        quantized = dynamic and "dot_general" in names and quantized_dots(jaxpr)
        return cls("grid", names, prefetch=prefetch, dynamic=dynamic, quantized=quantized)

    @classmethod
    def of_program(cls, body: Any, *, remote: bool) -> Traits:
        """A `pl.kernel` on TensorCores, or a `pallas_call` costed as a program."""
        return cls("program", frozenset(primitives(jaxpr_of(body))), remote=remote)

    @classmethod
    def of_sparse_core(cls) -> Traits:
        """A `pl.kernel` on a SparseCore mesh: its family does not depend on its body."""
        return cls("sparse_core")


@dataclass(frozen=True)
class Family:
    """One kind of kernel: its name, how to recognise it, and the published kernels it is validated on."""

    name: str
    matches: Callable[[Traits], bool]
    validation_points: tuple[str, ...] = ()  # the published kernels its bands are the errors on


def primitives(jaxpr: Any) -> set[str]:
    """Every primitive's name in `jaxpr` and the jaxprs inside it."""
    found: set[str] = set()
    for eqn in jaxpr.eqns:
        found.add(eqn.primitive.name)
        for sub in sub_jaxprs(eqn):
            found |= primitives(sub)
    return found


def quantized_dots(jaxpr: Any) -> bool:
    """Whether a dot in `jaxpr` (or a jaxpr inside it) takes 8- or 4-bit operands."""
    return any(
        (
            eqn.primitive.name == "dot_general"
            and any(str(getattr(v.aval, "dtype", "")).startswith(_QUANTIZED) for v in eqn.invars)
        )
        or any(quantized_dots(sub) for sub in sub_jaxprs(eqn))
        for eqn in jaxpr.eqns
    )
