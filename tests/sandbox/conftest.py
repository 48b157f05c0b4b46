"""Shared by the sandbox tests: run a job through a real backend and classify it, as the server does."""

from __future__ import annotations

import threading
from collections.abc import Callable

from sandbox.backends import Backend, create_backend
from sandbox.classify import classify
from sandbox.protocol import Event, Job, RunResult


def run_job(job: Job, backend: str = "local", on_event: Callable[[Event], None] | None = None) -> RunResult:
    """`job` through a fresh backend of that name, then `classify`: what a user would get back."""
    runner = create_backend(backend)
    try:
        return run_job_on(runner, job, on_event)
    finally:
        runner.close()


def run_job_on(backend: Backend, job: Job, on_event: Callable[[Event], None] | None = None) -> RunResult:
    """`job` through a backend the caller owns, then `classify`."""
    return classify(job, backend.run(job, on_event or (lambda event: None), threading.Event()))


def line_of(source: str, text: str) -> int:
    """The 1-based line of the only line of `source` containing `text`."""
    (number,) = [i for i, line in enumerate(source.splitlines(), start=1) if text in line]
    return number
