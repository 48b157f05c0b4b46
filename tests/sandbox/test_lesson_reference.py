"""Issue 41, item 2 (a): a class run on a scratch step is judged by the lesson step's reference.

A student's file that brings an unrelated op and a `reference` of its own to match it passes when it
judges itself; checked against the lesson's `make_inputs` and `reference` (`Job.reference_source`,
set by the server for class runs) it is a mismatch, and a right kernel still passes.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from sandbox.jobs.build import make_job
from sandbox.protocol import RunStatus
from sandbox.results.checked_by import CHECKED_BY_LESSON
from tests.backends import suite_backend
from tests.sandbox.conftest import run_job_on

pytestmark = pytest.mark.slow

LESSON = """
import jax.numpy as jnp

def make_inputs(seed):
    return (jnp.arange(8, dtype=jnp.float32) + seed,)

def reference(x):
    return x * 2

def kernel(x):
    return x  # TODO
"""
UNRELATED = """
import jax.numpy as jnp

def make_inputs(seed):
    return (jnp.arange(8, dtype=jnp.float32) + seed,)

def reference(x):
    return x + 100

def kernel(x):
    return x + 100
"""


def _run(source: str, lesson: str | None):
    job = make_job(source, timing_budget_seconds=0.0, trace=False)
    return run_job_on(suite_backend(), replace(job, reference_source=lesson))


def test_an_unrelated_op_with_its_own_reference_fails_the_lessons_check() -> None:
    assert _run(UNRELATED, None).status == RunStatus.PASSED  # judged by itself, as outside a class
    judged = _run(UNRELATED, LESSON)
    assert judged.status == RunStatus.MISMATCH and judged.checked_by == CHECKED_BY_LESSON
    right = _run(UNRELATED.replace("x + 100", "x * 2"), LESSON)
    assert right.status == RunStatus.PASSED and right.checked_by == CHECKED_BY_LESSON
