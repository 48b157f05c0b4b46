"""A sweep through real child processes: one job judges every config (check, lowering, VMEM, model).

Tiny on purpose (the machine is shared): a few configs, correctness sizes of a few grid steps. Of the
entries swept at their TPU size, the everyday suite sweeps a `pallas_call` one and a `pl.kernel` one;
the others take the same path and run with `--long` (`tests.matrices`; CI passes it).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

from sandbox.backends import default_backend_name
from sandbox.catalog.entries import load_catalog
from sandbox.harness.model.runs import estimate_xla
from sandbox.harness.target import Target
from sandbox.jobs import sweeps
from sandbox.jobs.build import make_sweep_job
from sandbox.protocol import InterpretOptions, RunStatus
from tests.matrices import split
from tests.sandbox.conftest import run_job

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
CATALOG = load_catalog()

# A scratch file for `tune`: make_inputs(seed, **size) (its defaults are the check size),
# kernel(*inputs, **params), a reference; the one tunable is the row block.
SCRATCH = """
import functools
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

def make_inputs(seed, m=256, n=128):
    return (jax.random.normal(jax.random.key(seed), (m, n), jnp.float32),)

def reference(x):
    return x * 2.0

def double_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2.0

@functools.partial(jax.jit, static_argnames=["block"])
def kernel(x, *, block=128):
    if x.shape[0] % block:
        raise ValueError(f"rows must divide into blocks: {x.shape=} {block=}")
    return pl.pallas_call(
        double_kernel,
        grid=(x.shape[0] // block,),
        in_specs=[pl.BlockSpec((block, x.shape[1]), lambda i: (i, 0))],
        out_specs=pl.BlockSpec((block, x.shape[1]), lambda i: (i, 0)),
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
    )(x)
"""


def test_catalog_sweep_classifies_each_config_in_one_job():
    entry = CATALOG.get("tiled_matmul_pallas_call")
    assert entry is not None
    spec = sweeps.make_spec(
        entry, params={"bm": [128], "bk": [64, 256], "bn": [128]}, size={"m": 1024, "k": 1024, "n": 1024}
    )
    result = run_job(make_sweep_job(entry.solution_source, spec, entry=entry, chip="v5e"))
    assert result.status is RunStatus.PASSED, result.summary
    assert result.sweep is not None
    rejected, ok = result.sweep.configs
    assert rejected.status == "rejected" and "divisible by 8 and 128" in rejected.reason
    assert rejected.correct is None  # ruled out before the (costly) simulator check
    assert ok.status == "ok" and ok.correct is True and ok.check_size == {"m": 256, "k": 256, "n": 256}
    assert ok.lowering[0].chip == "v5e" and ok.lowering[0].lowers is True
    assert ok.estimate is not None and ok.estimated_seconds == ok.estimate.seconds > 0
    assert ok.steps == 8 * 4 * 8  # a (8, 8, 4) grid at 1024^3
    assert result.sweep.best == ok.index
    assert {"trace", "model", "lower", "check"} <= set(ok.host_seconds)


def test_tune_cli_json_for_a_scratch_file(tmp_path):
    path = tmp_path / "double.py"
    path.write_text(SCRATCH)
    command = [
        sys.executable, "-m", "sandbox", "tune", str(path), "--chip", "v5e", "--size", "m=8192,n=1024",
        "--param", "block=128,100,8192", "--bind", "block=m", "--json",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)
    out = json.loads(done.stdout)
    rows = {c["params"]["block"]: c for c in out["configs"]}
    assert set(rows) == {128, 100, 8192}
    for row in rows.values():
        assert {"params", "status", "estimated_seconds", "bound", "vmem_bytes", "lowering"} <= set(row)
    assert rows[128]["status"] == "ok" and rows[128]["correct"] is True
    assert rows[100]["status"] == "error"  # 8192 rows do not divide into blocks of 100
    # One 8192 x 1024 f32 block in and out: 64 MiB, within a v5e's 128 MiB; the check grows m to 8192.
    assert rows[8192]["vmem_bytes"] == 2 * 8192 * 1024 * 4 and rows[8192]["check_size"] == {
        "m": 8192,
        "n": 128,
    }
    assert out["best"] in (c["index"] for c in out["configs"] if c["status"] == "ok")
    assert done.returncode == 0 and out["status"] == "passed"


REVISITED = """
import functools
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

def make_inputs(seed, m=256, n=128):
    # One (8, n) block, and a (m, 0) array that holds no bytes: only its shape sets the grid.
    return jax.random.normal(jax.random.key(seed), (8, n), jnp.float32), jnp.zeros((m, 0), jnp.float32)

def reference(x, steps):
    return x * 2.0

def double_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2.0

@functools.partial(jax.jit, static_argnames=["block"])
def kernel(x, steps, *, block=8):
    spec = pl.BlockSpec(x.shape, lambda i: (0, 0))
    return pl.pallas_call(
        double_kernel, grid=(steps.shape[0] // block,), in_specs=[spec], out_specs=spec,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
    )(x)
"""


def tune_cli(tmp_path, source: str, *arguments: str) -> tuple[dict, subprocess.CompletedProcess]:  # type: ignore[type-arg]
    """`python -m sandbox tune` of a scratch file for a v5e, `--json`: its answer and the process."""
    path = tmp_path / "scratch.py"
    path.write_text(source)
    command = [sys.executable, "-m", "sandbox", "tune", str(path), "--chip", "v5e", *arguments, "--json"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)
    return json.loads(done.stdout), done


def test_tune_cli_a_correct_config_without_an_estimate_is_not_ok(tmp_path):
    # 2^23 grid steps over one block at the target size: past what the model walks (a ModelLimitError),
    # though the config is correct at its check size and the chip's compiler accepts it (a few KiB of
    # HBM: the same grid over distinct blocks would not fit a v5e's, and the compiler says so).
    out, done = tune_cli(
        tmp_path, REVISITED, "--size", f"m={8 << 23},n=128", "--param", "block=8", "--bind", "block=m"
    )
    (row,) = out["configs"]
    assert row["status"] == "unestimated" and row["correct"] is True, row["reason"]
    assert row["estimated_seconds"] is None and "no estimate: " in row["reason"]
    assert out["best"] is None and out["status"] == "error" and done.returncode == 1
    assert "1 unestimated; no correct config has an estimate to rank it by" in out["summary"]


def test_tune_cli_a_config_over_the_chips_hbm_is_rejected_by_its_compiler(tmp_path):
    """2^23 blocks of 8 rows: 32 GiB in and 32 GiB out, more than a v5e's 15.75 GiB of HBM. libtpu,
    compiling for the chip on this host without one, refuses it (E1000), as the chip would."""
    out, _ = tune_cli(
        tmp_path, SCRATCH, "--size", f"m={8 << 23},n=128", "--param", "block=8", "--bind", "block=m"
    )
    (row,) = out["configs"]
    assert row["status"] == "rejected", row["reason"]
    assert "E1000: CompileTimeHbmOom: Ran out of memory on HBM" in row["reason"], row["reason"]


PARTLY_READ_SCRATCH = """
import functools
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

def make_inputs(seed, m=256, n=8192):
    return (jax.random.normal(jax.random.key(seed), (m, n), jnp.float32),)

def reference(x):
    return x * 2.0

def _body(x_ref, o_ref, big_ref):
    big_ref[0:8, 0:128] = x_ref[0:8, 0:128]
    o_ref[...] = x_ref[...] * 2.0 + (big_ref[0:8, 0:128] - x_ref[0:8, 0:128]).sum()

@functools.partial(jax.jit, static_argnames=("br",))
def kernel(x, *, br=64):
    spec = pl.BlockSpec((br, x.shape[1]), lambda i: (i, 0))
    return pl.pallas_call(_body, grid=(x.shape[0] // br,), in_specs=[spec], out_specs=spec,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        scratch_shapes=[pltpu.VMEM((512, 8192), jnp.float32)])(x)
"""


def test_tune_takes_the_chips_compiler_over_the_count_for_vmem(tmp_path):
    """A 16 MiB scratch the body touches one vreg of: the count (24 MiB with br=64's blocks) says
    `over_vmem`, but libtpu compiles it for a v5e, so the config is `ok`; at br=256 the compiler refuses
    it itself, and the row says its figures (32 MiB: the untouched scratch is not allocated)."""
    out, _ = tune_cli(
        tmp_path, PARTLY_READ_SCRATCH, "--size", "m=1024,n=8192", "--param", "br=64,256", "--bind", "br=m"
    )
    rows = {c["params"]["br"]: c for c in out["configs"]}
    assert rows[64]["status"] == "ok" and rows[64]["vmem_bytes"] > 16 << 20, rows[64]["reason"]
    assert rows[64]["lowering"][0]["compiled"] is True
    assert rows[256]["status"] == "over_vmem" and rows[256]["lowering"][0]["compiled"] is False
    assert rows[256]["reason"].startswith(
        "the TPU compiler refused the kernel (E1001): it needs 32.00 MiB of scoped VMEM, over the limit of "
        "16.00 MiB by 16.00 MiB"
    ), rows[256]["reason"]


def test_a_scratch_files_xla_baseline_is_what_each_config_is_shown_against():
    # The reference is written for accuracy; `xla_baseline` is what a user would call instead (here a
    # dot, so its estimate cannot be the element-wise reference's). Off the chip nothing is measured.
    source = SCRATCH + "\n\ndef xla_baseline(x):\n    return jnp.dot(x, x.T)\n"
    spec = sweeps.make_spec(None, params={"block": [512]}, size={"m": 4096, "n": 1024}, bind={"block": "m"})
    result = run_job(make_sweep_job(source, spec, entry=None, chip="v5e"))
    assert result.sweep is not None, result.summary
    (row,) = result.sweep.configs
    assert row.status == "ok" and row.estimate is not None, row.reason
    target = Target(chip="v5e", interpret=True, options=InterpretOptions())
    x = jax.ShapeDtypeStruct((4096, 1024), jnp.float32)
    dot = estimate_xla(lambda x: jnp.dot(x, x.T), (x,), target)
    assert dot is not None and row.estimate.xla_seconds == pytest.approx(dot, rel=1e-6)
    assert row.estimate.xla_seconds != estimate_xla(lambda x: x * 2.0, (x,), target)
    assert row.xla_measured_seconds is None and "XLA's own op estimated at" in sweeps.describe(row)


# A grouped matmul whose grid is the number of row tiles its groups need (megablox style).
GROUPED = """
import functools
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

def make_inputs(seed, m=512, k=128, n=128, groups=2):
    kx, kw = jax.random.split(jax.random.key(seed))
    sizes = jnp.full((groups,), m // groups, jnp.int32)
    return (jax.random.normal(kx, (m, k), jnp.float32), jax.random.normal(kw, (groups, k, n), jnp.float32), sizes)

def reference(x, w, sizes):
    group = jnp.repeat(jnp.arange(w.shape[0]), sizes, total_repeat_length=x.shape[0])
    return jnp.einsum("mk,mkn->mn", x, w[group])

def _kernel(tile_group_ref, x_ref, w_ref, o_ref):
    o_ref[...] = jnp.dot(x_ref[...], w_ref[...], preferred_element_type=jnp.float32)

@functools.partial(jax.jit, static_argnames=["bm"])
def kernel(x, w, sizes, *, bm=128):
    tiles = (sizes + bm - 1) // bm
    table = jnp.repeat(jnp.arange(w.shape[0], dtype=jnp.int32), tiles, total_repeat_length=x.shape[0] // bm)
    spec = pltpu.PrefetchScalarGridSpec(
        num_scalar_prefetch=1,
        grid=(jnp.sum(tiles),),
        in_specs=[pl.BlockSpec((bm, x.shape[1]), lambda t, g: (t, 0)),
                  pl.BlockSpec((None, x.shape[1], w.shape[2]), lambda t, g: (g[t], 0, 0))],
        out_specs=pl.BlockSpec((bm, w.shape[2]), lambda t, g: (t, 0)),
    )
    out = jax.ShapeDtypeStruct((x.shape[0], w.shape[2]), x.dtype)
    return pl.pallas_call(_kernel, grid_spec=spec, out_shape=out)(table, x, w)
"""


HARDENED = pytest.param(
    "hardened",
    marks=pytest.mark.skipif(
        default_backend_name() != "hardened", reason="the hardened backend cannot run here"
    ),
)


@pytest.mark.parametrize("backend", ["local", HARDENED])
def test_tune_cli_estimates_a_grid_sized_by_the_group_sizes(tmp_path, backend):
    path = tmp_path / "grouped.py"
    path.write_text(GROUPED)
    command = [
        sys.executable, "-m", "sandbox", "tune", str(path), "--chip", "v6e", "--backend", backend,
        "--size", "m=4096,k=512,n=512,groups=8", "--param", "bm=128,256", "--json",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=300)
    out = json.loads(done.stdout)
    rows = {c["params"]["bm"]: c for c in out["configs"]}
    for bm, row in rows.items():
        assert row["status"] == "ok" and row["correct"] is True, row["reason"]
        assert row["steps"] == 4096 // bm  # the grid: 8 groups of 512 rows in bm-row tiles
        assert row["estimated_seconds"] > 0
    assert done.returncode == 0 and out["status"] == "passed"


def test_tune_cli_sweeps_block_sparse_at_a_tpu_size_from_numpy_built_tables():
    # make_inputs builds the index tables with numpy from a random mask: it cannot be traced, so it
    # runs on the CPU at the target size; the model costs the kernel from the real tables.
    command = [
        sys.executable, "-m", "sandbox", "tune", "kernels_catalog/block_sparse_matmul/kernel.py",
        "--entry", "block_sparse_matmul", "--chip", "v5e", "--mode", "interpret", "--json",
        "--size", "m=8192,k=8192,n=2048,block=128,density_pct=10", "--param", "bn=128,256",
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=400)
    out = json.loads(done.stdout)
    rows = {c["params"]["bn"]: c for c in out["configs"]}
    assert set(rows) == {128, 256}, out["summary"]
    for bn, row in rows.items():
        assert row["status"] == "ok" and row["correct"] is True, row["reason"]
        assert row["estimated_seconds"] > 0
        assert row["steps"] == 2048 // bn * 456  # seed 2 leaves 456 of the 64 x 64 tiles non-zero
    assert done.returncode == 0 and out["status"] == "passed"


TPU_SIZED = [e for e in CATALOG.entries if e.tune is not None and any(c.tpu_only for c in e.cases)]
TPU_SIZED_ROWS = split(TPU_SIZED, ("tiled_matmul_pallas_call", "race_condition_demo"), id=lambda e: e.slug)


@pytest.mark.parametrize("entry", TPU_SIZED_ROWS)
def test_every_tpu_sized_entry_sweeps_at_its_tpu_size(entry):
    # Two configs of the entry's [tune] table at its TPU case's size, in interpret mode: each one
    # is traced and estimated there, and checked at the small check size.
    first, *rest = entry.tune.values
    params = {first: entry.tune.values[first][:2], **{p: entry.tune.values[p][:1] for p in rest}}
    spec = sweeps.make_spec(entry, params=params)
    job = make_sweep_job(entry.solution_source, spec, entry=entry, chip=entry.chips[0], mode="interpret")
    result = run_job(job)
    assert result.status is RunStatus.PASSED, result.summary
    assert result.sweep is not None and spec.size == next(c for c in entry.cases if c.tpu_only).dims
    for config in result.sweep.configs:
        assert config.status == "ok" and config.correct is True, config.reason
        assert config.estimated_seconds is not None and config.estimated_seconds > 0
