"""The stand-ins for published kernels compute what they stand in for (TPU interpret mode on this CPU,
small shapes; the model costs them at the published ones)."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.experimental.pallas import tpu as pltpu

from sandbox.harness.model.estimate import chip_context
from sandbox.protocol.chips import chip_info
from tests.model.published_kernels import linear_softmax_cross_entropy


def _cross_entropy_reference(x, labels, w):
    logits = jnp.dot(x, w.astype(jnp.float32), precision=jax.lax.Precision.HIGHEST)
    picked = jnp.take_along_axis(logits, labels[:, None], axis=1)[:, 0]
    return jnp.mean(jax.nn.logsumexp(logits, axis=-1) - picked)


def test_linear_softmax_cross_entropy_matches_a_plain_reference():
    """Two batch blocks, two hidden blocks and a ragged last vocabulary block (640 = 2 x 256 + 128),
    with labels in every vocabulary block, the last one's included."""
    rng = np.random.default_rng(0)
    batch, hidden, vocab = 256, 256, 640
    x = jnp.asarray(rng.standard_normal((batch, hidden)), jnp.float32)
    w = jnp.asarray(rng.standard_normal((hidden, vocab)) / 16, jnp.bfloat16)
    labels = jnp.asarray(rng.integers(0, vocab, batch), jnp.int32)
    assert int((labels >= 512).sum()) > 0
    fn = functools.partial(linear_softmax_cross_entropy, block_b=128, block_h=128, block_v=256)
    with chip_context(chip_info("tpu7x")), pltpu.force_tpu_interpret_mode(pltpu.InterpretParams()):
        got = jax.jit(fn)(x, labels, w)
    want = _cross_entropy_reference(x, labels, w)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5)


def test_linear_softmax_cross_entropy_refuses_ragged_batch_blocks():
    x = jax.ShapeDtypeStruct((384, 256), jnp.float32)
    labels = jax.ShapeDtypeStruct((384,), jnp.int32)
    w = jax.ShapeDtypeStruct((256, 512), jnp.bfloat16)
    fn = functools.partial(linear_softmax_cross_entropy, block_b=256, block_h=128, block_v=256)
    with pytest.raises(ValueError, match="block_b=256"):
        jax.eval_shape(fn, x, labels, w)
