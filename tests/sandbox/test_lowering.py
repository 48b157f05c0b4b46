"""The TPU lowering check through real child processes: what lowers, what the TPU compiler rejects."""

import re

import pytest

from sandbox.catalog.entries import load_catalog
from sandbox.jobs.build import make_job
from sandbox.protocol import CHIPS, RunResult, RunStatus
from tests.sandbox.conftest import line_of, run_job

pytestmark = pytest.mark.slow
CATALOG = load_catalog()

# Runs and matches in interpret mode; Mosaic rejects the mixed block dims.
MIXED_ELEMENT = """
import jax
from jax.experimental import pallas as pl

def double_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2.0

def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (256, 128)),)

def reference(x):
    return x * 2.0

def kernel(x):
    return pl.pallas_call(
        double_kernel,
        grid=(2,),
        in_specs=[pl.BlockSpec((pl.Element(128), 128), lambda i: (i * 128, 0))],
        out_specs=pl.BlockSpec((128, 128), lambda i: (i, 0)),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
    )(x)
"""

TWO_CORES = """
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (16, 128)),)

def reference(x):
    return x

def kernel(x):
    def body(x_hbm, o_hbm):
        c = jax.lax.axis_index("core")
        pltpu.sync_copy(x_hbm.at[pl.ds(c * 8, 8)], o_hbm.at[pl.ds(c * 8, 8)])

    mesh = pltpu.TensorCoreMesh(axis_name="core", num_cores=2)
    return pl.kernel(body, out_type=jax.ShapeDtypeStruct(x.shape, x.dtype), mesh=mesh)(x)
"""

# 72 MiB of f32 scratch: more than the 64 MiB of VMEM of a v5p TensorCore.
BIG_SCRATCH = """
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

def add_one_kernel(x_ref, o_ref, big_ref):
    big_ref[0:8, 0:128] = x_ref[...] + 1.0
    o_ref[...] = big_ref[0:8, 0:128]

def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (8, 128)),)

def reference(x):
    return x + 1.0

def kernel(x):
    return pl.pallas_call(
        add_one_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        scratch_shapes=[pltpu.VMEM((2304, 8192), jnp.float32)],
    )(x)
"""


def run(source: str, chip: str, entry: str | None = None, lower_chips=()) -> RunResult:
    job = make_job(
        source,
        entry=CATALOG.get(entry) if entry else None,
        chip=chip,
        lower_chips=lower_chips,
        timing_budget_seconds=0.1,
    )
    return run_job(job)


def test_tiled_matmul_lowers_for_every_chip_with_its_ir():
    source = CATALOG.get("tiled_matmul").solution_source
    result = run(source, "v5e", "tiled_matmul", lower_chips=CHIPS)
    assert result.status == RunStatus.PASSED, result.summary
    # Nothing appended to the verdict: no lowering failure, no chip warning.
    assert re.fullmatch(
        r"passed: 3/3 cases match the reference \(max abs error [0-9.e-]+\)", result.summary
    ), result.summary
    assert [r.chip for r in result.lowerings] == list(CHIPS)
    assert result.lowering == result.lowerings[0]
    dot_line = line_of(source, "jnp.dot(")
    for report in result.lowerings:
        assert report.lowers is True and report.error is None and report.kernels == 1, report
        assert report.warnings == ()
        assert "dot_general" in report.jaxpr.text
        assert "tpu.matmul" in report.mosaic.text and "memref<128x128xf32" in report.mosaic.text
        assert "stablehlo.custom_call @tpu_custom_call" in report.stablehlo.text
        assert "loc(" not in report.mosaic.text
        # The UI's line map: Mosaic ops of the accumulate step point at the `jnp.dot` line.
        mapped = {src for _, src in report.mosaic.source_lines}
        assert dot_line in mapped
        assert {src for _, src in report.stablehlo.source_lines} == {line_of(source, "return pl.kernel(")}


def test_mixed_element_block_passes_the_simulator_but_not_the_tpu_compiler():
    result = run(MIXED_ELEMENT, "v5e")
    assert result.status == RunStatus.REJECTED, result.summary
    assert result.summary.startswith("rejected by the TPU compiler for v5e: NotImplementedError: All block")
    assert result.summary.endswith("(1/1 cases), but this kernel would not compile for a TPU")
    report = result.lowering
    assert report.chip == "v5e" and report.lowers is False
    assert report.error.type == "NotImplementedError"
    assert report.error.message == "All block dimensions must be Elements or none of them can be Elements."
    assert report.error.line == line_of(MIXED_ELEMENT, "return pl.pallas_call(")
    assert report.error.phase == "TPU lowering"
    # It got as far as the jaxpr, traced with a kernel rebuilt with interpret mode off.
    assert "interpret=False" in report.jaxpr.text and report.mosaic is None


