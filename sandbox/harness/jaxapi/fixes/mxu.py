"""The MXU's default precision in TPU interpret mode: an f32 dot inside a kernel runs as one bf16 pass.

On a TPU a `jnp.dot`/`lax.dot_general` of f32 operands at the default precision rounds both operands
to bf16 and accumulates their (exact) products in f32. Measured on the lent v5e (JAX 0.12.0.1): the
chip's output equals that emulation to 1.1e-5 (K = 256) and 2.1e-5 (K = 1024) for N(0,1) data, and
differs from exact f32 by 0.15-0.31 (bench/tpu/v5e/corpus). JAX's interpreter computes them in exact
f32, so a kernel that would mismatch on a chip passed in the simulator. This rewrite gives the chip's
arithmetic: each such dot's float operands are rounded to bf16 and multiplied with f32 accumulation.
`Precision.HIGHEST` (f32 accuracy on the chip, measured ~1e-5 at K = 256) is left exact.
`Precision.HIGH` is three bf16 passes over a split the chip makes its own way: each f32 operand's high
part is the operand *truncated* to bf16 (its low 16 bits zeroed), its low part the rest rounded to the
nearest bf16, and the passes are high x high + high x low + low x high. Measured on the v5e at K = 512:
the chip's output equals that emulation to 1.2e-5 (correlation 1.000 of the errors), and is 1.2e-3 from
exact f32; a split that rounds the high part too (the textbook bf16x3) is 1.3e-3 from the chip.
Integer and bf16 operands are untouched (their products are exact on the MXU as on the CPU).

Each rewritten dot is counted, so the run can say in one line why a mismatch has the MXU's size.
"""

from __future__ import annotations

from typing import Any

from sandbox.harness.jaxapi.fixes import rewrite

NAME = "mxu_precision"
# Dots rewritten in this process (read by the session for its mismatch hint).
ROUNDED = [0]
HINT = (
    "the kernel's f32 dots ran as one bf16 MXU pass (the default precision), as on a real TPU; for f32 "
    "accuracy pass precision=jax.lax.Precision.HIGHEST (about 2.6x slower on v5e), or compare at a bf16 "
    "tolerance"
)


def install(ipc: Any) -> bool:
    return rewrite.install(ipc, NAME, (on_the_mxu, _as_the_chip))


def on_the_mxu(eqn: Any) -> bool:
    """A dot whose arithmetic on the chip is not exact f32: float operands, one of them f32, at the
    default precision (one bf16 pass), or both f32 at `Precision.HIGH` (three passes)."""
    return one_bf16_pass(eqn) or three_bf16_passes(eqn)


def one_bf16_pass(eqn: Any) -> bool:
    """A dot the chip runs as one bf16 pass: an f32 operand, float operands, the default precision."""
    import jax.numpy as jnp

    dtypes = _float_dtypes(eqn)
    return bool(dtypes) and jnp.dtype(jnp.float32) in dtypes and _precision(eqn) == "DEFAULT"


def three_bf16_passes(eqn: Any) -> bool:
    """A dot the chip runs as three bf16 passes: both operands f32, `Precision.HIGH`."""
    import jax.numpy as jnp

    dtypes = _float_dtypes(eqn)
    return dtypes == [jnp.dtype(jnp.float32)] * 2 and _precision(eqn) == "HIGH"


def _float_dtypes(eqn: Any) -> list[Any]:
    """The operand dtypes of a dot with float operands, else []."""
    import jax.numpy as jnp
    from jax import lax

    if eqn.primitive is not lax.dot_general_p:
        return []
    dtypes = [jnp.dtype(v.aval.dtype) for v in eqn.invars[:2]]
    return dtypes if all(jnp.issubdtype(d, jnp.floating) for d in dtypes) else []


def _precision(eqn: Any) -> str:
    """ "DEFAULT", "HIGH", "HIGHEST", or "MIXED" when the two operands ask for different ones."""
    from jax import lax

    precision = eqn.params.get("precision")
    parts = precision if isinstance(precision, tuple) else (precision,)
    names = {
        "DEFAULT" if p is None or p == lax.Precision.DEFAULT else str(getattr(p, "name", p)) for p in parts
    }
    return names.pop() if len(names) == 1 else "MIXED"


def _as_the_chip(eqn: Any, lhs: Any, rhs: Any) -> Any:
    if three_bf16_passes(eqn):
        return _as_three_bf16_passes(eqn, lhs, rhs)
    return _as_one_bf16_pass(eqn, lhs, rhs)


def _as_three_bf16_passes(eqn: Any, lhs: Any, rhs: Any) -> Any:
    import jax.numpy as jnp
    from jax import lax

    def split(x: Any) -> tuple[Any, Any]:
        bits = lax.bitcast_convert_type(x, jnp.uint32) & jnp.uint32(0xFFFF0000)
        high = lax.bitcast_convert_type(bits, jnp.float32)
        return high.astype(jnp.bfloat16), (x - high).astype(jnp.bfloat16)

    def dot(a: Any, b: Any) -> Any:
        numbers = eqn.params["dimension_numbers"]
        return lax.dot_general(a, b, numbers, preferred_element_type=jnp.float32)

    (lhs_high, lhs_low), (rhs_high, rhs_low) = split(lhs), split(rhs)
    out = dot(lhs_high, rhs_high) + (dot(lhs_high, rhs_low) + dot(lhs_low, rhs_high))
    return out.astype(eqn.outvars[0].aval.dtype)


def _as_one_bf16_pass(eqn: Any, lhs: Any, rhs: Any) -> Any:
    import jax.numpy as jnp
    from jax import lax

    ROUNDED[0] += 1
    out = lax.dot_general(
        lhs.astype(jnp.bfloat16),
        rhs.astype(jnp.bfloat16),
        eqn.params["dimension_numbers"],
        preferred_element_type=jnp.float32,
    )
    return out.astype(eqn.outvars[0].aval.dtype)
