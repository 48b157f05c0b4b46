"""The small interface every sandbox backend implements, lookup by name, and choosing one."""

from __future__ import annotations

import functools
import ipaddress
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


class UnsafeBindError(RuntimeError):
    """The development backend was asked to serve beyond this machine."""


def backend_names() -> tuple[str, ...]:
    """Backends selectable by name; `remote:SOCKET` names the job-runner service as well."""
    return ("hardened", "local")


def create_backend(name: str) -> Backend:
    if name == "local":
        from sandbox.backends.local import LocalBackend

        return LocalBackend()
    if name == "hardened":
        from sandbox.backends.hardened import HardenedBackend

        return HardenedBackend()
    if name.startswith("remote:"):
        # The job-runner service (`python -m sandbox.service`) on a unix socket: remote:/run/runner.sock
        from pathlib import Path

        from sandbox.backends.remote import RemoteBackend

        return RemoteBackend(Path(name.removeprefix("remote:")))
    raise ValueError(f"unknown sandbox backend {name!r}; known: {', '.join(backend_names())}")


@functools.cache
def _capabilities() -> tuple[bool, str]:
    from sandbox.jail.probe import probe

    found = probe()
    return found.ok, found.report()


def default_backend_name() -> str:
    """'hardened' when this machine supports every layer it needs (probed once), else 'local'."""
    return "hardened" if _capabilities()[0] else "local"


def capability_report() -> str:
    """A short line on what the hardened backend uses here, or why it is unavailable."""
    return _capabilities()[1]


def check_bind_allowed(backend_name: str, host: str) -> None:
    """Refuse to serve the development backend on anything but loopback (call at server start-up)."""
    if backend_name != "local" or _is_loopback(host):
        return
    raise UnsafeBindError(
        f"the 'local' sandbox backend runs submitted code unjailed, as the server's own user, so it "
        f"only serves on loopback; refusing to bind {host!r}. Use the 'hardened' backend "
        f"({capability_report()}) or bind 127.0.0.1."
    )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
