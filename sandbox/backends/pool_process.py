"""The warm pool as a process the backend holds: start it under bubblewrap, talk to it, stop it.

`PoolProcess` is the backend's half of the control channel (`sandbox.jail.channel`) and the table
of jobs waiting for the pool's replies; the backend's keeper thread reads the channel and
dispatches each reply to its job's `Waiter`.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox.jail import channel, outer
from sandbox.jail.runtime import Runtime
from sandbox.limits import JOB_NICE, NICE
from sandbox.protocol.codec import DecodeError
from sandbox.protocol.pool import JobExited, JobSpawned, KillJob, PoolReady, StartJob, decode, encode

log = logging.getLogger(__name__)


@dataclass
class Waiter:
    """One job's view of the pool's replies."""

    spawned: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    exit: JobExited | None = None
    infra_error: str | None = None


class PoolProcess:
    """One running pool process and its half of the channel."""

    def __init__(self, proc: subprocess.Popen[bytes], sock: Any, ns_init_pid: int, token: str) -> None:
        self.proc, self.sock, self.ns_init_pid, self.token = proc, sock, ns_init_pid, token
        self.waiters: dict[str, Waiter] = {}
        self.lock = threading.Lock()
        self.ready: PoolReady | None = None

    def submit(self, message: StartJob, fds: tuple[int, ...]) -> Waiter:
        waiter = Waiter()
        with self.lock:
            self.waiters[message.job] = waiter
            channel.send(self.sock, encode(message), fds)
        return waiter

    def kill(self, job_id: str) -> None:
        # If the pool is gone, so is the job's pid namespace: nothing left to kill.
        with self.lock, contextlib.suppress(OSError):
            channel.send(self.sock, encode(KillJob(job=job_id)))

    def dispatch(self, raw: dict[str, Any]) -> None:
        try:
            message = decode(raw)
        except DecodeError as exc:
            log.error("sandbox pool sent an unreadable message: %s", exc)
            return
        if not isinstance(message, JobSpawned | JobExited):
            return
        with self.lock:
            waiter = self.waiters.get(message.job)
            if waiter is None:
                return
            if isinstance(message, JobSpawned):
                waiter.spawned.set()
            else:
                waiter.exit = message
                del self.waiters[message.job]
                waiter.done.set()

    def fail_all(self, reason: str) -> None:
        with self.lock:
            for waiter in self.waiters.values():
                waiter.infra_error = reason
                waiter.done.set()
            self.waiters.clear()

    def host_pid(self) -> int:
        """The pool's pid as the host sees it (it is pid 1 of its own namespace)."""
        return self.ns_init_pid


def start_pool_process(
    runtime: Runtime, sandbox_dir: Path, config: dict[str, Any], device_nodes: Sequence[str] = ()
) -> PoolProcess:
    """Spawn the pool under bwrap with `config` (plus its end of a fresh control channel), with the
    TPU chips' `device_nodes` of its chip slots."""
    parent, child = channel.pair()
    info_r, info_w = os.pipe()
    config = {**config, "control_fd": child.fileno()}
    # The pool and every job it forks run at a lower CPU weight than the server (`limits.JOB_NICE`).
    pool_argv = outer.command(runtime, sandbox_dir, info_w, "sandbox.jail.pool", config, device_nodes)
    argv = [NICE, "-n", str(JOB_NICE), *pool_argv]
    try:
        proc = subprocess.Popen(
            argv,
            pass_fds=(child.fileno(), info_w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env={},
        )
    finally:
        child.close()
        os.close(info_w)
    with os.fdopen(info_r) as info:
        ns_init_pid = int(json.loads(info.read() or "{}").get("child-pid", 0))
    pool = PoolProcess(proc, parent, ns_init_pid, config["token"])
    threading.Thread(target=_log_stderr, args=(proc,), name="sandbox-pool-stderr", daemon=True).start()
    return pool


def kill_pool(pool: PoolProcess) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pool.host_pid(), signal.SIGKILL)


def _log_stderr(proc: subprocess.Popen[bytes]) -> None:
    assert proc.stderr is not None
    for line in proc.stderr:
        log.warning("sandbox pool: %s", line.decode(errors="replace").rstrip()[:2000])


def stop_process(proc: subprocess.Popen[bytes], graceful: bool) -> None:
    try:
        proc.wait(timeout=10 if graceful else 0.5)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
