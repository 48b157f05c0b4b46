"""Vector-unit kernels: elementwise ops, reductions, transcendentals and scans (fori_loop carries).

The transcendentals check at a tight f32 tolerance (rtol 1e-5, atol 1e-6): the chip computes exp,
tanh, log, rsqrt and sigmoid with its own approximations, so these cases measure how far they are
from float64; interpret mode computes them with XLA:CPU's. pl.reciprocal(approx=True) is approximate
by contract and checks at the looser tolerance an author using it would accept.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
from corpus_case import BF16, BF16_OUT, EXACT, F32_ELEMENTWISE, Case, Tolerance, normal, uniform
from corpus_dots import out, whole
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

TRANSCENDENTAL = (
    "the chip's transcendental is approximate (rel. error up to {}), past the f32 check; the simulator "
    "computes it exactly and states the chip's band beside the result"
)
# Simulator against chip for an approximated transcendental: both within ~1e-4 relative of float64.
TRANSCENDENTAL_AGREEMENT = Tolerance(rtol=1e-3, atol=1e-5)
# pl.reciprocal moved to pltpu after JAX 0.10; the corpus runs on every runtime the playground offers.
reciprocal = getattr(pltpu, "reciprocal", None) or pl.reciprocal
SUM = Tolerance(rtol=1e-5, atol=1e-4)  # f32 sums of N(0,1): summation order differs between chip and XLA:CPU


def unary_kernel(x_ref, o_ref, *, op):
    o_ref[...] = op(x_ref[...]).astype(o_ref.dtype)


@functools.partial(jax.jit, static_argnames=["op", "out_shape"])
def unary(x, *, op, out_shape=None):
    shape = out_shape or x.shape
    return whole(functools.partial(unary_kernel, op=op), out(shape, x.dtype), x)


def fma_kernel(x_ref, y_ref, z_ref, o_ref):
    o_ref[...] = x_ref[...] * y_ref[...] + z_ref[...]


@jax.jit
def fma(x, y, z):
    return whole(fma_kernel, out(x.shape, x.dtype), x, y, z)


def int_kernel(a_ref, b_ref, o_ref):
    a, b = a_ref[...], b_ref[...]
    o_ref[...] = ((a ^ b) + (a >> 3) - (b << 2)) * jnp.where(a > b, 3, -1)


@jax.jit
def int_ops(a, b):
    return whole(int_kernel, out(a.shape, a.dtype), a, b)


def two_output_kernel(x_ref, sum_ref, max_ref):
    x = x_ref[...]
    sum_ref[...] = jnp.sum(x, axis=0, keepdims=True)
    max_ref[...] = jnp.max(x, axis=1, keepdims=True)


@jax.jit
def sum_cols_max_rows(x):
    m, n = x.shape
    return pl.pallas_call(two_output_kernel, out_shape=(out((1, n), x.dtype), out((m, 1), x.dtype)))(x)


def layernorm_kernel(x_ref, o_ref):
    x = x_ref[...].astype(jnp.float32)
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    o_ref[...] = ((x - mean) * lax.rsqrt(var + 1e-5)).astype(o_ref.dtype)


def softmax_kernel(x_ref, o_ref, *, approx):
    x = x_ref[...]
    e = jnp.exp(x - jnp.max(x, axis=-1, keepdims=True))
    o_ref[...] = e * reciprocal(jnp.sum(e, axis=-1, keepdims=True), approx=approx)


def cumsum_kernel(x_ref, o_ref):
    """Running sum down the rows: a fori_loop carrying one row, one dynamic row load/store per step."""

    def step(i, carry):
        carry = carry + x_ref[pl.ds(i, 1), :]
        o_ref[pl.ds(i, 1), :] = carry
        return carry

    lax.fori_loop(0, x_ref.shape[0], step, jnp.zeros((1, x_ref.shape[1]), x_ref.dtype))


def ema_kernel(x_ref, o_ref, *, decay):
    """h[t] = decay * h[t-1] + (1 - decay) * x[t]: the state row is the fori_loop's carry."""

    def step(i, h):
        h = decay * h + (1.0 - decay) * x_ref[pl.ds(i, 1), :]
        o_ref[pl.ds(i, 1), :] = h
        return h

    lax.fori_loop(0, x_ref.shape[0], step, jnp.zeros((1, x_ref.shape[1]), jnp.float32))


def carried_prefix_kernel(x_ref, o_ref, carry_ref):
    """Prefix sums of row blocks across grid steps: a VMEM carry survives from one step to the next."""

    @pl.when(pl.program_id(0) == 0)
    def _():
        carry_ref[...] = jnp.zeros_like(carry_ref)

    carry_ref[...] += jnp.sum(x_ref[...], axis=0, keepdims=True)
    o_ref[...] = jnp.broadcast_to(carry_ref[...], o_ref.shape)


