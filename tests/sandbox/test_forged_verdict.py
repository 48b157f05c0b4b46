"""Issue 22: a verdict no user code can forge, and a pass that means a Pallas kernel ran.

Each kernel here tries to get `passed` with outputs that are wrong (or with no Pallas kernel): by
patching the checker's modules in its own process, by writing verdict events on the harness's
descriptor, by lying on the array channel, by stopping before the last case. The checker runs
outside the kernel's process (`sandbox.backends.checking`), so none of them may pass. They run on
the backend a server here would pick (`hardened` when this machine supports it, as CI does).
"""

from __future__ import annotations

import threading

import pytest

from sandbox.backends.execute import execute
from sandbox.backends.pairing import RunSlots
from sandbox.catalog.entries import load_catalog
from sandbox.jobs.build import make_job
from sandbox.protocol import RunStatus
from tests.backends import suite_backend
from tests.sandbox.conftest import run_job_on

pytestmark = pytest.mark.slow

CATALOG = load_catalog()
MATMUL = CATALOG.get("tiled_matmul")

# Patch every checker module this process has, and the clock: the old in-process forge.
PATCH_THE_CHECKER = """
import sys, time
for name, module in list(sys.modules.items()):
    if name.startswith("sandbox.") and hasattr(module, "compare"):
        original = module.compare
        module.compare = lambda n, got, want, tol, _o=original: _o(n, want, want, tol)
    if name.startswith("sandbox.") and hasattr(module, "judge"):
        module.judge = lambda *a, **k: None
time.perf_counter = lambda: 1e-9
"""

# The harness's own event writer, found in memory: write the verdict it would never write.
WRITE_A_VERDICT = """
import gc
WRITER = next(o for o in gc.get_objects() if type(o).__name__ == "EventWriter")
"""

ZEROS_SCRATCH = """
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl

def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (8, 128)),)

def reference(x):
    return x * 2

def zero_kernel(x_ref, o_ref):
    o_ref[...] = jnp.zeros_like(x_ref)

def kernel(x):
    return pl.pallas_call(zero_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
"""

ZEROS_MATMUL = """
import jax, jax.numpy as jnp
from jax.experimental import pallas as pl

def _zeros(x_ref, y_ref, o_ref):
    o_ref[...] = jnp.zeros_like(o_ref)

def matmul(x, y):
    shape = jax.ShapeDtypeStruct((x.shape[0], y.shape[1]), x.dtype)
    return pl.pallas_call(_zeros, out_shape=shape)(x, y)
"""

PASSED_CASE = """
from sandbox.protocol import CaseResult
WRITER.emit("case", index=0, of=1, result=CaseResult(
    name="scratch", dtype="", dims={}, input_shapes=((8, 128),), tolerance=None, passed=True,
    outputs=(), seconds=1e-9))
"""


@pytest.fixture(scope="module")
def backend():
    return suite_backend()  # the backend a server picks here (hardened as root), shared by the session


def run(backend, source: str, entry=None):
    job = make_job(source, entry=entry, timing_budget_seconds=0.0, trace=False)
    return run_job_on(backend, job)


def test_a_scratch_kernel_that_patches_the_checker_is_a_mismatch(backend) -> None:
    result = run(backend, PATCH_THE_CHECKER + ZEROS_SCRATCH)
    assert result.status == RunStatus.MISMATCH, result.summary
    assert "author's own reference" in result.checked_by


def test_a_catalog_kernel_that_patches_the_checker_is_a_mismatch(backend) -> None:
    result = run(backend, PATCH_THE_CHECKER + ZEROS_MATMUL, MATMUL)
    assert result.status == RunStatus.MISMATCH, result.summary
    assert result.cases and not any(c.passed for c in result.cases)
    assert "catalog entry's reference" in result.checked_by


def test_a_verdict_written_on_the_harness_descriptor_is_ignored(backend) -> None:
    result = run(backend, WRITE_A_VERDICT + PASSED_CASE + ZEROS_SCRATCH)
    assert result.status == RunStatus.MISMATCH, result.summary
    assert len(result.cases) == 1


def test_outputs_whose_bytes_do_not_fit_their_header_are_an_error(backend) -> None:
    lie = """
from sandbox.protocol.arrays import ArrayBytes
WRITER.emit("case_outputs", index=0, case="scratch", seconds=0.0, inputs_digest="x", kernels=1,
            outputs=(ArrayBytes(name="out", dtype="float32", shape=(8, 128), data="AAAA"),))
"""
    result = run(backend, WRITE_A_VERDICT + lie + ZEROS_SCRATCH)
    assert result.status == RunStatus.ERROR, result.summary
    assert "could not be checked" in result.summary and "bytes" in result.summary


def test_a_kernel_process_that_stops_after_one_case_gets_no_verdict(backend) -> None:
    # Right on the first case, then it says `done` itself and leaves before the second.
    stop = """
import os
_calls = []
_right = matmul
def matmul(x, y):
    _calls.append(1)
    if len(_calls) > 1:
        WRITER.emit("done", peak_rss_bytes=0)
        os._exit(0)
    return _right(x, y)
"""
    result = run(backend, MATMUL.solution_source + WRITE_A_VERDICT + stop, MATMUL)
    assert result.status == RunStatus.ERROR, result.summary
    assert "after 1 of 3 cases" in result.summary


def test_a_matmul_without_a_pallas_kernel_is_not_a_pass(backend) -> None:
    result = run(backend, "import jax.numpy as jnp\n\ndef matmul(x, y):\n    return jnp.dot(x, y)\n", MATMUL)
    assert result.status == RunStatus.NO_KERNEL, result.summary
    assert "no Pallas kernel ran" in result.summary
    assert all(c.passed and c.kernels == 0 for c in result.cases)


def test_the_catalog_solution_passes_and_counts_its_kernel(backend) -> None:
    result = run(backend, MATMUL.solution_source, MATMUL)
    assert result.status == RunStatus.PASSED, result.summary
    assert [c.kernels for c in result.cases] == [1, 1, 1]


def test_inputs_that_are_not_a_function_of_the_seed_are_named(backend) -> None:
    """Beside its reference's job (a second slot free), the kernel's job makes its own inputs: other
    ones than the reference's, and the case says why. After it, in the run's own slot, the kernel's
    job is given the reference's inputs and is judged on those."""
    random_inputs = ZEROS_SCRATCH.replace(
        "jax.random.key(seed)", "jax.random.key(__import__('os').getpid())"
    ).replace("o_ref[...] = jnp.zeros_like(x_ref)", "o_ref[...] = x_ref[...] * 2")
    job = make_job(random_inputs, timing_budget_seconds=0.0, trace=False)
    beside = execute(backend, job, threading.Event(), lambda kind, data: None, RunSlots(2)).result
    assert beside.status == RunStatus.MISMATCH, beside.summary
    assert "make_inputs must depend on its seed only" in beside.cases[0].note
    after = run(backend, random_inputs)
    assert after.status == RunStatus.PASSED, after.summary
