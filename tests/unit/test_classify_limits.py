"""classify() for every limit: each hit is a user-visible status that names the limit and its size."""

import signal

import pytest

from sandbox.limits import GIB, MIB, default_limits
from sandbox.protocol import (
    ErrorInfo,
    Event,
    Execution,
    InterpretOptions,
    Job,
    RunStatus,
    new_event,
)
from sandbox.results.classify import classify
from tests import executions

JOB = Job(
    id="j",
    source="",
    chip="v5p",
    mode="auto",
    options=InterpretOptions(),
    limits=default_limits(
        wall_seconds=10, cpu_seconds=7, memory_bytes=2 * GIB, processes=64, output_kill_bytes=MIB,
        scratch_bytes=16 * MIB,
    ),
)  # fmt: skip
STARTED, DONE = new_event("started", pid=1), new_event("done", peak_rss_bytes=0)


def error(type_: str, message: str) -> Event:
    info = ErrorInfo(type=type_, message=message, traceback="...", line=3, phase="import")
    return new_event("error", error=info)


def execution(*events: Event, **facts) -> Execution:
    return executions.execution(*events, **{"wall_seconds": 2.0, **facts})


FORK_FAILED = error("BlockingIOError", "[Errno 11] Resource temporarily unavailable")
DISK_FULL = error("OSError", "[Errno 28] No space left on device")

# (what happened, facts, status, limit named, words the summary must contain)
TABLE = [
    ("wall clock", execution(STARTED, timed_out=True, signal=signal.SIGKILL),
     RunStatus.TIMEOUT, "wall_seconds", "10 s wall-clock limit"),
    ("CPU time", execution(STARTED, signal=signal.SIGXCPU, cpu_limit_hit=True),
     RunStatus.RESOURCE_LIMIT, "cpu_seconds", "more than 7 s of CPU"),
    ("memory: OOM kill", execution(STARTED, signal=signal.SIGKILL, memory_limit_hit=True),
     RunStatus.RESOURCE_LIMIT, "memory_bytes", "more than 2 GiB"),
    ("output flood", execution(STARTED, output_limit_hit=True, signal=signal.SIGKILL),
     RunStatus.RESOURCE_LIMIT, "output_bytes", "more than 1 MiB"),
    ("processes: fork failed and the job died of it", execution(STARTED, FORK_FAILED, DONE, pids_limit_hit=True),
     RunStatus.RESOURCE_LIMIT, "processes", "more than 64 processes and threads"),
    ("processes: the job was killed after the fork bomb",
     execution(STARTED, pids_limit_hit=True, signal=signal.SIGKILL, timed_out=False),
     RunStatus.RESOURCE_LIMIT, "processes", "64 processes"),
    ("disk: scratch full and the write raised", execution(STARTED, DISK_FULL, DONE, disk_limit_hit=True),
     RunStatus.RESOURCE_LIMIT, "scratch_bytes", "filled its 16 MiB of scratch space"),
    # A program may try a fork or a write, be refused, handle it and finish: that run stands.
    ("processes: refused, handled, finished", execution(STARTED, DONE, pids_limit_hit=True),
     RunStatus.RAN, None, "ran"),
    ("disk: full, handled, finished", execution(STARTED, DONE, disk_limit_hit=True),
     RunStatus.RAN, None, "ran"),
    # Our own stops explain a run better than what the kernel counted meanwhile.
    ("wall clock beats the process count", execution(STARTED, timed_out=True, pids_limit_hit=True),
     RunStatus.TIMEOUT, "wall_seconds", "wall-clock"),
    ("output flood beats a full disk", execution(STARTED, output_limit_hit=True, disk_limit_hit=True),
     RunStatus.RESOURCE_LIMIT, "output_bytes", "output limit"),
    ("memory beats processes", execution(STARTED, memory_limit_hit=True, pids_limit_hit=True),
     RunStatus.RESOURCE_LIMIT, "memory_bytes", "memory limit"),
    ("an infrastructure fault is not the user's", execution(infra_error="the sandbox pool died", pids_limit_hit=True),
     RunStatus.ERROR, None, "internal error: the sandbox pool died"),
]  # fmt: skip


@pytest.mark.parametrize(("what", "facts", "status", "limit", "words"), TABLE, ids=[row[0] for row in TABLE])
def test_classify_names_each_limit(what, facts, status, limit, words):
    result = classify(JOB, facts)
    assert result.status is status, result.summary
    assert result.limit == limit
    assert words in result.summary, result.summary


def test_classify_keeps_the_error_that_the_limit_caused():
    result = classify(JOB, execution(STARTED, FORK_FAILED, DONE, pids_limit_hit=True))
    assert result.error is not None and result.error.type == "BlockingIOError"
    assert "Resource temporarily unavailable" in result.summary


def test_execution_limit_facts_default_to_false():
    facts = execution(STARTED, DONE)
    assert (facts.pids_limit_hit, facts.disk_limit_hit) == (False, False)
