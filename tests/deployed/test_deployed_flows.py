"""Every capability the API lists, as deployed: real `python -m server` processes, real kernels.

Two deployments, each started once: `hardened` is the web server on its embedded
defaults (SQLite, its own slots, the sandbox it picks: the hardened jail as root, as CI runs), and
`redis_pg` is a web server on Redis and PostgreSQL whose runs go to a runner worker on the hardened
sandbox. A capability that works on the development backend but not here fails this tier.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from sandbox.backends import capability_report, default_backend_name
from sandbox.catalog.entries import load_catalog
from sandbox.host.runtimes import discover
from tests.scale.deployment import Process, deployed, follow, get, request

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        default_backend_name() != "hardened",
        reason=f"the deployed configuration needs the hardened sandbox (root): {capability_report()}",
    ),
]

CATALOG = load_catalog()
ENTRY = CATALOG.get("tiled_matmul_pallas_call")
RUNTIMES = discover().names
# A scratch file with its own reference that runs on every installed JAX.
SCRATCH = """
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl


def double_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2.0


def make_inputs(seed):
    return (jax.random.normal(jax.random.key(seed), (8, 128), jnp.float32),)


def reference(x):
    return x * 2.0


def kernel(x):
    return pl.pallas_call(double_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
"""
WAIT_SECONDS = 240


@pytest.fixture(scope="module")
def hardened_web(tmp_path_factory) -> Iterator[Process]:
    with deployed("hardened", tmp_path_factory.mktemp("hardened")) as server:
        yield server


@pytest.fixture(params=["hardened_web", "redis_pg_web"])
def web(request) -> Process:
    return request.getfixturevalue(request.param)


def submit(web: Process, body: dict) -> str:
    status, created, _ = request(web, "POST", "/api/runs", {"fresh": True, **body})
    assert status == 201, created
    return created["id"]


def finished(web: Process, path: str, seconds: float = WAIT_SECONDS) -> dict:
    """GET `path` until its `state` is done."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        status, body = get(web, path)
        assert status == 200, body
        if body["state"] == "done":
            return body
        time.sleep(0.25)
    raise AssertionError(f"{path} not done after {seconds} s")


def run(web: Process, body: dict) -> dict:
    """A run followed over SSE to its `done`, as the page follows it; the final RunResult."""
    events = follow(web, submit(web, body))
    assert events[-1][1] == "done", events[-3:]
    return events[-1][2]


def test_a_learners_next_try_is_checked_against_the_kept_reference(web):
    # Its own reference text (the module's other tests run SCRATCH itself): nothing kept before it.
    source = f"_TRY = {web.name!r}\n" + SCRATCH
    tries = {
        "first": source,
        "kernel edited": source.replace("x_ref[...] * 2.0", "x_ref[...] + x_ref[...]"),
        "kernel broken": source.replace("x_ref[...] * 2.0", "x_ref[...] * 3.0"),
    }
    results = {name: run(web, {"source": text, "chip": "v5p", "fresh": True}) for name, text in tries.items()}
    statuses = {name: r["status"] for name, r in results.items()}
    assert statuses == {"first": "passed", "kernel edited": "passed", "kernel broken": "mismatch"}, {
        name: r["summary"] for name, r in results.items()
    }
    # The first computed its reference (beside its kernel's job, or before it); the next tries were
    # answered with it, and say so.
    assert "earlier run" not in results["first"]["checked_by"], results["first"]["checked_by"]
    for name in ("kernel edited", "kernel broken"):
        assert "earlier run of the same `make_inputs` and `reference`" in results[name]["checked_by"]
        assert results[name]["phases"]["reference"] < 0.05


def test_health_lists_every_capability_as_serving(web):
    status, health = get(web, "/api/health")
    assert status == 200 and health["status"] == "ok", health
    status, runtimes = get(web, "/api/runtimes")
    assert status == 200
    assert [r["name"] for r in runtimes if r["available"]] == list(RUNTIMES)


def test_a_catalog_solution_passes_and_a_wrong_one_is_a_mismatch(web):
    body = {"entry": ENTRY.slug, "chip": "v5e"}
    passed = run(web, {**body, "source": ENTRY.solution_source})
    assert passed["status"] == "passed", passed["summary"]
    assert "catalog entry's reference" in passed["checked_by"]
    assert all(case["kernels"] >= 1 for case in passed["cases"])
    wrong = next(w for w in ENTRY.wrong if w.expect == "mismatch")
    failed = run(web, {**body, "source": wrong.source})
    assert failed["status"] == "mismatch", failed["summary"]


def test_a_scratch_file_is_checked_against_its_own_reference(web):
    result = run(web, {"source": SCRATCH, "chip": "v5p"})
    assert result["status"] == "passed", result["summary"]
    assert "own reference" in result["checked_by"]


def test_a_share_keeps_its_result_and_a_lesson_and_class_open_on_it(web):
    result_run = submit(web, {"source": SCRATCH, "chip": "v5p"})
    assert follow(web, result_run)[-1][2]["status"] == "passed"
    status, share, _ = request(
        web, "POST", "/api/shares", {"source": SCRATCH, "chip": "v5p", "run": result_run}
    )
    assert status in (200, 201), share
    status, shared = get(web, f"/api/shares/{share['id']}")
    assert status == 200 and shared["result"]["status"] == "passed"

    steps = [{"share": share["id"], "note": "double it"}, {"source": SCRATCH, "chip": "v5e", "note": "again"}]
    status, lesson, _ = request(web, "POST", "/api/lessons", {"title": "deployed", "steps": steps})
    assert status == 201, lesson
    status, opened = get(web, f"/api/lessons/{lesson['id']}")
    assert status == 200 and [s["note"] for s in opened["steps"]] == ["double it", "again"]

    status, made, _ = request(web, "POST", "/api/classes", {"lesson": lesson["id"]})
    assert status == 201, made
    status, joined, _ = request(web, "POST", f"/api/classes/{made['code']}/join", {"name": "ada"})
    assert status == 201, joined
    ran = run(web, {"source": SCRATCH, "chip": "v5p", "class_token": joined["student_token"], "step": 1})
    assert ran["status"] == "passed"
    auth = {"Authorization": f"Bearer {made['teacher_token']}"}
    status, progress, _ = request(web, "GET", f"/api/classes/{made['id']}/progress", headers=auth)
    assert status == 200
    (student,) = progress["students"]
    assert student["name"] == "ada" and student["steps"]["1"]["status"] == "passed"


def test_a_sweep_judges_every_config_and_names_the_best(web):
    body = {
        "source": ENTRY.solution_source,
        "entry": ENTRY.slug,
        "chip": "v5e",
        "params": {"bm": [128, 256], "bk": [128], "bn": [128]},
        "fresh": True,
    }
    status, created, _ = request(web, "POST", "/api/sweeps", body)
    assert status == 201, created
    swept = finished(web, f"/api/sweeps/{created['id']}")["result"]
    assert swept["status"] == "passed", swept["summary"]
    configs = swept["sweep"]["configs"]
    assert len(configs) == 2 and {c["status"] for c in configs} == {"ok"}
    assert swept["sweep"]["best"] is not None


def test_run_on_all_versions_runs_on_every_installed_jax(web):
    body = {"source": SCRATCH, "chip": "v5p", "fresh": True}
    status, created, _ = request(web, "POST", "/api/matrices", body)
    assert status == 201, created
    matrix = finished(web, f"/api/matrices/{created['id']}")
    assert matrix["skipped"] == []
    rows = {row["runtime"]: row for row in matrix["rows"]}
    assert sorted(rows) == sorted(RUNTIMES)
    assert {runtime: row["status"] for runtime, row in rows.items()} == dict.fromkeys(RUNTIMES, "passed")
    for runtime, row in rows.items():
        assert get(web, row["url"])[1]["result"]["versions"]["jax"] == runtime


def test_a_share_made_on_an_old_jax_reruns_there_and_on_todays(web):
    oldest = RUNTIMES[-1]
    old = run(web, {"source": SCRATCH, "chip": "v5p", "runtime": oldest})
    assert old["status"] == "passed" and old["versions"]["jax"] == oldest
    status, share, _ = request(
        web, "POST", "/api/shares", {"source": SCRATCH, "chip": "v5p", "runtime": oldest}
    )
    assert status in (200, 201), share
    status, shared = get(web, f"/api/shares/{share['id']}")
    assert status == 200 and shared["runtime"] == oldest
    today = run(web, {"source": SCRATCH, "chip": "v5p"})
    assert today["status"] == "passed" and today["versions"]["jax"] == RUNTIMES[0]
