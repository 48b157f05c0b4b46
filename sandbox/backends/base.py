"""The small interface every sandbox backend implements (and nothing else, so nothing imports a cycle)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from sandbox.protocol import Event, Execution, Job

EventSink = Callable[[Event], None]


class StopJob(Exception):
    """Raised by an `EventSink` to end the job now (what it sent cannot be checked): the backend
    stops it, frees its slot, and reports the message as the execution's `report_error`."""


@dataclass(frozen=True)
class BackendHealth:
    """Whether the backend can run jobs now, and what went wrong on the way."""

    ok: bool
    detail: str = ""
    restarts: int = 0  # times the backend replaced a broken part of itself (e.g. its pool)
    quarantined_slots: int = 0  # slots taken out of service by a job that could not be stopped
    # Runtimes that cannot run jobs now: (jax version, why in the user's terms; no paths, no internal
    # names: those go to the log).
    unavailable: tuple[tuple[str, str], ...] = ()


class Backend(Protocol):
    name: str

    def run(self, job: Job, on_event: EventSink, cancel: threading.Event) -> Execution:
        """Run `job` to completion (or limit, or cancel), streaming protocol events to `on_event`."""
        ...

    def health(self) -> BackendHealth:
        """Cheap: called by every `/api/health` request."""
        ...

    def close(self) -> None: ...
