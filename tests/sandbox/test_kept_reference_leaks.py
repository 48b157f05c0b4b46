"""Issue 41, item 3: a kept scratch reference is steered by nothing its key leaves out, and carries
no user's output to another.

The server keeps a scratch file's reference result by the text its reference's job can run. A
reference that read the kernel's code by a way the key did not foresee (here `pkgutil.resolve_name`
to reach `linecache`, a traceback's frame for the file) made the verdict depend on which version of
the file ran first. The reference's job is now given exactly the keyed text (the kernel's bodies
left out), so the verdict is the same in either order. And what one run's `make_inputs` printed is
never replayed to the next run of the same reference.
"""

from __future__ import annotations

import os

import pytest

from sandbox.jobs.build import make_job
from sandbox.protocol import RunStatus
from tests.backends import suite_backend
from tests.sandbox.conftest import run_job_on

pytestmark = pytest.mark.slow

# `reference` reads its own file through linecache, reached without a name the key's reader knows.
READS_ITSELF = """
import pkgutil, traceback
import numpy as np

TAG = "{tag}"

def make_inputs(seed):
    return (np.arange(8, dtype=np.float32),)

def reference(x):
    lines = pkgutil.resolve_name("linec" + "ache").getlines(traceback.extract_stack()[-1].filename)
    return x * (3 if "SCALE" + "3" in "".join(lines) else 2)

def kernel(x):
    return x * {scale}{comment}
"""


def _run(source: str):
    return run_job_on(suite_backend(), make_job(source, timing_budget_seconds=0.0, trace=False))


def _order(first: int, tag: str) -> dict[int, RunStatus]:
    files = {
        scale: READS_ITSELF.format(tag=tag, scale=scale, comment="  # SCALE3" if scale == 3 else "")
        for scale in (2, 3)
    }
    seen = {}
    for scale in (first, 5 - first):
        seen[scale] = _run(files[scale]).status
    return seen


def test_a_kept_reference_gives_the_same_verdict_whichever_file_ran_first() -> None:
    tag = os.urandom(6).hex()  # references of no earlier test run
    three_first, two_first = _order(3, tag + "a"), _order(2, tag + "b")
    assert three_first == two_first, (three_first, two_first)
    # The reference's job never sees the kernel's body, so it computes x * 2 for both files.
    assert three_first == {2: RunStatus.PASSED, 3: RunStatus.MISMATCH}


# JAX arrays: a scratch reference's job gives those to the kernel's job (numpy ones it makes again).
PRINTS = """
import os
import jax.numpy as jnp

def make_inputs(seed):
    print("token", os.urandom(8).hex(), flush=True)
    return (jnp.arange(8, dtype=jnp.float32) + {salt},)

def reference(x):
    return x * 2

def kernel(x):
    return x * 2
"""


def test_what_make_inputs_printed_is_never_replayed_to_another_run() -> None:
    source = PRINTS.format(salt=int.from_bytes(os.urandom(3)))
    first, second = _run(source), _run(source)  # the second finds the first's reference kept
    assert first.status == second.status == RunStatus.PASSED, (first.summary, second.summary)
    tokens = [next(w for w in r.stdout.split() if len(w) == 16) for r in (first, second)]
    assert tokens[0] != tokens[1], "the second run's output is the first's"
