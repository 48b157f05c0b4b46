"""The server's view of the JAX runtimes: which are installed, choosing one for a request, what a
share records of it, and the runs of one kernel on several of them (a matrix).

The runtimes are read from files (`sandbox.host.runtimes.discover`), never by importing JAX. A matrix is a
list of ordinary runs, one per runtime, submitted through the one run queue (its fairness, limits, cache); it
only remembers their ids, so it needs nothing of the queue's internals.
"""

from __future__ import annotations

import collections
import secrets
import threading
from dataclasses import dataclass

from sandbox.host.runtimes import RuntimeInfo, RuntimeSet, default_dir, discover
from server.problems import ProblemError
from server.settings import Settings
from server.wire.runtimes import FeatureOut, RuntimeOut

# Matrices kept for `GET /api/matrices/{id}` (their runs are kept by the queue, as every run is).
MATRICES_KEPT = 200


def load(settings: Settings) -> RuntimeSet:
    return discover(settings.runtimes_dir or default_dir())


def choose(runtimes: RuntimeSet, name: str | None, field: str = "runtime") -> RuntimeInfo:
    """The runtime a request names (None: the default), or a 422 naming the installed ones."""
    found = runtimes.get(name or "")
    if found is None:
        raise ProblemError(
            422,
            "Unknown runtime",
            f"jax {name} is not installed on this server; installed: {', '.join(runtimes.names)}",
            field=field,
        )
    return found


def versions(runtime: RuntimeInfo) -> dict[str, str | None]:
    """What a share or lesson records of the runtime it was made on (as `server.versions.RECORDED`)."""
    return {
        "python": runtime.python_version or None,
        "jax": runtime.name,
        "jaxlib": runtime.jaxlib,
        "libtpu": runtime.libtpu,
    }


def reopen(runtimes: RuntimeSet, made_on: str | None) -> tuple[str, str]:
    """The runtime a link made on jax `made_on` opens on, and a note when it is not that one."""
    if not made_on:
        return runtimes.default.name, ""
    if runtimes.get(made_on) is not None:
        return made_on, ""
    nearest = runtimes.nearest(made_on).name
    return nearest, (
        f"This link was made on jax {made_on}, which this server does not have; it opens on the nearest "
        f"installed version, jax {nearest}."
    )


def public(runtimes: RuntimeSet, unavailable: dict[str, str] | None = None) -> list[RuntimeOut]:
    """The runtimes as `/api/runtimes` lists them; `unavailable`: jax version → why runs cannot start."""
    down = unavailable or {}
    return [
        RuntimeOut(
            name=r.name,
            jax=r.name,
            jaxlib=r.jaxlib,
            python=r.python_version,
            libtpu=r.libtpu,
            default=r is runtimes.default,
            features={k: FeatureOut(available=f.available, detail=f.detail) for k, f in r.features.items()},
            available=r.name not in down,
            unavailable_reason=down.get(r.name),
        )
        for r in runtimes.runtimes
    ]


@dataclass(frozen=True)
class Matrix:
    id: str
    runs: tuple[tuple[str, str], ...]  # (runtime, run id), oldest runtime first
    skipped: tuple[tuple[str, str], ...] = ()  # (runtime, why): runtimes that cannot run jobs now


class Matrices:
    """The matrices made lately, by id (a bounded in-memory table, like the queue's finished runs)."""

    def __init__(self, kept: int = MATRICES_KEPT) -> None:
        self.kept = kept
        self._items: collections.OrderedDict[str, Matrix] = collections.OrderedDict()
        self._lock = threading.Lock()

    def add(self, runs: list[tuple[str, str]], skipped: tuple[tuple[str, str], ...] = ()) -> Matrix:
        matrix = Matrix(secrets.token_urlsafe(12), tuple(runs), skipped)
        with self._lock:
            self._items[matrix.id] = matrix
            while len(self._items) > self.kept:
                self._items.popitem(last=False)
        return matrix

    def get(self, matrix_id: str) -> Matrix | None:
        with self._lock:
            return self._items.get(matrix_id)
