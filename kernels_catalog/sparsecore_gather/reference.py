"""Reference for `sparsecore_gather`: an embedding lookup, table[ids]."""

import jax
import jax.numpy as jnp


def make_inputs(case):
    key_table, key_ids = jax.random.split(jax.random.key(case.seed))
    table = jax.random.normal(key_table, (case.rows, case.dim), jnp.float32).astype(jnp.dtype(case.dtype))
    ids = jax.random.randint(key_ids, (case.ids,), 0, case.rows, jnp.int32)
    return table, ids


def reference(table, ids):
    return jnp.take(table, ids, axis=0)
