"""The simulator gives the chip's arithmetic for f32 dots (one bf16 MXU pass at the default precision)
and the chip's verdict, checked against outputs recorded on the lent v5e (bench/tpu/v5e/corpus)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from sandbox.jobs.build import make_job
from sandbox.protocol import RunStatus
from tests.sandbox.conftest import run_job

pytestmark = pytest.mark.slow
ROOT = Path(__file__).resolve().parents[2]
CHIP = ROOT / "bench" / "tpu" / "v5e" / "corpus"
DOTS = [
    "dot_f32_default_k256",
    "dot_f32_default_k1024",
    "dot_f32_preferred_f32_default",
    "dot_f32_highest_k256",
]


def test_simulated_f32_dots_match_the_chips_outputs_and_verdicts(tmp_path):
    done = subprocess.run(
        [
            sys.executable,
            "bench/tpu/corpus/run.py",
            "--mode",
            "simulator",
            "--out",
            str(tmp_path),
            "--only",
            *DOTS,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    simulated, chip = np.load(tmp_path / "outputs.npz"), np.load(CHIP / "outputs.npz")
    for name in DOTS:
        diff = np.abs(simulated[f"{name}/0"].astype(np.float64) - chip[f"{name}/0"]).max()
        assert diff < 1e-4, f"{name}: the simulator is {diff:.2e} from the chip"
    verdicts = lambda path: {  # noqa: E731
        v["name"]: v["status"] for v in map(json.loads, path.read_text().splitlines()) if v["name"] in DOTS
    }
    assert verdicts(tmp_path / "verdicts.jsonl") == verdicts(CHIP / "verdicts.jsonl")


DOT = """
import jax, jax.numpy as jnp, numpy as np
from jax.experimental import pallas as pl

TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}

def make_inputs(seed):
    rng = np.random.default_rng(seed)
    return jnp.asarray(rng.standard_normal((128, 256)), jnp.float32), jnp.asarray(rng.standard_normal((256, 128)), jnp.float32)

def reference(x, y):
    return jnp.dot(x, y, precision=jax.lax.Precision.HIGHEST)

def kernel(x, y):
    def body(x_ref, y_ref, o_ref):
        o_ref[...] = jnp.dot(x_ref[...], y_ref[...]PRECISION)
    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct((128, 128), jnp.float32))(x, y)
"""


def test_a_default_precision_f32_dot_mismatches_as_on_a_tpu_and_says_why():
    result = run_job(make_job(DOT.replace("PRECISION", ""), chip="v5e", mode="interpret"))
    assert result.status is RunStatus.MISMATCH
    assert "mxu_precision" in result.versions.interpret_fixes
    note = result.cases[0].note
    assert "f32 dots ran as one bf16 MXU pass (the default precision), as on a real TPU" in note
    assert "precision=jax.lax.Precision.HIGHEST" in note


def test_the_same_dot_at_highest_precision_passes_without_the_hint():
    source = DOT.replace("PRECISION", ", precision=jax.lax.Precision.HIGHEST")
    result = run_job(make_job(source, chip="v5e", mode="interpret"))
    assert result.status is RunStatus.PASSED, result.summary
    assert "bf16 MXU pass" not in result.cases[0].note


TANH = """
import jax, jax.numpy as jnp, numpy as np
from jax.experimental import pallas as pl

TOLERANCE = {"rtol": 1e-5, "atol": 1e-6}

def make_inputs(seed):
    return (jnp.asarray(np.random.default_rng(seed).standard_normal((8, 128)), jnp.float32),)

def reference(x):
    return jnp.tanh(x)

def kernel(x):
    def body(x_ref, o_ref):
        o_ref[...] = jnp.tanh(x_ref[...])
    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
"""


def test_a_check_tighter_than_the_chips_tanh_passes_simulated_and_says_the_chip_may_not():
    result = run_job(make_job(TANH, chip="v5e", mode="interpret"))
    assert result.status is RunStatus.PASSED, result.summary
    assert "a TPU v5e (measured) gives tanh within 8.2e-05 relative of exact" in result.cases[0].note
