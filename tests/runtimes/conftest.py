"""Shared by the tests that run kernels on every installed JAX runtime (marker `runtimes`)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from sandbox.backends import create_backend
from sandbox.host.runtimes import RuntimeSet, discover
from sandbox.protocol import Job, RunResult
from tests.sandbox.conftest import run_job_on

# The runtimes CI installs (runtimes/*.txt); a missing one fails the tests instead of skipping them.
EXPECTED = ("0.10.2", "0.11.2", "0.12.0.1")
SLOTS = 2  # the machine has two cores


@pytest.fixture(scope="session")
def runtimes() -> RuntimeSet:
    found = discover()
    missing = [name for name in EXPECTED if found.get(name) is None]
    if missing:
        pytest.fail(f"JAX runtimes not installed: {', '.join(missing)} (run scripts/install-runtimes)")
    return found


def run_on_runtimes(runtimes: RuntimeSet, jobs: Sequence[Job]) -> list[RunResult]:
    """Every job (each names its runtime) through one local backend of all runtimes, two at a time."""
    from concurrent.futures import ThreadPoolExecutor

    backend = create_backend("local", runtimes)
    try:
        with ThreadPoolExecutor(max_workers=SLOTS) as pool:
            return list(pool.map(lambda job: run_job_on(backend, job), jobs))
    finally:
        backend.close()
