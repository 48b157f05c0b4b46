"""Kernels rebuilt (written afresh, small shapes) from the TPU tests in JAX's `tests/pallas/tpu_*.py`.

Each row names the JAX tests it follows (one job may rebuild several tests of one family, to keep the
suite's wall time down), and what a user gets through the playground: `passed` (the simulator runs it
and the TPU compiler accepts it), or `unsupported` with the simulator's honest message (a limit of the
simulator, never the kernel's `error`). Rows kept as files are in `conformance/`
(`conformance_files.py`); the rows of #25's table are in `simulated/`. The README's figure counts the
JAX tests covered (`tests/sandbox/test_jax_conformance.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sandbox.protocol import Chip, RunStatus

HEAD = """
import functools
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (16, 128), jnp.float32),)
"""


@dataclass(frozen=True)
class Conformance:
    name: str
    jax_test: str  # file::test of jax-ml/jax's tests/pallas this kernel follows
    body: str = ""  # the kernel after HEAD; empty: the file `conformance/<name>.py`
    status: RunStatus = RunStatus.PASSED
    headline: str = "passed: "
    chip: Chip = "v5p"
    also: tuple[str, ...] = ()  # further tests of the same file this job rebuilds

    @property
    def source(self) -> str:
        if not self.body:
            return (Path(__file__).parent / "conformance" / f"{self.name}.py").read_text()
        return HEAD + self.body

    @property
    def jax_tests(self) -> tuple[str, ...]:
        test_file = self.jax_test.split("::")[0]
        return (self.jax_test, *(f"{test_file}::{name}" for name in self.also))


ROWS = (
    Conformance(
        "scalar_prefetch",
        "tpu_pallas_test.py::test_trivial_scalar_prefetch",
        """
def reference(x):
    return x[8:16]

def copy_kernel(start_ref, x_ref, o_ref):
    o_ref[...] = x_ref[...]

def kernel(x):
    start = jnp.array([1], jnp.int32)
    spec = pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=1, grid=(1,),
        in_specs=[pl.BlockSpec((8, 128), lambda i, s: (s[0], 0))],
        out_specs=pl.BlockSpec((8, 128), lambda i, s: (0, 0)))
    return pl.pallas_call(copy_kernel, out_shape=jax.ShapeDtypeStruct((8, 128), x.dtype), grid_spec=spec)(start, x)
""",
    ),
    Conformance(
        "f32_scalar_prefetch",
        "tpu_pallas_test.py::test_f32_scalar_prefetch",
        """
def reference(x):
    return x * 2.5

def scale_kernel(s_ref, x_ref, o_ref):
    o_ref[...] = x_ref[...] * s_ref[0]

def kernel(x):
    spec = pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=1, grid=(2,),
        in_specs=[pl.BlockSpec((8, 128), lambda i, s: (i, 0))],
        out_specs=pl.BlockSpec((8, 128), lambda i, s: (i, 0)))
    return pl.pallas_call(scale_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                          grid_spec=spec)(jnp.array([2.5], jnp.float32), x)
""",
    ),
    Conformance(
        "num_programs",
        "tpu_pallas_test.py::test_num_programs",
        """
def reference(x):
    return jnp.full((2, 8, 128), 6.0)

def count_kernel(o_ref):
    o_ref[...] = jnp.full(o_ref.shape, pl.num_programs(0) * pl.num_programs(1), jnp.float32)

def kernel(x):
    return pl.pallas_call(count_kernel, out_shape=jax.ShapeDtypeStruct((2, 8, 128), jnp.float32), grid=(2, 3),
        out_specs=pl.BlockSpec((None, 8, 128), lambda i, j: (i, 0, 0)))()
""",
    ),
    Conformance(
        "dynamic_grid",
        "tpu_pallas_test.py::test_dynamic_grid",
        """
def reference(x):
    return jnp.full((8, 128), 2.0)

