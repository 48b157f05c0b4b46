"""Every catalog entry conforms: complete metadata, the worked solution passes, every known-wrong kernel
gets the status its entry.toml declares.

Parametrized over `load_catalog()`, so a newly listed entry is covered without touching this file.
The kernels run for real (local backend, TPU interpret mode on CPU): one session fixture runs the
jobs the selected tests need, two at a time, and the tests assert on the stored results.
"""

from __future__ import annotations

import ast
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pytest

from sandbox.backends import Backend, create_backend
from sandbox.catalog import DEFAULT_ROOT, CatalogEntry, load_catalog
from sandbox.classify import classify
from sandbox.jobs import make_job
from sandbox.protocol import RunResult, RunStatus

pytestmark = pytest.mark.slow

CATALOG = load_catalog()
WORKERS = 2  # the machine has two cores; more jobs at once only slows each one down
TIMING_BUDGET_SECONDS = 0.1


@dataclass(frozen=True)
class Run:
    """One kernel file of one entry, and the status the checker must give it."""

    entry: CatalogEntry
    kernel: str
    source: str
    expect: RunStatus

    @property
    def id(self) -> str:
        return f"{self.entry.slug}/{self.kernel}"


RUNS = [Run(e, "kernel.py", e.solution_source, RunStatus.PASSED) for e in CATALOG.entries] + [
    Run(e, f"wrong/{w.name}.py", w.source, w.expect) for e in CATALOG.entries for w in e.wrong
]
SOLUTIONS = [r for r in RUNS if r.kernel == "kernel.py"]
WRONG = [r for r in RUNS if r.kernel != "kernel.py"]


def execute(backend: Backend, run: Run) -> RunResult | Exception:
    """The run's result, or what went wrong on our side (kept, so it fails only this run's test)."""
    chip = "v5p" if "v5p" in run.entry.chips else run.entry.chips[0]
    try:
        job = make_job(
            run.source, entry=run.entry, chip=chip, timing_budget_seconds=TIMING_BUDGET_SECONDS, job_id=run.id
        )
        return classify(job, backend.run(job, lambda event: None, threading.Event()))
    except Exception as exc:
        return exc


@pytest.fixture(scope="session")
def results(request: pytest.FixtureRequest) -> dict[str, RunResult | Exception]:
    """Results of every run that a selected test asks for, so `-k slug` runs only that entry's jobs."""
    wanted = {
        item.callspec.params["run"].id
        for item in request.session.items
        if "results" in getattr(item, "fixturenames", ())
        and "run" in getattr(getattr(item, "callspec", None), "params", {})
    }
    runs = [r for r in RUNS if r.id in wanted]
    backend = create_backend("local")
    try:
        with ThreadPoolExecutor(max_workers=WORKERS) as pool:
            return dict(zip((r.id for r in runs), pool.map(lambda r: execute(backend, r), runs), strict=True))
    finally:
        backend.close()


def result_of(results: dict[str, RunResult | Exception], run: Run) -> RunResult:
    result = results[run.id]
    if isinstance(result, Exception):
        pytest.fail(f"{run.id}: could not run the job: {type(result).__name__}: {result}")
    return result


def describe(result: RunResult) -> str:
    text = f"[{result.status}] {result.summary}"
    if result.error is not None:
        text += "\n" + "\n".join(result.error.traceback.splitlines()[-12:])
    return text


def interpret_cases(entry: CatalogEntry) -> list[str]:
    return [c.name for c in entry.cases if not c.tpu_only]


@pytest.mark.parametrize("run", SOLUTIONS, ids=lambda r: r.id)
def test_solution_passes_every_interpret_case(run: Run, results: dict[str, RunResult | Exception]) -> None:
    result = result_of(results, run)
    assert result.status == RunStatus.PASSED, f"{run.id}: {describe(result)}"
    checked = [c.name for c in result.cases if c.passed]
    assert checked == interpret_cases(run.entry), f"{run.id}: {describe(result)}"


@pytest.mark.parametrize("run", WRONG, ids=lambda r: r.id)
def test_wrong_kernel_gets_its_declared_status(run: Run, results: dict[str, RunResult | Exception]) -> None:
    result = result_of(results, run)
    assert result.status == run.expect, f"{run.id}: expected {run.expect}, got {describe(result)}"
    if run.expect == RunStatus.MISMATCH:
        # The first case is the one the page shows and times: a wrong kernel must fail right there.
        assert result.cases, f"{run.id}: no case was checked; {describe(result)}"
        first = result.cases[0]
        assert first.name == run.entry.cases[0].name and first.passed is False, (
            f"{run.id}: the first case {first.name!r} passed; {describe(result)}"
        )


def test_slugs_are_unique_and_name_their_folders() -> None:
    slugs = [e.slug for e in CATALOG.entries]
    assert slugs, "the catalog lists no entries"
    assert len(slugs) == len(set(slugs)), slugs
    for slug in slugs:
        assert (DEFAULT_ROOT / slug / "entry.toml").is_file(), slug


def defined_names(source: str) -> set[str]:
    """Top-level functions and assigned names (`matmul = jax.jit(...)` counts too)."""
    names = set()
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return names


def positional_parameters(source: str, name: str) -> int | None:
    """How many inputs the function `name` takes, or None if that is not plain to see."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == name and node.args.vararg is None:
            return len(node.args.args)
    return None


@pytest.mark.parametrize("entry", CATALOG.entries, ids=lambda e: e.slug)
def test_entry_metadata_is_complete(entry: CatalogEntry) -> None:
    assert entry.concepts and all(isinstance(c, str) and c.strip() for c in entry.concepts), entry.concepts
    assert entry.docs.startswith("https://"), entry.docs
    assert entry.devices >= 1, entry.devices
    readme = entry.readme.strip()
    assert readme and "\n\n" not in readme, "README.md must be one non-empty paragraph"
    names = [c.name for c in entry.cases]
    assert len(names) == len(set(names)), f"case names repeat: {names}"
    undeclared = {c.dtype for c in entry.cases} - set(entry.tolerances)
    assert not undeclared, f"no tolerance declared for {sorted(undeclared)}"
    assert {"make_inputs", "reference"} <= defined_names(entry.reference_source)
    mutable = entry.mutable_inputs
    assert len(set(mutable)) == len(mutable) and all(i >= 0 for i in mutable), mutable
    arity = positional_parameters(entry.reference_source, "reference")
    assert arity is None or all(i < arity for i in mutable), f"{mutable=} but reference takes {arity}"


@pytest.mark.parametrize("run", RUNS, ids=lambda r: r.id)
def test_kernel_defines_the_entry_point(run: Run) -> None:
    assert run.entry.entry_point in defined_names(run.source), (
        f"{run.id} must define `{run.entry.entry_point}` at top level"
    )
