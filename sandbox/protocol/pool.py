"""The messages between the hardened backend (host side) and its sandbox pool (inside the jail).

They travel as JSON objects with an `op` over a Unix socket that also passes the job's pipes
(`sandbox.jail.channel`). Typed both ways and decoded strictly (unknown ops and fields, wrong types
are a `DecodeError`), so a misspelt field is an error where it is read, not a silent zero.

    host → pool   StartJob (with the job's four pipe ends), KillJob
    pool → host   PoolReady (once), JobSpawned, JobExited (what the kernel counted for the job)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sandbox.protocol.codec import DecodeError, from_json_dict, to_json_dict
from sandbox.protocol.job import Limits


@dataclass(frozen=True)
class PoolReady:
    swept: tuple[str, ...]  # what a dead predecessor left behind, cleaned up at start
    cgroups: str  # the cgroup layout in use, for the log
    pid: int


@dataclass(frozen=True)
class StartJob:
    job: str
    slot: int
    limits: Limits
    devices: int = 1


@dataclass(frozen=True)
class KillJob:
    job: str


@dataclass(frozen=True)
class JobSpawned:
    job: str


@dataclass(frozen=True)
class JobExited:
    """A job's end: how its process ended and what the kernel counted; `setup_error` when it never
    started (the pool could not set it up)."""

    job: str
    exit_code: int | None = None
    signal: int | None = None
    max_rss_bytes: int = 0
    cpu_seconds: float = 0.0
    oom_kills: int = 0
    pids_limit_hits: int = 0
    memory_peak_bytes: int = 0
    scratch_full: bool = False
    scratch_used_bytes: int = 0
    setup_error: str | None = None
    leftovers: tuple[str, ...] = ()
    # The slot named still holds a job the host no longer watches: the host holds the slot out.
    slot_busy: bool = False


PoolMessage = PoolReady | StartJob | KillJob | JobSpawned | JobExited
OPS: dict[str, type[Any]] = {
    "ready": PoolReady,
    "run": StartJob,
    "kill": KillJob,
    "spawned": JobSpawned,
    "exit": JobExited,
}
_OP_OF = {cls: op for op, cls in OPS.items()}


def encode(message: PoolMessage) -> dict[str, Any]:
    return {"op": _OP_OF[type(message)], **to_json_dict(message)}


def decode(raw: dict[str, Any]) -> PoolMessage:
    """A message of a known op with exactly its fields, or `DecodeError`."""
    fields = dict(raw)
    op = fields.pop("op", None)
    cls = OPS.get(op) if isinstance(op, str) else None
    if cls is None:
        raise DecodeError(f"pool message: unknown op {op!r}")
    message: PoolMessage = from_json_dict(cls, fields)
    return message
