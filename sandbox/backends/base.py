"""The small interface every sandbox backend implements, and lookup by name."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol

from sandbox.protocol import Event, Execution, Job

EventSink = Callable[[Event], None]


class Backend(Protocol):
    name: str

    def run(self, job: Job, on_event: EventSink, cancel: threading.Event) -> Execution:
        """Run `job` to completion (or limit, or cancel), streaming protocol events to `on_event`."""
        ...

    def close(self) -> None: ...


def backend_names() -> tuple[str, ...]:
    return ("local",)


def create_backend(name: str) -> Backend:
    if name == "local":
        from sandbox.backends.local import LocalBackend

        return LocalBackend()
    raise ValueError(f"unknown sandbox backend {name!r}; known: {', '.join(backend_names())}")
