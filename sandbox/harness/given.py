"""A case's inputs given by the host (`Job.inputs`), instead of computing them again in this job.

A catalog entry's inputs depend only on its reference's `make_inputs` and the case's seed; the
reference's job made them once and the host keeps them with the expected outputs
(`sandbox.backends.references`). Making them again costs a fresh process the compiles of the
random-number ops (0.6–0.8 s of CPU for tiled_matmul's first case, measured), before the kernel's
first call. The kernel's job still reports the digest of what it was given, which the checker
compares with the reference's, as for inputs it made itself.

Inputs a native job makes itself (a TPU-size case, too large to give) are made on the host's CPU,
as the reference's job made them, then moved to the chip: random numbers drawn on a TPU need not
be the CPU's bit for bit (the normal distribution's inverse error function is computed by each
backend's own code), and the checker compares the two jobs' inputs by digest.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from sandbox.protocol import Case, Job
from sandbox.verdict import arrays


def case_inputs(
    job: Job, index: int, case: Case, make_inputs: Callable[[Case], Any], *, native: bool = False
) -> tuple[Any, ...]:
    """The case's inputs: the host's copy of the reference's, else made here (on the CPU when the
    kernel runs `native`ly). Given ones come with what `make_inputs` printed making them, printed
    here, where this job would have called it."""
    given = next((g for g in job.inputs if g.index == index), None)
    if given is None:
        return made_inputs(lambda: make_inputs(case), native=native)
    if given.printed:
        sys.stdout.write(given.printed)
        sys.stdout.flush()
    return tuple(jnp.asarray(array) for _, array in arrays.decode(given.arrays))


def made_inputs(make: Callable[[], Any], *, native: bool) -> tuple[Any, ...]:
    """`make()`'s inputs; for a `native` job made on the CPU (as the reference's job makes them) and
    then moved to the chip, so that both jobs hold the same bits."""
    if not native:
        return tuple(make())
    with jax.default_device(jax.devices("cpu")[0]):
        made = tuple(make())
    chip = jax.devices()[0]
    return tuple(jax.tree.map(lambda x: jax.device_put(x, chip) if isinstance(x, jax.Array) else x, made))