def steps_kernel(o_ref):
    @pl.when(pl.program_id(0) == 0)
    def _():
        o_ref[...] = jnp.zeros_like(o_ref)
    o_ref[...] += 1.0

def kernel(x):
    steps = jnp.int32(x.shape[0] // 8)
    return pl.pallas_call(steps_kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32), grid=(steps,),
        out_specs=pl.BlockSpec((8, 128), lambda i: (0, 0)))()
""",
    ),
    Conformance(
        "run_scoped_vmem",
        "tpu_pallas_test.py::test_scoped_allocation",
        """
def reference(x):
    return x + 1.0

def scoped_kernel(x_ref, o_ref):
    def body(tmp):
        tmp[...] = x_ref[...] + 1.0
        o_ref[...] = tmp[...]
    pl.run_scoped(body, pltpu.VMEM(x_ref.shape, jnp.float32))

def kernel(x):
    return pl.pallas_call(scoped_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
""",
    ),
    Conformance(
        "run_scoped_returns",
        "tpu_pallas_test.py::test_run_scoped_can_return_scalar_value",
        """
def reference(x):
    return jnp.full((8, 128), 7.0)

def returns_kernel(o_ref):
    def body(tmp):
        tmp[0] = 7.0
        return tmp[0]
    o_ref[...] = jnp.full(o_ref.shape, pl.run_scoped(body, pltpu.SMEM((1,), jnp.float32)))

def kernel(x):
    return pl.pallas_call(returns_kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32))()
""",
    ),
    Conformance(
        "hbm_hbm_dma",
        "tpu_pallas_test.py::test_hbm_hbm_dma",
        """
def reference(x):
    return x

def copy_kernel(x_hbm, o_hbm, sem):
    pltpu.async_copy(x_hbm, o_hbm, sem).wait()

def kernel(x):
    anywhere = pl.BlockSpec(memory_space=pl.ANY)
    return pl.pallas_call(copy_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), in_specs=[anywhere],
        out_specs=anywhere, scratch_shapes=[pltpu.SemaphoreType.DMA])(x)
""",
    ),
    Conformance(
        "hbm_vmem_dma_slicing",
        "tpu_pallas_test.py::test_hbm_vmem_dma_slicing",
        """
def reference(x):
    return x[8:16] * 2

def half_kernel(x_hbm, o_ref, buf, sem):
    pltpu.async_copy(x_hbm.at[pl.ds(8, 8)], buf, sem).wait()
    o_ref[...] = buf[...] * 2

