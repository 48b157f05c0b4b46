"""Shared by the sandbox tests: run a job through a real backend and classify it, as the server does."""

from __future__ import annotations

import threading
from collections.abc import Callable

from sandbox.backends import create_backend
from sandbox.classify import classify
from sandbox.protocol import Event, Job, RunResult


def run_job(job: Job, backend: str = "local", on_event: Callable[[Event], None] | None = None) -> RunResult:
    """`job` through a fresh backend of that name, then `classify`: what a user would get back."""
    runner = create_backend(backend)
    try:
        execution = runner.run(job, on_event or (lambda event: None), threading.Event())
        return classify(job, execution)
    finally:
        runner.close()


def line_of(source: str, text: str) -> int:
    """The 1-based line of the only line of `source` containing `text`."""
    (number,) = [i for i, line in enumerate(source.splitlines(), start=1) if text in line]
    return number
