"""Bounds under abuse through Redis and a worker (#28): cache hits are runs for the rate limits and
hand out no run id; a job flooding progress events leaves a bounded stream and bounded Redis memory."""

from __future__ import annotations

import uuid

import redis

from tests.api.fakes import FloodBackend
from tests.scale.conftest import web, worker
from tests.scale.helpers import SOURCE, sse, wait_done, wait_for

PROXY = "10.0.0.5"


def post(client, address: str, browser: str, source: str = SOURCE):
    headers = {"X-Forwarded-For": address, "X-Playground-Client": browser}
    return client.post("/api/runs", json={"source": source}, headers=headers)


def test_cache_hits_count_against_both_rate_limits(redis_service, prefix, tmp_path):
    limits = {"trusted_proxies": PROXY, "rate_per_minute": 6, "rate_burst": 4}
    with worker(redis_service, prefix), web(redis_service, prefix, tmp_path, peer=PROXY, **limits) as a:
        wait_done(a, post(a, "6.6.6.6", "me").json()["id"])
        statuses = [post(a, "6.6.6.6", "me").status_code for _ in range(10)]
        assert statuses == [201] * 3 + [429] * 7
        refused = post(a, "6.6.6.6", "me")
        assert refused.headers["content-type"] == "application/problem+json"
        assert int(refused.headers["retry-after"]) >= 1
        minted = [post(a, "6.6.6.6", uuid.uuid4().hex).status_code for _ in range(40)]
        assert minted.count(429) > 0  # the address's bucket (burst 30) holds across minted ids


def test_cached_from_opens_nothing(redis_service, prefix, tmp_path):
    with worker(redis_service, prefix), web(redis_service, prefix, tmp_path) as a:
        first = a.post("/api/runs", json={"source": SOURCE}).json()["id"]
        wait_done(a, first)
        hit = a.post("/api/runs", json={"source": SOURCE}).json()["id"]
        reference = wait_done(a, hit)["result"]["cached_from"]
        assert reference and first not in reference
        assert a.get(f"/api/runs/{reference}").status_code == 404
        assert a.delete(f"/api/runs/{reference}").status_code == 404


def test_a_progress_flood_leaves_redis_bounded(redis_service, prefix, tmp_path):
    db = redis.Redis.from_url(redis_service.url)
    with worker(redis_service, prefix, FloodBackend()), web(redis_service, prefix, tmp_path) as a:
        wait_done(a, a.post("/api/runs", json={"source": "warm up"}).json()["id"], timeout=60)
        before = db.info("memory")["used_memory"]
        run_id = a.post("/api/runs", json={"source": "flood"}).json()["id"]
        wait_done(a, run_id, timeout=60)
        stream = f"{prefix}run:{run_id}:ev"
        wait_for(lambda: db.xlen(stream) > 0, what="the run's stream")
        grown = db.info("memory")["used_memory"] - before
        kinds = [kind for _, kind, _ in sse(a, run_id)]
        assert "progress" not in kinds and kinds[-1] == "done"
        assert db.xlen(stream) < 10
        # Unbounded, this run held 11 × 4 MiB of progress in its stream; now a few kilobytes.
        assert grown < 1 << 20, grown
        assert db.ttl(stream) > 0
