"""Several pools on one host: none sweeps another's live cgroups, and a dead one's are swept.

Two servers (or a server and a test suite) on one host may sit in different cgroups of one
hierarchy (memory, here) while sharing others (pids, cpu, the v2 one). Each pool's liveness must be
tested where its directory is found; before that, the second pool's start destroyed the first's
directories in the shared hierarchies and the first failed every later job.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from sandbox.jail import cgroup_layout, cgroups
from sandbox.limits import default_limits

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="makes cgroups: needs root")
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def two_memory_cgroups() -> Iterator[tuple[cgroup_layout.Layout, cgroup_layout.Layout]]:
    """The host's layout twice, differing only in the memory cgroup each pool lives in."""
    layout = cgroup_layout.detect()
    if layout.memory is None or layout.memory.version != 1 or layout.pids is layout.memory:
        pytest.skip(f"needs memory in its own v1 hierarchy, as on this machine ({layout.describe()})")
    made = []
    views = []
    for name in ("server-a", "server-b"):
        own = f"{layout.memory.own.rstrip('/')}/test-{name}-{uuid.uuid4().hex[:6]}"
        (layout.memory.mount / own.lstrip("/")).mkdir()
        made.append(layout.memory.mount / own.lstrip("/"))
        views.append(replace(layout, memory=replace(layout.memory, own=own)))
    yield views[0], views[1]
    for path in made:
        for child in sorted(path.rglob("*"), key=lambda p: -len(p.parts)):
            if child.is_dir():
                child.rmdir()
        path.rmdir()


def test_a_second_pool_leaves_a_live_pool_alone(two_memory_cgroups):
    layout_a, layout_b = two_memory_cgroups
    base = f"pallas-playground-test-{uuid.uuid4().hex[:6]}"
    a = cgroups.PoolCgroups(layout_a, "a" + uuid.uuid4().hex[:8], base)
    b = cgroups.PoolCgroups(layout_b, "b" + uuid.uuid4().hex[:8], base)
    a.start()
    job = a.create("job1", default_limits(), 1.0)
    try:
        assert b.start() == []
        for path in job.dirs.values():
            assert path.is_dir(), f"{path} was swept while its pool lives"
    finally:
        job.remove()
        b.close()
    # Pool a dies without cleaning up (its flocks go with it): the next pool sweeps it everywhere.
    for fd in a._lock_fds:
        os.close(fd)
    leftovers = [base_dir / f"pool-{a.token}" for base_dir in a.bases().values()]
    c = cgroups.PoolCgroups(layout_b, "c" + uuid.uuid4().hex[:8], base)
    swept = c.start()
    c.close()
    private = layout_a.memory.here
    shared = [p for p in leftovers if not p.is_relative_to(private)]
    assert shared, "the layout shares no hierarchy between the two pools"
    assert sorted(swept) == sorted(str(p) for p in shared)
    assert not any(p.exists() for p in shared)
    for path in [p for p in leftovers if p.exists()] + [d for d in c.bases().values()]:
        if path.exists() and not any(child.is_dir() for child in path.iterdir()):
            path.rmdir()


SECOND_SERVER = """
import sys, threading
from pathlib import Path
Path(sys.argv[1], "cgroup.procs").write_text("0")  # this "server" lives in another memory cgroup
from sandbox.backends.hardened import HardenedBackend
from sandbox.backends.execute import execute
from sandbox.jobs.build import make_job
backend = HardenedBackend(slots=1, uid_base=int(sys.argv[2]))
job = make_job(sys.argv[3], timing_budget_seconds=0.05, trace=False)
result = execute(backend, job, threading.Event(), lambda kind, data: None).result
print(result.status.value, backend.uid_base, flush=True)
backend.close()
"""


@pytest.mark.slow
def test_two_hardened_servers_on_one_host_both_keep_running_jobs(two_memory_cgroups, tmp_path):
    from sandbox.backends import default_backend_name
    from sandbox.backends.hardened import HardenedBackend
    from sandbox.jobs.build import make_job
    from tests.sandbox.conftest import run_job_on
    from tests.sandbox.hostile_corpus import PASSING_KERNEL

    if default_backend_name() != "hardened":
        pytest.skip("the hardened backend cannot run here")
    _, layout_b = two_memory_cgroups
    job = make_job(PASSING_KERNEL, timing_budget_seconds=0.05, trace=False)
    first = HardenedBackend(slots=1, uid_base=23500)
    try:
        assert run_job_on(first, job).status.value == "passed"
        other = subprocess.run(
            [sys.executable, "-c", SECOND_SERVER, str(layout_b.memory.here), "23500", PASSING_KERNEL],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        status, uid_base = other.stdout.split()
        assert status == "passed", other.stderr[-3000:]
        assert int(uid_base) != first.uid_base  # the second server leased its own slot uids
        # The second pool's start and sweep left the first one whole: it still runs jobs.
        assert run_job_on(first, job).status.value == "passed"
    finally:
        first.close()
