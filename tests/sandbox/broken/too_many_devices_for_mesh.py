"""The kernel builds an 8-device mesh, but the file asks for 4 simulated devices."""

import jax
import jax.numpy as jnp
from jax.sharding import PartitionSpec as P

DEVICES = 4


def make_inputs(seed):
    return (jnp.arange(8 * 128, dtype=jnp.float32).reshape(8, 128),)


def reference(x):
    return x * 2


def kernel(x):
    mesh = jax.make_mesh((8,), ("x",))  # MARK
    return jax.shard_map(lambda s: s * 2, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(x)