@jax.jit
def carried_prefix(x):
    m, n = x.shape
    return pl.pallas_call(
        carried_prefix_kernel,
        out_shape=out((m, n), x.dtype),
        grid=(m // 8,),
        in_specs=[pl.BlockSpec((8, n), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((8, n), lambda i: (i, 0)),
        scratch_shapes=[pltpu.VMEM((1, n), jnp.float32)],
        compiler_params=pltpu.CompilerParams(dimension_semantics=("arbitrary",)),
    )(x)


def scan(kernel):
    return jax.jit(lambda x: whole(kernel, out(x.shape, x.dtype), x))


def ema_ref(x, decay=0.9):
    h, rows = np.zeros(x.shape[1]), []
    for row in x:
        h = decay * h + (1 - decay) * row
        rows.append(h)
    return np.stack(rows)


def block_prefix_ref(x):
    sums = np.cumsum(x.reshape(-1, 8, x.shape[1]).sum(axis=1), axis=0)
    return np.repeat(sums, 8, axis=0)


def softmax_ref(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def layernorm_ref(x):
    return (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)


def one(shape, dtype=np.float32, low=None, high=None):
    if low is not None:
        return lambda rng: (uniform(rng, shape, low, high),)
    return lambda rng: (normal(rng, shape, dtype),)


def transcendental(name, op, ref, make, band=None):
    """`band`: the chip's measured relative error where it is past the f32 check (the chip mismatches
    where the simulator, exact, passes; the run says so beside the result)."""
    return Case(
        name,
        functools.partial(unary, op=op),
        make,
        ref,
        **F32_ELEMENTWISE,
        chip_note=TRANSCENDENTAL.format(band) if band else "",
        chip_tolerance=TRANSCENDENTAL_AGREEMENT,
    )


SHAPE = (64, 256)
CASES = [
    Case(
        "fma_f32",
        fma,
        lambda rng: tuple(normal(rng, SHAPE) for _ in range(3)),
        lambda x, y, z: x * y + z,
        **F32_ELEMENTWISE,
    ),
    Case(
        "mul_add_bf16",
        fma,
        lambda rng: tuple(normal(rng, SHAPE, BF16) for _ in range(3)),
        lambda x, y, z: x * y + z,
        **BF16_OUT,
    ),
    Case(
        "int32_bit_ops",
        int_ops,
        lambda rng: tuple(rng.integers(-(2**20), 2**20, SHAPE).astype(np.int32) for _ in range(2)),
        lambda a, b: ((a ^ b) + (a >> 3) - (b << 2)) * np.where(a > b, 3, -1),
        **EXACT,
    ),
    Case(
        "sum_cols_max_rows_f32",
        sum_cols_max_rows,
        one((256, 256)),
        lambda x: (x.sum(0, keepdims=True), x.max(1, keepdims=True)),
        SUM.rtol,
        SUM.atol,
    ),
    Case(
        "max_rows_bf16",
        functools.partial(unary, op=lambda x: jnp.max(x, axis=1, keepdims=True), out_shape=(64, 1)),
        one((64, 512), BF16),
        lambda x: x.max(1, keepdims=True),
        **EXACT,
    ),
    Case(
        "sum_rows_f32",
        functools.partial(unary, op=lambda x: jnp.sum(x, axis=1, keepdims=True), out_shape=(128, 1)),
        one((128, 1024)),
        lambda x: x.sum(1, keepdims=True),
        SUM.rtol,
        SUM.atol,
    ),
    Case("layernorm_bf16", scan(layernorm_kernel), one((64, 512), BF16), layernorm_ref, **BF16_OUT),
    transcendental("exp_f32", jnp.exp, np.exp, one(SHAPE, low=-10.0, high=10.0)),  # chip: 5.0e-6
    transcendental("tanh_f32", jnp.tanh, np.tanh, one(SHAPE), "8.2e-5, measured on the v5e"),
    transcendental("log_f32", jnp.log, np.log, one(SHAPE, low=1e-3, high=1e3), "2.6e-4, measured on the v5e"),
    transcendental(
        "rsqrt_f32", lax.rsqrt, lambda x: 1 / np.sqrt(x), one(SHAPE, low=1e-2, high=1e2)
    ),  # 1.4e-7
    transcendental("sigmoid_f32", jax.nn.sigmoid, lambda x: 1 / (1 + np.exp(-x)), one(SHAPE)),  # chip: 3.6e-6
    Case(
        "reciprocal_exact_f32",
        functools.partial(unary, op=functools.partial(reciprocal, approx=False)),
        one(SHAPE, low=0.1, high=10.0),
        lambda x: 1 / x,
        **F32_ELEMENTWISE,
    ),
    Case(
        "reciprocal_approx_f32",
        functools.partial(unary, op=functools.partial(reciprocal, approx=True)),
        one(SHAPE, low=0.1, high=10.0),
        lambda x: 1 / x,
        rtol=1e-3,
        atol=0.0,
        chip_tolerance=Tolerance(rtol=1e-2, atol=0.0),
    ),
    Case(
        "softmax_exact_f32",
        scan(functools.partial(softmax_kernel, approx=False)),
        one((64, 256)),
        softmax_ref,
        **F32_ELEMENTWISE,
        chip_tolerance=TRANSCENDENTAL_AGREEMENT,
    ),
    Case(
        "softmax_approx_f32",
        scan(functools.partial(softmax_kernel, approx=True)),
        one((64, 256)),
        softmax_ref,
        rtol=1e-3,
        atol=1e-6,
        chip_tolerance=Tolerance(rtol=1e-2, atol=1e-6),
    ),
    Case(
        "cumsum_fori_f32",
        scan(cumsum_kernel),
        one((64, 128)),
        lambda x: np.cumsum(x, axis=0),
        SUM.rtol,
        SUM.atol,
    ),
    Case(
        "ema_scan_fori_f32",
        scan(functools.partial(ema_kernel, decay=0.9)),
        one((64, 128)),
        ema_ref,
        SUM.rtol,
        SUM.atol,
    ),
    Case("prefix_across_grid_f32", carried_prefix, one((64, 128)), block_prefix_ref, SUM.rtol, SUM.atol),
]
