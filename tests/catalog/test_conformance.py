"""Every catalog entry conforms: complete metadata, the exercise template runs and stops at its first
hole with a message saying what is missing, the worked solution passes, every known-wrong kernel gets
the status its entry.toml declares (and says nothing in its own file about what is wrong).

Parametrized over `load_catalog()`, so a newly listed entry is covered without touching this file.
The kernels run for real (TPU interpret mode on CPU) through the paths users take: every solution,
wrong kernel and template through the HTTP API (`POST /api/runs` on an in-process app on the
session's backend, `tests.backends`, then `GET /api/runs/{id}` until done; solutions also lowered
for every chip), and one solution and one wrong kernel through the CLI as a user types it
(`python -m sandbox run ... --json`, a subprocess with its own backend: its report and exit code).
One session fixture runs only the jobs the selected tests need (`-k slug` works), two at a time.
The everyday suite runs a few entries' jobs, one of each kind of entry and of each declared status;
the rest repeat those paths and run with `--long` (`tests.matrices`; CI passes it).
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from sandbox.catalog.entries import DEFAULT_ROOT, CatalogEntry, load_catalog
from sandbox.limits import WALL_SECONDS
from sandbox.protocol import CHIPS, RunResult, RunStatus, from_json_dict
from server.app import create_app
from server.settings import Settings
from tests.backends import suite_backend
from tests.matrices import split

pytestmark = pytest.mark.slow

CATALOG = load_catalog()
REPO = DEFAULT_ROOT.parent
WORKERS = 2  # the machine has two cores; more jobs at once only slows each one down
TIMING_BUDGET_SECONDS = 0.1
POLL_SECONDS = 0.25
# Each job stops at the wall-clock limit; past this, the path that ran it is stuck and the test says so.
STUCK_SECONDS = WALL_SECONDS + 60


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

    @property
    def chip(self) -> str:
        return "v5p" if "v5p" in self.entry.chips else self.entry.chips[0]


@dataclass(frozen=True)
class Outcome:
    """What a user path gave back for one run: its result, or why there is none (our side failed)."""

    result: RunResult | None
    problem: str = ""
    exit_code: int | None = None  # the CLI's


RUNS = [Run(e, "kernel.py", e.solution_source, RunStatus.PASSED) for e in CATALOG.entries] + [
    Run(e, f"wrong/{w.name}.py", w.source, w.expect) for e in CATALOG.entries for w in e.wrong
]
SOLUTIONS = [r for r in RUNS if r.kernel == "kernel.py"]
WRONG = [r for r in RUNS if r.kernel != "kernel.py"]
# A template is expected to stop with an error at its first hole (see test_template_...).
TEMPLATES = [Run(e, "template.py", e.template_source, RunStatus.ERROR) for e in CATALOG.entries]
# Through the CLI too: a verdict of each exit code (the API runs them as well).
CLI_RUNS = [SOLUTIONS[0], next(r for r in WRONG if r.expect == RunStatus.MISMATCH)]
# The rows the everyday suite runs: a one-device TensorCore entry, a SparseCore one and a 4-device one;
# a wrong kernel of each declared status and a race; one template. The others are `long`.
SOLUTION_ROWS = split(
    SOLUTIONS,
    ("tiled_matmul/kernel.py", "sparsecore_gather/kernel.py", "ring_all_gather/kernel.py"),
    id=lambda r: r.id,
)
WRONG_ROWS = split(
    WRONG,
    (
        CLI_RUNS[1].id,
        "hbm_manual_dma/wrong/missing_drain.py",
        "race_condition_demo/wrong/both_cores_write_every_row.py",
    ),
    id=lambda r: r.id,
)
TEMPLATE_ROWS = split(TEMPLATES, ("tiled_matmul/template.py",), id=lambda r: r.id)


def run_cli(run: Run) -> Outcome:
    """`python -m sandbox run kernels_catalog/<slug>/kernel.py --entry <slug> --json`, as a user types it."""
    kernel = f"kernels_catalog/{run.entry.slug}/{run.kernel}"
    command = [sys.executable, "-m", "sandbox", "run", kernel, "--entry", run.entry.slug, "--chip", run.chip]
    command += ["--timing-budget", str(TIMING_BUDGET_SECONDS), "--all-chips", "--json"]
    shown = " ".join(command[1:])
    try:
        done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=STUCK_SECONDS)
    except subprocess.TimeoutExpired:
        return Outcome(None, f"{shown}: still running after {STUCK_SECONDS:g} s")
    try:
        result = from_json_dict(RunResult, json.loads(done.stdout))
    except (KeyError, TypeError, ValueError) as exc:
        problem = f"{shown}: exited {done.returncode} without a RunResult on stdout ({exc})"
        return Outcome(None, f"{problem}\n{tail(done.stderr)}")
    return Outcome(result, exit_code=done.returncode)


def run_api(runs: list[Run], data_dir: Path) -> dict[str, Outcome]:
    """Submit every run to one in-process app (it runs two at a time), then poll each until done."""
    settings = Settings(
        data_dir=data_dir,
        slots=WORKERS,
        queue_size=64,
        per_client_queue=64,
        per_address_queue=64,  # every run comes from this one test client and address
        queue_reserve=0,  # nor are the queue's last places kept from it (one address holds them all)
        rate_per_minute=0,
        address_rate_per_minute=0,
        cache_size=0,
        timing_budget_seconds=TIMING_BUDGET_SECONDS,
    )
    outcomes: dict[str, Outcome] = {}
    with TestClient(create_app(settings, backend=suite_backend())) as client:
        pending = {}
        for run in runs:
            body = {"source": run.source, "entry": run.entry.slug, "chip": run.chip}
            if run.kernel == "kernel.py":  # a solution must lower for every chip (as `--all-chips`)
                body["lower_chips"] = list(CHIPS)
            created = client.post("/api/runs", json=body)
            if created.status_code == 201:
                pending[run.id] = created.json()["id"]
            else:
                outcomes[run.id] = Outcome(None, f"POST /api/runs: {created.status_code} {created.text}")
        outcomes |= poll(client, pending, deadline=time.monotonic() + STUCK_SECONDS * len(runs) / WORKERS)
    return outcomes


def poll(client: TestClient, pending: dict[str, str], deadline: float) -> dict[str, Outcome]:
    """`GET /api/runs/{id}` for every pending run (run id -> server id) until each is done."""
    outcomes: dict[str, Outcome] = {}
    while pending and time.monotonic() < deadline:
        for run_id, server_id in list(pending.items()):
            got = client.get(f"/api/runs/{server_id}")
            if got.status_code != 200:
                outcomes[run_id] = Outcome(None, f"GET /api/runs/{server_id}: {got.status_code} {got.text}")
            elif got.json()["state"] == "done":
                outcomes[run_id] = decoded(got.json()["result"])
            else:
                continue
            del pending[run_id]
        time.sleep(POLL_SECONDS)
    return outcomes | {
        r: Outcome(None, f"run {s} still not done; the server is stuck") for r, s in pending.items()
    }


def decoded(data: object) -> Outcome:
    try:
        return Outcome(from_json_dict(RunResult, data))
    except (KeyError, TypeError, ValueError) as exc:
        return Outcome(None, f"the API's result is not a RunResult: {type(exc).__name__}: {exc}")


def wanted_runs(items: list[pytest.Item]) -> set[str]:
    """Ids of the runs the selected tests read (`cli:<id>` for the CLI's), so `-k slug` runs only those."""
    wanted = set()
    for item in items:
        if item.get_closest_marker("skip"):  # a `long` row without `--long`: its job is not run
            continue
        params = getattr(getattr(item, "callspec", None), "params", {})
        if "results" in getattr(item, "fixturenames", ()) and "run" in params:
            wanted.add(params["run"].id)
        elif "results" in getattr(item, "fixturenames", ()) and "cli_run" in params:
            wanted.add(f"cli:{params['cli_run'].id}")
    return wanted


@pytest.fixture(scope="session")
def results(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    """Outcomes of every run that a selected test asks for, keyed by run id (`cli:<id>` for the CLI)."""
    wanted = wanted_runs(request.session.items)
    through_api = [r for r in SOLUTIONS + WRONG + TEMPLATES if r.id in wanted]
    outcomes = run_api(through_api, tmp_path_factory.mktemp("playground")) if through_api else {}
    through_cli = [r for r in CLI_RUNS if f"cli:{r.id}" in wanted]
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        cli = dict(zip((f"cli:{r.id}" for r in through_cli), pool.map(run_cli, through_cli), strict=True))
    return outcomes | cli


def result_of(results: dict[str, Outcome], run: Run) -> RunResult:
    outcome = results[run.id]
    if outcome.result is None:
        pytest.fail(f"{run.id}: could not run the job: {outcome.problem}")
    return outcome.result


def tail(text: str, lines: int = 12) -> str:
    return "\n".join(text.splitlines()[-lines:])


def describe(result: RunResult) -> str:
    text = f"[{result.status}] {result.summary}"
    if result.error is not None:
        text += "\n" + tail(result.error.traceback)
    return text


def interpret_cases(entry: CatalogEntry) -> list[str]:
    return [c.name for c in entry.cases if not c.tpu_only]


def finding(result: RunResult) -> str:
    """What the result shows the user about why the kernel is wrong ("" if it shows nothing useful)."""
    if result.status == RunStatus.MISMATCH:
        case = next((c for c in result.cases if c.passed is False), None)
        if case is None:
            return ""
        if case.races:  # a racy kernel's outputs may match on the simulator; the race is the finding
            return case.races[0].summary
        return next((f"{o.name}: {o.first_mismatches}" for o in case.outputs if o.first_mismatches), "")
    if result.error is not None:
        return result.error.message.strip()
    return result.limit or ""


@pytest.mark.parametrize("run", SOLUTION_ROWS)
def test_solution_passes_every_interpret_case(run: Run, results: dict[str, Outcome]) -> None:
    result = result_of(results, run)
    assert result.status == RunStatus.PASSED, f"{run.id}: {describe(result)}"
    checked = [c.name for c in result.cases if c.passed]
    assert checked == interpret_cases(run.entry), f"{run.id}: {describe(result)}"
    assert result.options == run.entry.options, (
        f"{run.id}: ran with {result.options}, not the entry's {run.entry.options}"
    )


@pytest.mark.parametrize("cli_run", CLI_RUNS, ids=lambda r: r.id)
def test_the_cli_gives_the_verdict_and_exits_by_it(cli_run: Run, results: dict[str, Outcome]) -> None:
    outcome = results[f"cli:{cli_run.id}"]
    if outcome.result is None:
        pytest.fail(f"{cli_run.id}: could not run the job: {outcome.problem}")
    assert outcome.result.status == cli_run.expect, f"{cli_run.id}: {describe(outcome.result)}"
    want = 0 if cli_run.expect == RunStatus.PASSED else 1
    assert outcome.exit_code == want, f"{cli_run.id}: the CLI exited {outcome.exit_code}"
    reports = {r.chip: r.lowers for r in outcome.result.lowerings}
    assert set(reports) == set(CHIPS), f"{cli_run.id}: --all-chips lowered for {sorted(reports)}"


@pytest.mark.parametrize("run", SOLUTION_ROWS)
def test_solution_cases_are_not_vacuous(run: Run, results: dict[str, Outcome]) -> None:
    # A case an all-zeros or a constant output would also pass cannot reject a wrong kernel.
    result = result_of(results, run)
    vacuous = [c.name for c in result.cases if "vacuous check" in c.note]
    assert not vacuous, f"{run.id}: cases {vacuous} would pass with a zeros or constant output"


@pytest.mark.parametrize("run", SOLUTION_ROWS)
def test_solution_lowers_for_every_chip_its_entry_supports(run: Run, results: dict[str, Outcome]) -> None:
    # Passing in the simulator is not enough: the real Pallas -> Mosaic lowering must accept it, and
    # the static chip checks (cores, SparseCore, VMEM, tiling) must have nothing to say.
    result = result_of(results, run)
    reports = {r.chip: r for r in result.lowerings}
    for chip in run.entry.chips:
        report = reports.get(chip)
        assert report is not None, f"{run.id}: no lowering report for {chip}"
        shown = report.error.message if report.error else report.note
        assert report.lowers is True, f"{run.id}: does not lower for {chip}: {shown}"
        assert report.warnings == (), f"{run.id} on {chip}: {report.warnings}"


@pytest.mark.parametrize("run", WRONG_ROWS)
def test_wrong_kernel_gets_its_declared_status_through_the_api(run: Run, results: dict[str, Outcome]) -> None:
    result = result_of(results, run)
    assert result.options == run.entry.options, (
        f"{run.id}: ran with {result.options}, not the entry's {run.entry.options}"
    )
    assert result.status == run.expect, f"{run.id}: expected {run.expect}, got {describe(result)}"
    if run.expect == RunStatus.MISMATCH:
        # The first case is the one the page shows and times: a wrong kernel must fail right there.
        assert result.cases, f"{run.id}: no case was checked; {describe(result)}"
        first = result.cases[0]
        assert first.name == run.entry.cases[0].name and first.passed is False, (
            f"{run.id}: the first case {first.name!r} passed; {describe(result)}"
        )
    assert finding(result), f"{run.id}: the result does not show what is wrong; {describe(result)}"


@pytest.mark.parametrize("run", TEMPLATE_ROWS)
def test_template_runs_and_stops_at_a_hole_saying_what_is_missing(
    run: Run, results: dict[str, Outcome]
) -> None:
    result = result_of(results, run)
    assert result.status == RunStatus.ERROR, f"{run.id}: {describe(result)}"
    assert result.error is not None and result.error.type == "NotImplementedError", describe(result)
    message = result.error.message
    hole = re.search(r"TODO at line (\d+): (.+)", message)
    assert hole, f"{run.id}: the error does not name a hole: {message!r}"
    line = run.source.splitlines()[int(hole.group(1)) - 1]
    assert "todo(" in line, f"{run.id}: line {hole.group(1)} is not a hole: {line!r}"


@pytest.mark.parametrize("entry", CATALOG.entries, ids=lambda e: e.slug)
def test_template_has_holes_where_the_solution_has_code(entry: CatalogEntry) -> None:
    template, solution = entry.template_source, entry.solution_source
    holes = [
        node.lineno - 1
        for node in ast.walk(ast.parse(template))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "todo"
    ]
    assert len(holes) >= 2, f"{entry.slug}: a template needs at least two holes, has {len(holes)}"
    lines = template.splitlines()
    for n in holes:  # every hole is explained by a `# TODO` comment just above it
        above = [lines[k] for k in range(max(0, n - 4), n)]
        assert any("# TODO" in a for a in above), f"{entry.slug}: hole at line {n + 1} has no # TODO"
    assert "todo(" not in solution and "TODO" not in solution


@pytest.mark.parametrize("entry", CATALOG.entries, ids=lambda e: e.slug)
def test_wrong_kernels_do_not_say_what_is_wrong(entry: CatalogEntry) -> None:
    for wrong in entry.wrong:
        assert wrong.why, f"{entry.slug}/{wrong.name}: entry.toml must explain it"
        for telltale in ("WRONG", "wrong:", "forgotten", "too few", "is ignored"):
            assert telltale not in wrong.source, f"{entry.slug}/{wrong.name} says {telltale!r}"


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
    # One paragraph that explains the entry; after it, at most a note on older JAX runtimes (#17).
    first, *more = entry.readme.strip().split("\n\n")
    assert first.strip(), "README.md must start with a non-empty paragraph"
    assert all(p.startswith("**On older JAX.**") for p in more), (
        "README.md: one paragraph, then the older-JAX note"
    )
    names = [c.name for c in entry.cases]
    assert len(names) == len(set(names)), f"case names repeat: {names}"
    undeclared = {c.dtype for c in entry.cases} - set(entry.tolerances)
    assert not undeclared, f"no tolerance declared for {sorted(undeclared)}"
    assert {"make_inputs", "reference"} <= defined_names(entry.reference_source)
    mutable = entry.mutable_inputs
    assert len(set(mutable)) == len(mutable) and all(i >= 0 for i in mutable), mutable
    arity = positional_parameters(entry.reference_source, "reference")
    assert arity is None or all(i < arity for i in mutable), f"{mutable=} but reference takes {arity}"


@pytest.mark.parametrize("run", RUNS + TEMPLATES, ids=lambda r: r.id)
def test_kernel_defines_the_entry_point(run: Run) -> None:
    assert run.entry.entry_point in defined_names(run.source), (
        f"{run.id} must define `{run.entry.entry_point}` at top level"
    )
