"""Host side of the sandbox: ways to run one job in isolation, behind the `Backend` interface.

Runs in the server (or the job-runner service, or the CLI) and never imports JAX. This module is the
registry: backends by name, the default for this machine, and the rule that the development backend
serves only on loopback.

    base.py      Backend and EventSink: the interface, nothing else
    watch.py     Watch: one job's pipes and deadline, seen from outside (every backend uses it)
    runtimes.py  one backend per JAX runtime behind one interface (`create_backend` returns it)
    local.py     a plain subprocess with rlimits (development only)
    hardened.py  jobs forked from a warm pool inside bubblewrap (`sandbox.jail`); slots.py its slots
    remote.py    a client of the job-runner service; service.py is that service
"""

from __future__ import annotations

import functools
import ipaddress
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sandbox.backends.base import Backend, BackendHealth, EventSink
from sandbox.host.runtimes import RuntimeInfo, RuntimeSet, discover


class UnsafeBindError(RuntimeError):
    """The development backend was asked to serve beyond this machine."""


def backend_names() -> tuple[str, ...]:
    """Backends selectable by name; `remote:SOCKET` names the job-runner service as well."""
    return ("hardened", "local")


def create_backend(name: str, runtimes: RuntimeSet | None = None, **hardened: Any) -> Backend:
    """The backend `name`, running every JAX runtime of `runtimes` (default: those installed here).

    `hardened`: options of each runtime's `HardenedBackend` (the job-runner service sets slots)."""
    if name in ("local", "hardened"):
        from sandbox.backends.runtimes import RuntimeBackend

        found = runtimes or discover()
        if name == "local":
            return RuntimeBackend(name, found, _local, _local_problem)
        return RuntimeBackend(name, found, _hardened(found, **hardened), _jail_problem)
    if name.startswith("remote:"):
        # The job-runner service (`python -m sandbox.backends.service`) on a unix socket.
        from sandbox.backends.remote import RemoteBackend

        return RemoteBackend(Path(name.removeprefix("remote:")))
    raise ValueError(f"unknown sandbox backend {name!r}; known: {', '.join(backend_names())}")


def _local(runtime: RuntimeInfo) -> Backend:
    from sandbox.backends.local import LocalBackend

    return LocalBackend(python=str(runtime.python))


def _local_problem(runtime: RuntimeInfo) -> str | None:
    return None if runtime.python.exists() else f"its interpreter {runtime.python} is missing"


def _jail_runtime(runtime: RuntimeInfo):  # -> sandbox.jail.runtime.Runtime | None
    """The job runtime a pool of `runtime` runs in, checked against its own JAX, not the server's."""
    from sandbox.jail.runtime import Runtime

    pins = (("jax", runtime.name), ("jaxlib", runtime.jaxlib))
    return Runtime(runtime.jail_prefix, pins=pins) if runtime.jail_prefix else None


def _jail_problem(runtime: RuntimeInfo) -> str | None:
    jail = _jail_runtime(runtime)
    return jail.problem() if jail is not None else None


def _hardened(runtimes: RuntimeSet, **options: Any) -> Callable[[RuntimeInfo], Backend]:
    """A pool per runtime, all sharing the first one's table of slots (CPU and chips)."""
    from sandbox.backends.hardened import HardenedBackend
    from sandbox.backends.slots import SlotTable

    shared: list[SlotTable] = []

    def make(runtime: RuntimeInfo) -> Backend:
        table = shared[0] if shared else None
        backend = HardenedBackend(runtime=_jail_runtime(runtime), slot_table=table, **options)
        shared[:1] = [backend.table]
        return backend

    return make


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
