"""The multi-host shape in processes: two web servers and two workers sharing one Redis, then the
faults: a worker killed mid-job, a web server killed mid-stream, Redis stopped and started again.
Jobs are a trivial scratch file through the `local` backend (one through `hardened`)."""

from __future__ import annotations

import concurrent.futures
import contextlib
import time
from collections.abc import Iterator

import pytest
import redis

from sandbox.backends import default_backend_name
from tests.scale.deployment import Deployment, Process, follow, get, request

pytestmark = pytest.mark.slow

TRIVIAL = "def make_inputs(seed):\n    return (1,)\n\n\ndef kernel(x):\n    return x\n"
SLOW = "import time\n\ntime.sleep(4)\n\n" + TRIVIAL


@contextlib.contextmanager
def deployment(
    redis_service, prefix, tmp_path, webs: int = 2, workers: int = 2, backend: str = "local", slots: int = 1
) -> Iterator[tuple[Deployment, list[Process]]]:
    d = Deployment(redis_service.url, prefix, tmp_path)
    try:
        servers = [d.web(f"web{i}", worker_grace_seconds="30") for i in range(webs)]
        for i in range(workers):
            d.worker(f"worker{i}", backend=backend, slots=slots)
        for server in servers:
            d.wait_web(server)
        d.wait_workers(servers[0], workers)
        yield d, servers
    finally:
        d.close()


def submit(web: Process, source: str, tag: str) -> str:
    status, body, _ = request(web, "POST", "/api/runs", {"source": f"{source}# {tag}\n", "fresh": True})
    assert status == 201, body
    return body["id"]


def holder(redis_service, prefix: str, run_id: str) -> str | None:
    return redis.Redis.from_url(redis_service.url, decode_responses=True).hget(
        f"{prefix}run:{run_id}", "worker"
    )


def test_runs_submitted_round_robin_are_followed_on_the_other_server(redis_service, prefix, tmp_path):
    with deployment(redis_service, prefix, tmp_path) as (_, (a, b)):
        runs = [(submit((a, b)[i % 2], TRIVIAL, f"run {i}"), (b, a)[i % 2]) for i in range(4)]
        with concurrent.futures.ThreadPoolExecutor(4) as pool:
            streams = list(pool.map(lambda r: follow(r[1], r[0]), runs))
        for events in streams:
            assert events[-1][1] == "done" and events[-1][2]["status"] == "ran", events[-1]
            assert [k for _, k, _ in events].count("done") == 1
        assert {holder(redis_service, prefix, run_id) for run_id, _ in runs} == {"worker0", "worker1"}


def test_a_worker_killed_mid_job_its_run_completes_on_the_other(redis_service, prefix, tmp_path):
    with deployment(redis_service, prefix, tmp_path) as (d, (a, _)):
        run_id = submit(a, SLOW, "doomed")
        deadline = time.monotonic() + 60
        while (name := holder(redis_service, prefix, run_id)) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        victim = next(p for p in d.processes if p.name == name)
        victim.kill()
        events = follow(a, run_id)
        assert events[-1][2]["status"] == "ran"
        assert [e[2]["attempt"] for e in events if e[1] == "running"] == [1, 2]
        assert holder(redis_service, prefix, run_id) != name
        # No slot is left stuck: the survivor is idle and runs the next job.
        assert follow(a, submit(a, TRIVIAL, "after"))[-1][2]["status"] == "ran"
        deadline = time.monotonic() + 5  # busy slots are reported by heartbeats (every 0.3 s here)
        while (pools := get(a, "/api/health")[1]["pools"])[0]["busy"] and time.monotonic() < deadline:
            time.sleep(0.1)
        assert [(p["workers"], p["busy"], p["queued"]) for p in pools] == [(1, 0, 0)]


def test_a_web_server_killed_mid_stream_the_client_resumes_on_the_other(redis_service, prefix, tmp_path):
    with deployment(redis_service, prefix, tmp_path) as (_, (a, b)):
        run_id = submit(a, SLOW, "stream")
        first = [e for e in follow(a, run_id, stop_after=2) if e[0]]
        a.kill()
        rest = follow(b, run_id, last_id=first[-1][0])
        seen = [e[:2] for e in first] + [e[:2] for e in rest if e[0]]
        assert len({i for i, _ in seen}) == len(seen), "an event was sent twice"
        # Once done, the kept log is the milestones: live-only `progress` events seen on the way are gone.
        every = [e[:2] for e in follow(b, run_id) if e[0]]
        assert [e for e in seen if e[1] != "progress"] == every
        assert rest[-1][1] == "done" and rest[-1][2]["status"] == "ran"


def test_redis_stopped_answers_503_never_500_and_recovers(redis_service, prefix, tmp_path):
    with deployment(redis_service, prefix, tmp_path, workers=1) as (d, (a, b)):
        redis_service.stop()
        try:
            status, body, headers = request(a, "POST", "/api/runs", {"source": TRIVIAL})
            assert status == 503 and int(headers["Retry-After"]) >= 1, body
            assert body["title"] == "Queue unavailable"
            assert get(b, "/api/health")[0] == 503
            assert "unreachable" in get(b, "/api/health")[1]["problems"][0]
            assert get(a, "/api/runs/AAAAAAAAAAAAAAAAAAAAAA")[0] == 503
        finally:
            redis_service.start()
        d.wait_workers(a, 1, seconds=30)
        assert follow(b, submit(a, TRIVIAL, "after the outage"))[-1][2]["status"] == "ran"
        for web in (a, b):  # the access logs: answers, never a server error
            assert '" 500' not in web.log.read_text() and "Traceback" not in web.log.read_text()


@pytest.mark.skipif(
    default_backend_name() != "hardened", reason="this machine cannot run the hardened backend"
)
def test_a_worker_runs_jobs_in_the_hardened_sandbox(redis_service, prefix, tmp_path):
    with deployment(redis_service, prefix, tmp_path, webs=1, workers=1, backend="hardened", slots=2) as (
        d,
        (a,),
    ):
        result = follow(a, submit(a, TRIVIAL, "jailed"))[-1][2]
        assert result["status"] == "ran", result
        # With a reference, a second job checks it; a free slot lets it run beside the kernel's job.
        checked = follow(a, submit(a, TRIVIAL + "\n\ndef reference(x):\n    return x\n", "checked"))[-1][2]
        assert checked["status"] == "passed", checked
        worker_log = next(p for p in d.processes if p.name == "worker0").log.read_text()
        assert "its reference's job runs beside it, in a free slot" in worker_log
