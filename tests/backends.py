"""One sandbox backend per test session, shared by every test that runs real jobs and does not need
a backend of its own (a fresh one per job was most of the suite's time).

It is the backend a server picks on this machine: the hardened warm pool where every jail layer works
(root, as CI runs), where a job is a fork of a process that already imported JAX; the local backend
elsewhere. `PLAYGROUND_TEST_BACKEND=local` (or `hardened`) forces one. Tests about one backend's own
behaviour (the hostile corpus, pool restarts, the local backend's rlimits) still make their own.

Servers in the suite get it too; only the session closes it (`tests/conftest.py`, at the end).
"""

from __future__ import annotations

import os
import threading

from sandbox.backends import BackendHealth, EventSink, create_backend, default_backend_name
from sandbox.backends.runtimes import RuntimeBackend
from sandbox.protocol import Execution, Job

SLOTS = 2  # the machine has two cores; more jobs at once only slow each one down
UID_BASE = 24100  # a block of slot uids of its own (leased), apart from a server's default range

_lock = threading.Lock()
_shared: list[Borrowed] = []


def suite_backend_name() -> str:
    return os.environ.get("PLAYGROUND_TEST_BACKEND") or default_backend_name()


def suite_backend() -> Borrowed:
    """The session's backend, made on first use. Always the same object, so every test and app of the
    session shares what a backend keeps (a catalog entry's expected outputs are computed once)."""
    with _lock:
        if not _shared:
            name = suite_backend_name()
            options = {"slots": SLOTS, "uid_base": UID_BASE} if name == "hardened" else {}
            made = create_backend(name, **options)
            assert isinstance(made, RuntimeBackend)
            # Ready before any test uses it: a pool still importing JAX makes health say "unhealthy".
            ready = getattr(made.default, "wait_ready", None)
            assert ready is None or ready(180) is not None, f"the session's {name} pool did not start"
            _shared.append(Borrowed(made))
        return _shared[0]


class Borrowed:
    """The session's backend as tests and apps get it: everything but `close`, which only the session
    does (an app's queue closes its backend when the app stops)."""

    def __init__(self, backend: RuntimeBackend) -> None:
        self._backend = backend
        self.name = backend.name
        self.runtimes = backend.runtimes

    def run(self, job: Job, on_event: EventSink, cancel: threading.Event) -> Execution:
        return self._backend.run(job, on_event, cancel)

    def health(self) -> BackendHealth:
        return self._backend.health()

    def close(self) -> None:
        pass


def hardened_suite_backend() -> Borrowed:
    """The session's backend for a test about the hardened jail; skipped where it cannot run."""
    import pytest

    from sandbox.backends import capability_report

    if suite_backend_name() != "hardened":
        pytest.skip(f"the hardened backend cannot run here: {capability_report()}")
    return suite_backend()


def close_suite_backend() -> None:
    with _lock:
        for borrowed in _shared:
            borrowed._backend.close()
        _shared.clear()
