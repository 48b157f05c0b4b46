"""Shared by the tests that run kernels on every installed JAX runtime (marker `runtimes`)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from sandbox.host.runtimes import RuntimeSet, discover
from sandbox.protocol import Job, RunResult
from tests.backends import suite_backend
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
    """Every job (each names its runtime) through the session's backend (`tests.backends`: one warm
    pool per runtime where the hardened sandbox works, as deployed), two at a time."""
    from concurrent.futures import ThreadPoolExecutor

    backend = suite_backend()
    assert set(backend.runtimes.names) >= set(runtimes.names), "the session's backend lacks a runtime"
    with ThreadPoolExecutor(max_workers=SLOTS) as pool:
        return list(pool.map(lambda job: run_job_on(backend, job), jobs))
