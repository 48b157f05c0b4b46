"""The small interface every sandbox backend implements (and nothing else, so nothing imports a cycle)."""

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
