"""Every catalog solution, on every older JAX runtime, gets the outcome `kernels_catalog/runtimes.toml`
records; on the newest it passes (`tests/catalog/test_conformance.py` runs that in the everyday suite).

The solutions are written for jax 0.12.0.1, so on older runtimes several fail, each with the message
a user gets there: a name that arrived later (`pltpu.TensorCoreMesh`) says where it exists, a
simulator limitation says it is one. `RECORD_RUNTIMES=1` rewrites the record from this run.
"""

from __future__ import annotations

import os

import pytest

from sandbox.catalog import runtimes as catalog_runtimes
from sandbox.catalog.entries import DEFAULT_ROOT, CatalogEntry, load_catalog
from sandbox.catalog.runtimes import Outcome
from sandbox.host.runtimes import RuntimeSet
from sandbox.jobs.build import make_job
from sandbox.protocol import RunResult, RunStatus
from sandbox.results import matrix
from tests.runtimes.conftest import run_on_runtimes

pytestmark = [pytest.mark.runtimes, pytest.mark.slow]

CATALOG = load_catalog()
RECORD = catalog_runtimes.load()
TENSORCORE_MESH = (
    "error in kernel: AttributeError: `pltpu.TensorCoreMesh` is not in jax 0.10.2; it is in 0.11.2 and later: "
    "choose that JAX version to run it as written"
)


def chip_of(entry: CatalogEntry) -> str:
    return "v5p" if "v5p" in entry.chips else entry.chips[0]


@pytest.fixture(scope="module")
def outcomes(runtimes: RuntimeSet) -> dict[tuple[str, str], RunResult]:
    older = [r.name for r in runtimes.runtimes if r is not runtimes.default]
    pairs = [(entry, name) for entry in CATALOG.entries for name in older]
    jobs = [
        make_job(
            entry.solution_source,
            entry=entry,
            chip=chip_of(entry),  # type: ignore[arg-type]
            timing_budget_seconds=0.05,
            trace=False,
            runtime=name,
        )
        for entry, name in pairs
    ]
    results = run_on_runtimes(runtimes, jobs)
    found = {(entry.slug, name): result for (entry, name), result in zip(pairs, results, strict=True)}
    if os.environ.get("RECORD_RUNTIMES") == "1":
        record = {
            e.slug: {
                runtimes.default.name: Outcome(RunStatus.PASSED),
                **{name: Outcome.of(found[(e.slug, name)]) for name in older},
            }
            for e in CATALOG.entries
        }
        (DEFAULT_ROOT / catalog_runtimes.FILE_NAME).write_text(catalog_runtimes.dump(record))
    return found


def describe(result: RunResult) -> str:
    return f"[{result.status}] {result.summary}"


@pytest.mark.parametrize("entry", CATALOG.entries, ids=lambda e: e.slug)
def test_solution_gets_its_recorded_outcome_on_every_runtime(
    entry: CatalogEntry, runtimes: RuntimeSet, outcomes: dict[tuple[str, str], RunResult]
) -> None:
    rows = RECORD.get(entry.slug, {})
    assert set(rows) == set(runtimes.names), (
        f"{entry.slug}: recorded for {sorted(rows)}, installed {runtimes.names}"
    )
    assert rows[runtimes.default.name].status is RunStatus.PASSED
    for name in rows:
        if name != runtimes.default.name:
            result = outcomes[(entry.slug, name)]
            assert rows[name].matches(result), f"{entry.slug} on jax {name}: {describe(result)}"


def test_a_kernel_that_passes_on_one_version_fails_on_another_saying_where_its_name_is(
    outcomes: dict[tuple[str, str], RunResult],
) -> None:
    old, new = outcomes[("tiled_matmul", "0.10.2")], outcomes[("tiled_matmul", "0.11.2")]
    assert old.status is RunStatus.ERROR and old.summary.startswith(TENSORCORE_MESH), describe(old)
    assert old.error is not None and old.error.type == "AttributeError" and old.error.line is not None
    assert new.status is RunStatus.PASSED, describe(new)
    rows = [matrix.row(name, name, outcomes[("tiled_matmul", name)]) for name in ("0.10.2", "0.11.2")]
    assert matrix.verdict(rows) == f"fails up to 0.10.2, passes from 0.11.2: {old.summary}"


def test_every_readme_explains_where_its_solution_does_not_pass() -> None:
    for entry in CATALOG.entries:
        failing = [name for name, o in RECORD.get(entry.slug, {}).items() if o.status is not RunStatus.PASSED]
        for name in failing:
            assert f"jax {name}" in entry.readme, f"{entry.slug}: README says nothing of jax {name}"