def test_two_core_mesh_on_v5e_is_refused_and_a_warning():
    result = run(TWO_CORES, "v5e")
    # The simulator would run two cores on a one-core chip; the harness refuses, like the chip would.
    assert result.status == RunStatus.ERROR, result.summary
    assert result.error.message.startswith(
        "pltpu.TensorCoreMesh(num_cores=2) asks for 2 TensorCores, but a TPU v5e device has 1"
    )
    # JAX 0.12.0.1 lowers it (iteration bounds 2) without complaint: the warning is ours.
    assert result.lowering.lowers is True
    assert "iteration_bounds = array<i64: 2>" in result.lowering.mosaic.text
    assert result.chip_warnings == (
        "kernel 'body': TensorCoreMesh has num_cores=2, but a TPU v5e device has 1 TensorCore (the TPU lowering "
        "does not check this)",
    )
    assert result.summary.endswith("; 1 chip-check warning for v5e")


def test_a_tpu7x_device_is_one_tensorcore():
    """JAX's tpu_info: a TPU7x chip's two TensorCores are two JAX devices, so a device has one."""
    result = run(TWO_CORES, "tpu7x")
    assert result.status == RunStatus.ERROR, result.summary
    assert result.error.message.startswith(
        "pltpu.TensorCoreMesh(num_cores=2) asks for 2 TensorCores, but a TPU7x device has 1 (its chip's 2 "
        "TensorCores are 2 JAX devices)"
    ), result.error.message
    assert result.chip_warnings[0].startswith(
        "kernel 'body': TensorCoreMesh has num_cores=2, but a TPU7x device"
    )


BIG_BLOCKS = """
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (1024, 8192), jnp.float32),)

def reference(x):
    return x * 2.0

def _body(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2.0

def kernel(x):
    spec = pl.BlockSpec((512, 8192), lambda i: (i, 0))
    return pl.pallas_call(_body, grid=(2,), in_specs=[spec], out_specs=spec,
                          out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
"""


def test_vmem_over_the_default_scoped_limit_is_refused_by_the_chips_own_compiler_unless_raised():
    """Two 16 MiB blocks, each double-buffered: 64 MiB fits a v5e's 128 MiB of VMEM, but not the 16 MiB a
    kernel gets by default. libtpu, compiling for a v5e on this host without one, refuses it (E1001)
    exactly as the chip does (bench/tpu/v5e/vmem-offline.jsonl: 144 of 144 verdicts the chip's), so the
    simulated run is `rejected` with the compiler's own figures, though its outputs match."""
    result = run(BIG_BLOCKS, "v5e")
    assert result.status == RunStatus.REJECTED, result.summary
    check = result.lowering
    assert check.lowers is False and check.compiled is False and check.error.type == "VmemLimitExceeded"
    assert check.compiler.startswith("libtpu 0.0.50.1, for a TPU v5e, off the chip (")
    assert (
        "the TPU compiler refused the kernel (E1001): it needs 64.00 MiB of scoped VMEM, over the limit of "
        "16.00 MiB by 48.00 MiB" in result.summary
    ), result.summary
    assert "outputs match the reference (1/1 cases)" in result.summary
    raised = BIG_BLOCKS.replace(
        "out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))",
        "out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),\n"
        "                          compiler_params=pltpu.CompilerParams(vmem_limit_bytes=100 << 20))",
    )
    result = run(raised, "v5e")
    assert result.status == RunStatus.PASSED and result.chip_warnings == (), result.chip_warnings
    assert result.lowering.compiled is True


def test_where_the_count_says_refused_and_the_compiler_compiles_the_compiler_wins():
    """20 MiB of scratch of which the body touches one vreg: the playground's count (every scratch it
    reads, in full) is over the v5e's 16 MiB default, but libtpu compiles it. The verdict is the
    compiler's: `passed`, its prediction-warnings dropped (lowering's and the memory meter's), and a
    note that the count disagreed."""
    result = run(BIG_SCRATCH.replace("(2304, 8192)", "(640, 8192)"), "v5e")
    assert result.status == RunStatus.PASSED, result.summary
    assert result.lowering.lowers is True and result.lowering.compiled is True
    assert "the playground's VMEM count said the compiler would refuse it; the compiler did not" in (
        result.lowering.note
    )
    assert result.chip_warnings == ()
    assert not [w for w in result.memory.warnings if "scoped VMEM limit" in w], result.memory.warnings


def test_vmem_scratch_over_the_chip_is_rejected():
    result = run(BIG_SCRATCH, "v5p")
    assert result.status == RunStatus.REJECTED, result.summary
    assert result.lowering.error.type == "VmemLimitExceeded" and result.lowering.compiled is False
    assert result.lowering.error.message.startswith(
        "the TPU compiler refused the kernel: one VMEM allocation of 72.00 MiB is more than the chip's "
        "64.00 MiB of VMEM"
    ), result.lowering.error.message
    # The scratch, plus one buffer each for the input and output block (a single grid point).
    needed = 2304 * 8192 * 4 + 2 * 8 * 128 * 4
    assert result.chip_warnings == (
        f"VMEM: the kernel allocates {needed:,} bytes, more than the 67,108,864 bytes of one TPU v5p "
        "TensorCore",
    )
