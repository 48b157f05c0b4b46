"""addupdate_scatter into a bf16 ref: JAX allows int32 and float32 only (the kernel's mistake)."""

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc


def make_inputs(seed):
    x = jax.random.normal(jax.random.key(seed), (16,), jnp.float32)
    ids = jax.random.randint(jax.random.key(seed + 1), (16,), 0, 16, jnp.int32)
    return (x, ids)


def reference(x, ids):
    keep = jnp.arange(16) != 5
    return jnp.zeros_like(x).at[ids].add(jnp.where(keep, x[ids], 0.0))


def histogram_kernel(x_hbm, ids_hbm, o_hbm, x_vmem, ids_vmem, o_vmem):
    pltpu.sync_copy(x_hbm, x_vmem)
    pltpu.sync_copy(ids_hbm, ids_vmem)
    o_vmem[...] = jnp.zeros_like(o_vmem)
    ids = ids_vmem[...]
    picked = plsc.load_gather(x_vmem, [ids])
    plsc.addupdate_scatter(o_vmem, [ids], picked.astype(jnp.bfloat16))  # MARK
    pltpu.sync_copy(o_vmem, o_hbm)


def kernel(x, ids):
    mesh = plsc.VectorSubcoreMesh(
        core_axis_name="core", subcore_axis_name="subcore", num_cores=1, num_subcores=1
    )
    vmem = [pltpu.VMEM((16,), x.dtype), pltpu.VMEM((16,), jnp.int32), pltpu.VMEM((16,), jnp.bfloat16)]
    return pl.kernel(
        histogram_kernel,
        out_type=jax.ShapeDtypeStruct((16,), jnp.bfloat16),
        mesh=mesh,
        scratch_types=vmem,
    )(x, ids)
