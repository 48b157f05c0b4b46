"""Several JAX runtimes behind one `Backend`: each job runs on the runtime it names (`Job.runtime`).

One inner backend per runtime (`sandbox.host.runtimes`): for `local` a child of that runtime's
interpreter, for `hardened` that runtime's own warm pool. The default runtime's backend is made at
once (its health is the server's); the others when their first job comes, so a server whose users
never ask for an older JAX never starts its pool. Before a job goes in, it is told which Pallas names
its runtime lacks and where they exist (`Job.elsewhere`), for the error translator.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable

from sandbox.backends.base import Backend, BackendHealth, EventSink
from sandbox.host.runtimes import RuntimeInfo, RuntimeSet
from sandbox.protocol import Execution, Job, never_ran

log = logging.getLogger(__name__)
# What a user (and `/api/health`) is told of a runtime whose sandbox failed to start; the reason, which
# names install folders, is in the server's log.
NOT_STARTING = "its sandbox could not start on this server (the operator's log says why)"


class RuntimeBackend:
    def __init__(
        self,
        name: str,
        runtimes: RuntimeSet,
        make: Callable[[RuntimeInfo], Backend],
        check: Callable[[RuntimeInfo], str | None] = lambda runtime: None,
    ) -> None:
        """`check`: a cheap look at a runtime's environment (no JAX, no pool), run for every other
        runtime now, so health tells of one that cannot start before a user's run finds out."""
        self.name = name
        self.runtimes = runtimes
        self._make = make
        self._backends: dict[str, Backend] = {}
        self._failed: dict[str, str] = {}
        self._elsewhere: dict[str, dict[str, str]] = {}
        self._lock = threading.Lock()
        self._closed = False
        self.default = self.backend(runtimes.default)
        for runtime in runtimes.runtimes:
            if runtime.name != runtimes.default.name and (problem := check(runtime)):
                log.error("the %s sandbox for jax %s cannot start: %s", name, runtime.name, problem)
                self._failed[runtime.name] = problem

    def backend(self, runtime: RuntimeInfo) -> Backend:
        """The runtime's backend, made on first use (a failure to make it is raised, and retried next time)."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the backend is closed")
            found = self._backends.get(runtime.name)
            if found is None:
                found = self._backends[runtime.name] = self._make(runtime)
                self._failed.pop(runtime.name, None)
            return found

    def run(self, job: Job, on_event: EventSink, cancel: threading.Event) -> Execution:
        runtime = self.runtimes.get(job.runtime)
        if runtime is None:
            installed = ", ".join(self.runtimes.names)
            return never_ran(f"jax {job.runtime} is not installed on this server (installed: {installed})")
        try:
            backend = self.backend(runtime)
        except Exception as exc:
            log.exception("the %s sandbox for jax %s could not start", self.name, runtime.name)
            self._failed[runtime.name] = str(exc)
            return never_ran(f"the sandbox for jax {runtime.name} could not start ({type(exc).__name__})")
        job = dataclasses.replace(job, runtime=runtime.name, elsewhere=self.elsewhere(runtime.name))
        return backend.run(job, on_event, cancel)

    def elsewhere(self, name: str) -> dict[str, str]:
        if name not in self._elsewhere:
            self._elsewhere[name] = self.runtimes.elsewhere(name)
        return self._elsewhere[name]

    def health(self) -> BackendHealth:
        """The default runtime's (every run starts there unless it asks otherwise), with the runtimes
        whose sandbox failed to start as unavailable (in the user's terms; the log has the reasons)."""
        health = self.default.health()
        failed = tuple((name, NOT_STARTING) for name in sorted(self._failed))
        return dataclasses.replace(health, unavailable=failed) if failed else health

    def close(self) -> None:
        with self._lock:
            self._closed = True
            backends = list(self._backends.values())
        for backend in backends:
            backend.close()
