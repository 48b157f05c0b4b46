"""Shared by the sandbox tests: run a job through a real backend and classify it, as the server does."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from sandbox.backends import Backend, create_backend
from sandbox.backends.execute import execute
from sandbox.protocol import Event, Job, RunResult, to_json_dict
from tests.backends import suite_backend


def run_job(
    job: Job, backend: str | None = None, on_event: Callable[[Event], None] | None = None
) -> RunResult:
    """`job` checked and classified, as a user would get it back: through the session's backend
    (`tests.backends`: the hardened warm pool where it works), or a fresh backend of the name given."""
    if backend is None:
        return run_job_on(suite_backend(), job, on_event)
    runner = create_backend(backend)
    try:
        return run_job_on(runner, job, on_event)
    finally:
        runner.close()


def run_job_on(backend: Backend, job: Job, on_event: Callable[[Event], None] | None = None) -> RunResult:
    """`job` through a backend the caller owns, checked and classified as the server does
    (`sandbox.backends.execute`); `on_event` sees what a follower of the run would see."""
    forward = (lambda kind, data: on_event(Event(kind, data))) if on_event else (lambda kind, data: None)
    return execute(backend, job, threading.Event(), forward).result


def run_jobs(jobs: Sequence[Job], slots: int = 2) -> list[RunResult]:
    """Several jobs through the session's backend, `slots` at a time (the machine has two cores)."""
    with ThreadPoolExecutor(max_workers=slots) as pool:
        return list(pool.map(run_job, jobs))


def line_of(source: str, text: str) -> int:
    """The 1-based line of the only line of `source` containing `text`."""
    (number,) = [i for i, line in enumerate(source.splitlines(), start=1) if text in line]
    return number


# What must never reach a user, in any field (IR texts and outputs included): paths of the server, the
# harness or site-packages, JAX's internal modules and its advice.
INTERNAL = re.compile(
    r"site-packages|\.venv|/work/|/tmp/|/root/|/home/|/usr/|sandbox[/.]harness|jax/_src|JAX_TRACEBACK_FILTERING"
)
# What a message (summary, error, case notes) must not be written in: the interpreter's callback
# wrapper, its buffer ids, JAX's internal names for blocks and operands.
JARGON = re.compile(r"CpuCallback|\(\d+ \d+ (?:hbm|vmem|smem|any) \d+\)|Blocked\(|args\[\d+\]|`swap`")
# Frames a user may see: their own file's.
FRAME = re.compile(r'File "([^"]+)", line \d+')


def assert_nothing_internal(name: str, result: RunResult) -> None:
    """Every field of `result` is free of internal paths; what it says is free of internal jargon."""
    text = json.dumps(to_json_dict(result), ensure_ascii=False)
    leak = INTERNAL.search(text)
    assert leak is None, f"{name}: {leak.group(0)!r} in {text[max(0, leak.start() - 200) : leak.end() + 200]}"
    frames = set(FRAME.findall(text))
    assert frames <= {"kernel.py"}, f"{name}: frames of {frames - {'kernel.py'}}"
    errors = [e for e in (result.error, result.lowering.error if result.lowering else None) if e]
    said = [result.summary, *(c.note for c in result.cases), *(e.message for e in errors)]
    jargon = JARGON.search("\n".join([*said, *(e.traceback for e in errors)]))
    assert jargon is None, f"{name}: {jargon.group(0)!r} in what it says"
