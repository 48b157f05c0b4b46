"""`pltpu.stochastic_round` in TPU interpret mode (jax 0.12.0.1 has no CPU rule for it).

A TPU converts f32 to a narrower type (bf16, the fp8 types, f4 e2m1, int4) by rounding each value
to one of its two neighbours in the target type, chosen with the given uint32 random bits, so that
on average the result equals the input. Which neighbour a given random word picks is the hardware's
(Mosaic's `tpu.stochastic_convert`), and neither JAX nor Mosaic documents it; JAX's own test only
checks that every result is one of the two neighbours. This rule keeps that contract and the
unbiased distribution: it rounds up when `bits / 2**32` is below the input's distance from the lower
neighbour, as a fraction of the gap. So a kernel's statistics match a TPU's, but its bits for a given
random word may differ from a TPU's: compare against a reference with a tolerance of one step of the
target type, not bit for bit. Values the target cannot hold (NaN, overflow) convert as a plain cast.
"""

from __future__ import annotations

from typing import Any

NAME = "stochastic_round"


def install(ipc: Any) -> bool:
    from jax._src.pallas.mosaic import primitives as tpu_primitives

    prim = getattr(tpu_primitives, "stochastic_round_p", None)
    table = getattr(ipc, "_interpret_impls", None)
    if prim is None or table is None:
        return False
    table.setdefault(prim, stochastic_round)
    return True


def stochastic_round(x: Any, random_bits: Any, *, target_dtype: Any) -> Any:
    """`x` (f32) rounded to `target_dtype` by `random_bits` (uint32, same shape)."""
    import jax.numpy as jnp

    target = jnp.dtype(target_dtype)
    if jnp.issubdtype(target, jnp.integer):
        lower, upper = jnp.floor(x), jnp.ceil(x)
        info = jnp.iinfo(target)
        lower, upper = (jnp.clip(v, int(info.min), int(info.max)) for v in (lower, upper))
        return _pick(x, random_bits, lower, upper).astype(target)
    nearest = x.astype(target)
    as_f32 = nearest.astype(jnp.float32)
    finfo = jnp.finfo(target)
    lower = jnp.where(as_f32 > x, jnp.nextafter(nearest, jnp.asarray(finfo.min, target)), nearest)
    upper = jnp.where(as_f32 < x, jnp.nextafter(nearest, jnp.asarray(finfo.max, target)), nearest)
    picked = _pick(x, random_bits, lower.astype(jnp.float32), upper.astype(jnp.float32)).astype(target)
    plain = ~jnp.isfinite(as_f32) | ~jnp.isfinite(x)
    return jnp.where(plain, nearest, picked)


def _pick(x: Any, bits: Any, lower: Any, upper: Any) -> Any:
    import jax.numpy as jnp

    gap = upper - lower
    fraction = jnp.where(gap > 0, (x - lower) / jnp.where(gap > 0, gap, 1), 0)
    # The top 24 bits as a fraction in [0, 1), exact in f32.
    uniform = (bits >> 8).astype(jnp.float32) * jnp.float32(2.0**-24)
    return jnp.where(uniform < fraction, upper, lower)
