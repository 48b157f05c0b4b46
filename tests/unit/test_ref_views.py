"""The host-side ref views of `sandbox.harness.jaxapi.fixes.views` agree with JAX's own definitions."""

import numpy as np
import pytest

from sandbox.harness.jaxapi.fixes.views import bitcast, updated, viewed


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("float32", "int32"),
        ("float32", "bfloat16"),
        ("bfloat16", "float32"),
        ("int8", "int32"),
        ("int32", "int8"),
    ],
)
def test_a_bitcast_packs_rows_as_jax_defines_a_tpu_ref_bitcast(source: str, target: str):
    import jax.numpy as jnp
    from jax._src.state.utils import bitcast as jax_bitcast

    rng = np.random.default_rng(0)
    array = np.asarray(jnp.asarray(rng.integers(-100, 100, (16, 128)), jnp.dtype(source)))
    ours = bitcast(array, jnp.dtype(target))
    theirs = np.asarray(jax_bitcast(jnp.asarray(array), jnp.dtype(target)))
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    assert np.array_equal(ours.view(np.uint8), theirs.view(np.uint8))
    assert np.array_equal(bitcast(ours, array.dtype).view(np.uint8), array.view(np.uint8))


def test_a_write_through_a_reshaped_view_changes_only_that_part():
    import jax
    from jax._src.state import indexing, types

    array = np.arange(16 * 4, dtype=np.float32).reshape(16, 4)
    # As the host functions see it: indices as ints.
    view = jax.tree.map(
        int, (types.ReshapeTransform((2, 8, 4)), indexing.NDIndexer.from_indices_shape((1,), (2, 8, 4)))
    )
    assert np.array_equal(viewed(array, view), array[8:])
    new = updated(array, view, np.zeros((8, 4), np.float32))
    assert np.array_equal(new[:8], array[:8]) and not new[8:].any()
    assert array[8:].all()  # the original is left alone
