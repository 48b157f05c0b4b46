"""The hostile corpus on every older JAX runtime (marker `runtimes`: CI runs it), in the hardened jail.

Each runtime is its own job environment and warm pool; a layer that holds on today's JAX must hold
on the others too (the pool imports a different JAX, the harness's compat layer takes other paths).
The table, its victims and its checks are `test_hardened_hostile.py`'s; only the runtime differs.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from sandbox.backends import capability_report, create_backend, default_backend_name
from sandbox.host.runtimes import RuntimeSet, discover
from tests.sandbox.hostile_corpus import ROWS, Host, Row
from tests.sandbox.test_hardened_hostile import SLOTS, Outcome, assert_contained, listening_host, run_table

pytestmark = [
    pytest.mark.slow,
    pytest.mark.runtimes,
    pytest.mark.skipif(
        default_backend_name() != "hardened",
        reason=f"the hardened backend cannot run here: {capability_report()}",
    ),
]

INSTALLED = discover()
OLDER = [r for r in INSTALLED.runtimes if r is not INSTALLED.default]
UID_BASE = 24300  # a block of its own (leased), apart from the session backend's and the table's


class OnRuntime:
    """One runtime's backend as the table drives it: runs go through the runtime layer (which names
    the runtime in the job); the table's checks look at that runtime's pool."""

    def __init__(self, made) -> None:
        self._made, self._pool = made, made.default

    def run(self, job, on_event, cancel):
        return self._made.run(job, on_event, cancel)

    def __getattr__(self, name: str):
        return getattr(self._pool, name)


@pytest.fixture(scope="module")
def host() -> Iterator[Host]:
    with listening_host() as found:
        yield found


@pytest.fixture(scope="module", params=OLDER, ids=lambda r: r.name)
def corpus(request, host: Host) -> Iterator[dict[str, Outcome]]:
    made = create_backend("hardened", RuntimeSet((request.param,)), slots=SLOTS, uid_base=UID_BASE)
    try:
        backend = OnRuntime(made)
        assert backend.wait_ready(120) is not None, f"the pool of jax {request.param.name} did not start"
        yield run_table(backend, host)
    finally:
        made.close()


def test_more_than_one_runtime_is_installed():
    assert OLDER, INSTALLED.names


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.name)
def test_hostile_row_is_contained_on_every_runtime(corpus: dict[str, Outcome], host: Host, row: Row) -> None:
    assert_contained(corpus[row.name], host, row)
