"""JAX's ring all-gather (`ops/tpu/all_gather.py`), unmodified, on 4 simulated devices."""

import jax
from jax.experimental.pallas.ops.tpu import all_gather as ops

DEVICES = 4


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (4 * 8, 128)),)


def reference(x):
    return x


def kernel(x):
    mesh = jax.make_mesh((DEVICES,), ("x",))
    return ops.all_gather(x, mesh=mesh, axis_name="x")
