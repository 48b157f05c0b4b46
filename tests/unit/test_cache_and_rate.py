import dataclasses

from sandbox.limits import default_limits
from sandbox.protocol import InterpretOptions, Job, RunResult, RunStatus
from server.queue.cache import ResultCache, cache_ref, job_key
from server.ratelimit import RateLimiter

JOB = Job(id="a", source="x", chip="v5p", mode="auto", options=InterpretOptions(), limits=default_limits())


def result(status: RunStatus) -> RunResult:
    return RunResult(
        status=status, summary=status.value, chip="v5p", mode="interpret", options=InterpretOptions()
    )


def test_job_key_ignores_the_run_id_but_not_the_inputs():
    assert job_key(JOB, "jax==1") == job_key(dataclasses.replace(JOB, id="b"), "jax==1")
    assert job_key(JOB, "jax==1") != job_key(JOB, "jax==2")
    assert job_key(JOB, "v") != job_key(
        dataclasses.replace(JOB, options=InterpretOptions(detect_races=True)), "v"
    )


def test_cache_returns_flagged_copies_and_skips_load_dependent_outcomes():
    cache = ResultCache(2)
    cache.put("k1", "run1", result(RunStatus.PASSED))
    cache.put("k2", "run2", result(RunStatus.TIMEOUT))
    hit = cache.get("k1")
    assert hit.cached_from == cache_ref("run1") and hit.status == RunStatus.PASSED
    assert "run1" not in hit.cached_from and cache_ref("run1") != cache_ref("run2")
    assert cache.get("k2") is None


def test_cache_evicts_least_recently_used():
    cache = ResultCache(2)
    for k in ("a", "b"):
        cache.put(k, k, result(RunStatus.PASSED))
    cache.get("a")
    cache.put("c", "c", result(RunStatus.PASSED))
    assert cache.get("b") is None and cache.get("a") and cache.get("c")


def test_rate_limiter_allows_a_burst_then_the_rate():
    now = [0.0]
    limiter = RateLimiter(per_minute=60, burst=2, clock=lambda: now[0])
    assert [limiter.take("c") for _ in range(3)] == [0, 0, 1]
    now[0] += 1.0
    assert limiter.take("c") == 0
    assert limiter.take("other") == 0  # buckets are per client


def test_rate_limiter_zero_means_unlimited():
    limiter = RateLimiter(per_minute=0, burst=0)
    assert all(limiter.take("c") == 0 for _ in range(100))


def test_kept_runs_forget_the_heaviest_address_first():
    from server.queue.kept import KeptRun, to_forget

    victim = KeptRun("v", "192.0.2.1", 100)
    flood = [KeptRun(f"f{i}", "6.6.6.6", 100) for i in range(5)]
    assert to_forget([victim, *flood], most_runs=4, most_bytes=10**9) == ["f0", "f1"]
    assert to_forget([victim, *flood], most_runs=99, most_bytes=350) == ["f0", "f1", "f2"]
    assert to_forget([KeptRun("big", "a", 10**6)], most_runs=5, most_bytes=10) == []  # the newest stays
