"""The MXU's default precision in TPU interpret mode: an f32 dot inside a kernel runs as one bf16 pass.

On a TPU a `jnp.dot`/`lax.dot_general` of f32 operands at the default precision rounds both operands
to bf16 and accumulates their (exact) products in f32. Measured on the lent v5e (JAX 0.12.0.1): the
chip's output equals that emulation to 1.1e-5 (K = 256) and 2.1e-5 (K = 1024) for N(0,1) data, and
differs from exact f32 by 0.15-0.31 (bench/tpu/v5e/corpus). JAX's interpreter computes them in exact
f32, so a kernel that would mismatch on a chip passed in the simulator. This rewrite gives the chip's
arithmetic: each such dot's float operands are rounded to bf16 and multiplied with f32 accumulation.
`Precision.HIGHEST` (f32 accuracy on the chip, measured ~1e-5 at K = 256) is left exact; so is
`Precision.HIGH`, whose result on the v5e (1.2e-3 from exact at K = 512) matches neither exact f32
nor a plain bf16x3 emulation: a difference the simulator states instead of modelling. Integer and
bf16 operands are untouched (their products are exact on the MXU as on the CPU).

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
    return rewrite.install(ipc, NAME, (one_bf16_pass, _as_one_bf16_pass))


def one_bf16_pass(eqn: Any) -> bool:
    """A dot the chip runs as one bf16 pass: an f32 operand, float operands, the default precision."""
    import jax.numpy as jnp
    from jax import lax

    if eqn.primitive is not lax.dot_general_p:
        return False
    dtypes = [jnp.dtype(v.aval.dtype) for v in eqn.invars[:2]]
    if not all(jnp.issubdtype(d, jnp.floating) for d in dtypes) or jnp.dtype(jnp.float32) not in dtypes:
        return False
    return _is_default(eqn.params.get("precision"))


def _is_default(precision: Any) -> bool:
    from jax import lax

    if precision is None:
        return True
    parts = precision if isinstance(precision, tuple) else (precision,)
    return all(p is None or p == lax.Precision.DEFAULT for p in parts)


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
