"""Host side of the sandbox: ways to run one job in isolation, behind the `Backend` interface.

Runs in the server (or the job-runner service, or the CLI) and never imports JAX. This module is the
registry: backends by name, the default for this machine, and the rule that the development backend
serves only on loopback.

    base.py      Backend and EventSink: the interface, nothing else
    watch.py     Watch: one job's pipes and deadline, seen from outside (every backend uses it)
    local.py     a plain subprocess with rlimits (development only)
    hardened.py  jobs forked from a warm pool inside bubblewrap (`sandbox.jail`)
    remote.py    a client of the job-runner service; service.py is that service
"""

from __future__ import annotations

import functools
import ipaddress
from pathlib import Path

from sandbox.backends.base import Backend, BackendHealth, EventSink


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
        # The job-runner service (`python -m sandbox.backends.service`) on a unix socket.
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


__all__ = [
    "Backend",
    "BackendHealth",
    "EventSink",
    "UnsafeBindError",
    "backend_names",
    "capability_report",
    "check_bind_allowed",
    "create_backend",
    "default_backend_name",
]
