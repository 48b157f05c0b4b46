"""The third attack round's rows (`hostile_kernel_rows.ROWS`) in the hardened jail, each beside a victim.

The table, its victim and its post-conditions are `test_hardened_hostile.py`'s: the row's status and
check, the victim passed and saw nothing of the row, no process, cgroup or scratch left, the same pool.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.backends import capability_report, default_backend_name
from sandbox.backends.hardened import HardenedBackend
from tests.sandbox.hostile_corpus import Host, Row
from tests.sandbox.hostile_kernel_rows import ROWS
from tests.sandbox.test_hardened_hostile import SLOTS, Outcome, assert_contained, listening_host, run_table

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        default_backend_name() != "hardened",
        reason=f"the hardened backend cannot run here: {capability_report()}",
    ),
]

UID_BASE = 25300  # a block of its own (leased), apart from the session backend's and the table's


@pytest.fixture(scope="module")
def host() -> Iterator[Host]:
    with listening_host() as found:
        yield found


@pytest.fixture(scope="module")
def outcomes(host: Host) -> Iterator[dict[str, Outcome]]:
    # HOSTILE_SANDBOX_DIR: the pool runs a modified copy of `sandbox/`, as for the corpus's ablations.
    ablated = os.environ.get("HOSTILE_SANDBOX_DIR")
    backend = HardenedBackend(slots=SLOTS, uid_base=UID_BASE, sandbox_dir=Path(ablated) if ablated else None)
    try:
        assert backend.wait_ready(120) is not None, "the pool did not start"
        yield run_table(backend, host, ROWS)
    finally:
        backend.close()


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.name)
def test_kernel_row_is_contained(outcomes: dict[str, Outcome], host: Host, row: Row) -> None:
    assert_contained(outcomes[row.name], host, row)
