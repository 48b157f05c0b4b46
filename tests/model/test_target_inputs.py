"""Inputs at a target size for the model: traced where `make_inputs` allows it, made for real on the
CPU where it needs concrete values (index tables built with numpy from a random mask), and in both
cases the small integer tables come back as values the model reads (scalar prefetch)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from sandbox.harness.model.estimate import known_values, target_inputs


def numpy_tables(rows: int = 64, cols: int = 64, n: int = 512):
    """Block-sparse style: a random mask taken to numpy, its non-zero tiles' indices, a dense input."""
    mask = np.array(jax.random.uniform(jax.random.key(0), (rows, cols)) < 0.1)
    mask[np.arange(rows), np.arange(rows) % cols] = True
    block_rows, block_cols = np.nonzero(mask)
    dense = jnp.ones((rows * 8, n), jnp.bfloat16)
    return jnp.asarray(block_rows, jnp.int32), jnp.asarray(block_cols, jnp.int32), dense, 3


def test_target_inputs_makes_a_numpy_built_table_for_real_and_keeps_it():
    said: list[str] = []
    rows, cols, dense, count = target_inputs(numpy_tables, said.append)
    want_rows, want_cols, _, _ = numpy_tables()
    np.testing.assert_array_equal(rows, want_rows)
    np.testing.assert_array_equal(cols, want_cols)
    assert isinstance(rows, np.ndarray) and rows.dtype == np.int32 and rows.shape[0] >= 64
    assert dense == jax.ShapeDtypeStruct((512, 512), jnp.bfloat16)  # large: its shape only
    assert int(count) == 3
    (line,) = said
    assert line.startswith("make_inputs needs concrete values (TracerArrayConversionError: ")
    assert "ran at the target size on the CPU" in line and "MiB of inputs" in line
    known = known_values([rows, cols, dense, count])
    np.testing.assert_array_equal(known[0], want_rows)
    assert known[2] is None


def test_target_inputs_traces_a_traceable_make_inputs_without_running_it():
    said: list[str] = []

    def make():
        sizes = jnp.full((4,), 8, jnp.int32)
        return jax.random.normal(jax.random.key(0), (1 << 20, 1 << 12), jnp.float32), sizes

    big, sizes = target_inputs(make, said.append)  # 16 GiB if it ran: it must not
    assert big == jax.ShapeDtypeStruct((1 << 20, 1 << 12), jnp.float32)
    np.testing.assert_array_equal(sizes, [8, 8, 8, 8])
    assert said == []


def branch_on_a_value():
    """Python control flow on a random value: the table's length depends on it."""
    draw = jax.random.uniform(jax.random.key(1), ())
    length = 8 if draw > 0.5 else 16
    return jnp.arange(length, dtype=jnp.int32), jnp.zeros((1024, 1024), jnp.float32)


def count_as_int():
    """A size taken with `int()` from a random mask."""
    mask = jax.random.uniform(jax.random.key(2), (32,)) < 0.5
    return jnp.zeros((int(mask.sum()) + 1,), jnp.int32), jnp.zeros((1024, 1024), jnp.float32)


def boolean_mask_index():
    """The non-zero positions picked by boolean-mask indexing (its length is data-dependent)."""
    mask = jax.random.uniform(jax.random.key(3), (64,)) < 0.5
    return jnp.arange(64, dtype=jnp.int32)[mask], jnp.zeros((1024, 1024), jnp.float32)


@pytest.mark.parametrize("make", [branch_on_a_value, count_as_int, boolean_mask_index])
def test_target_inputs_makes_any_value_dependent_table_for_real(make):
    said: list[str] = []
    table, big = target_inputs(make, said.append)
    np.testing.assert_array_equal(table, make()[0])
    assert big == jax.ShapeDtypeStruct((1024, 1024), jnp.float32)
    assert len(said) == 1 and "make_inputs needs concrete values" in said[0]