def kernel(x):
    return pl.pallas_call(half_kernel, out_shape=jax.ShapeDtypeStruct((8, 128), x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        scratch_shapes=[pltpu.VMEM((8, 128), x.dtype), pltpu.SemaphoreType.DMA])(x)
""",
    ),
    Conformance(
        "hbm_smem_dma",
        "tpu_pallas_test.py::test_hbm_smem_dma",
        """
def reference(x):
    return jnp.full((8, 128), x[0, 0] + x[0, 1])

def pair_kernel(x_hbm, o_ref, row, sem):
    pltpu.async_copy(x_hbm.at[0], row, sem).wait()
    o_ref[...] = jnp.full(o_ref.shape, row[0] + row[1])

def kernel(x):
    return pl.pallas_call(pair_kernel, out_shape=jax.ShapeDtypeStruct((8, 128), x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        scratch_shapes=[pltpu.SMEM((128,), x.dtype), pltpu.SemaphoreType.DMA])(x)
""",
    ),
    Conformance(
        "semaphore_array_dynamic_index",
        "tpu_pallas_test.py::test_can_wait_on_semaphore_array_with_dynamic_index",
        """
def reference(x):
    return x

def ring_kernel(x_hbm, o_hbm, sems):
    @pl.loop(0, 2)
    def _(i):
        pltpu.async_copy(x_hbm.at[pl.ds(8 * i, 8)], o_hbm.at[pl.ds(8 * i, 8)], sems.at[i]).wait()

def kernel(x):
    anywhere = pl.BlockSpec(memory_space=pl.ANY)
    return pl.pallas_call(ring_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), in_specs=[anywhere],
        out_specs=anywhere, scratch_shapes=[pltpu.SemaphoreType.DMA((2,))])(x)
""",
    ),
    Conformance(
        "read_dma_semaphore",
        "tpu_pallas_test.py::test_can_read_dma_semaphore",
        """
def reference(x):
    return x[:8]

def bytes_kernel(x_hbm, o_ref, buf, sem):
    copy = pltpu.make_async_copy(x_hbm.at[pl.ds(0, 8)], buf, sem)
    copy.start()
    copy.wait()
    left = pl.semaphore_read(sem)  # the wait took the copy's bytes: 0 on a TPU too
    o_ref[...] = buf[...] + left.astype(jnp.float32)

def kernel(x):
    return pl.pallas_call(bytes_kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        scratch_shapes=[pltpu.VMEM((8, 128), x.dtype), pltpu.SemaphoreType.DMA])(x)
""",
    ),
    Conformance(
        "masked_store",
        "tpu_pallas_test.py::test_masked_store",
        """
def reference(x):
    return jnp.where(jnp.arange(128)[None, :] < 64, x, 0.0)

def masked_kernel(x_ref, o_ref):
    o_ref[...] = jnp.zeros_like(o_ref)
    mask = jax.lax.broadcasted_iota(jnp.int32, x_ref.shape, 1) < 64
    pltpu.store(o_ref, x_ref[...], mask=mask)

def kernel(x):
    return pl.pallas_call(masked_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
""",
    ),
    Conformance(
        "roll",
        "tpu_pallas_test.py::test_roll_with_major_dim_shift",
        """
def reference(x):
    return jnp.roll(x, 3, axis=1)

def roll_kernel(x_ref, o_ref):
    o_ref[...] = pltpu.roll(x_ref[...], 3, 1)

def kernel(x):
    return pl.pallas_call(roll_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
""",
    ),
    Conformance(
        "fori_loop_with_program_id",
        "tpu_pallas_test.py::test_fori_loop_unroll_with_program_id",
        """
def reference(x):
    return x + jnp.repeat(jnp.arange(2.0), 8)[:, None] * 4

def loop_kernel(x_ref, o_ref):
    def step(k, acc):
        return acc + pl.program_id(0).astype(jnp.float32)
    o_ref[...] = x_ref[...] + jax.lax.fori_loop(0, 4, step, jnp.float32(0), unroll=2)

def kernel(x):
    spec = pl.BlockSpec((8, 128), lambda i: (i, 0))
    return pl.pallas_call(loop_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), grid=(2,),
                          in_specs=[spec], out_specs=spec)(x)
""",
    ),
    Conformance(
        "dma_bitcasted_ref",
        "tpu_pallas_test.py::test_dma_bitcasted_ref",
        """
def reference(x):
    return jax.lax.bitcast_convert_type(x, jnp.int32)

def bits_kernel(x_hbm, o_hbm, sem):
    pltpu.async_copy(x_hbm.bitcast(jnp.int32), o_hbm, sem).wait()

def kernel(x):
    anywhere = pl.BlockSpec(memory_space=pl.ANY)
    return pl.pallas_call(bits_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, jnp.int32), in_specs=[anywhere],
        out_specs=anywhere, scratch_shapes=[pltpu.SemaphoreType.DMA])(x)
""",
    ),
    Conformance(
        "load_reshaped_ref",
        "tpu_pallas_test.py::test_load_reshaped_ref",
        """
def reference(x):
    return x.reshape(2, 8, 128)[1]

def reshaped_kernel(x_ref, o_ref):
    o_ref[...] = x_ref.reshape(2, 8, 128)[1]

def kernel(x):
    return pl.pallas_call(reshaped_kernel, out_shape=jax.ShapeDtypeStruct((8, 128), x.dtype))(x)
""",
    ),
)
