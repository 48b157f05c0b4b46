"""The `local` backend: one fresh `python -I` child per job, rlimits, wall clock, capped output.

For development only: it isolates crashes, hangs, floods and memory bombs, but not the filesystem or
the network (the hardened backend does). The child runs in its own session, so a timeout or cancel
kills the whole process group; output and protocol events are read with one non-blocking loop, so a
grandchild that keeps a pipe open can never make the parent wait past the deadline.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

from sandbox.backends.base import EventSink
from sandbox.protocol import Event, Execution, Job, from_json_dict, to_json_dict

# How long to keep reading pipes after the child exited (a grandchild may still hold them).
DRAIN_SECONDS = 0.5
POLL_SECONDS = 0.05
# Environment variables passed through to the child; everything else is dropped.
PASS_THROUGH_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "LANG", "LC_ALL")


class LocalBackend:
    name = "local"

    def __init__(self, python: str = sys.executable) -> None:
        self.python = python

    def run(self, job: Job, on_event: EventSink, cancel: threading.Event) -> Execution:
        scratch = tempfile.mkdtemp(prefix="playground-job-")
        try:
            return _Child(self.python, job, scratch, on_event, cancel).run()
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def close(self) -> None:
        pass


def child_env(job: Job, scratch: str) -> dict[str, str]:
    env = {k: os.environ[k] for k in PASS_THROUGH_ENV if k in os.environ}
    env.update(PATH="/usr/bin:/bin", HOME=scratch, TMPDIR=scratch)
    if job.devices > 1:
        # Must be set before JAX initialises its CPU backend; user code cannot change it later.
        env["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={job.devices}"
    return env


class _Capped:
    """Keeps the first `keep` bytes of a stream and counts the rest."""

    def __init__(self, keep: int) -> None:
        self.keep = keep
        self.data = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self.keep - len(self.data)
        if room > 0:
            self.data += chunk[:room]

    @property
    def truncated(self) -> bool:
        return self.total > self.keep

    def text(self) -> str:
        return self.data.decode("utf-8", errors="replace")


class _Child:
    def __init__(self, python: str, job: Job, scratch: str, on_event: EventSink, cancel: threading.Event):
        self.job, self.on_event, self.cancel = job, on_event, cancel
        self.limits = job.limits
        read_fd, self.write_fd = os.pipe()
        self.report = os.fdopen(read_fd, "rb", buffering=0)
        self.proc = subprocess.Popen(
            [python, "-I", "-u", "-m", "sandbox.harness", str(self.write_fd)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(self.write_fd,),
            start_new_session=True,
            cwd=scratch,
            env=child_env(job, scratch),
        )
        os.close(self.write_fd)
        self.stdout, self.stderr = _Capped(self.limits.output_bytes), _Capped(self.limits.output_bytes)
        self.events: list[Event] = []
        self.pending = b""
        self.rusage_maxrss = 0
        self.status: int | None = None

    def run(self) -> Execution:
        started = time.monotonic()
        self._send_job()
        timed_out = cancelled = flood = False
        deadline = started + self.limits.wall_seconds
        exited_at: float | None = None
        with selectors.DefaultSelector() as sel:
            for stream in (self.proc.stdout, self.proc.stderr, self.report):
                assert stream is not None
                os.set_blocking(stream.fileno(), False)
                sel.register(stream, selectors.EVENT_READ)
            while sel.get_map():
                for key, _ in sel.select(POLL_SECONDS):
                    self._read(sel, key.fileobj)
                now = time.monotonic()
                if exited_at is None and self._reap():
                    exited_at = now
                if exited_at is not None and now - exited_at > DRAIN_SECONDS:
                    break
                if exited_at is None:
                    if now > deadline:
                        timed_out = True
                    elif self.cancel.is_set():
                        cancelled = True
                    elif self.stdout.total + self.stderr.total > self.limits.output_kill_bytes:
                        flood = True
                    if timed_out or cancelled or flood:
                        self._kill()
                        exited_at = now if self._wait_dead() else None
        self._kill()
        self._wait_dead()
        for stream in (self.proc.stdout, self.proc.stderr, self.report):
            assert stream is not None
            stream.close()
        return self._execution(time.monotonic() - started, timed_out, cancelled, flood)

    def _send_job(self) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(json.dumps(to_json_dict(self.job)).encode())
            self.proc.stdin.close()
        except BrokenPipeError:
            pass

    def _read(self, sel: selectors.BaseSelector, stream: object) -> None:
        fd = stream.fileno()  # type: ignore[attr-defined]
        try:
            chunk = os.read(fd, 65536)
        except BlockingIOError:
            return
        if not chunk:
            sel.unregister(stream)  # type: ignore[arg-type]
            return
        if stream is self.report:
            self._events(chunk)
        elif stream is self.proc.stdout:
            self.stdout.add(chunk)
        else:
            self.stderr.add(chunk)

    def _events(self, chunk: bytes) -> None:
        self.pending += chunk
        *lines, self.pending = self.pending.split(b"\n")
        for line in lines:
            try:
                event = from_json_dict(Event, json.loads(line))
            except (ValueError, TypeError, KeyError):
                continue  # not a protocol line: ignored, the harness only writes valid ones
            self.events.append(event)
            self.on_event(event)

    def _reap(self) -> bool:
        if self.status is not None:
            return True
        pid, status, rusage = os.wait4(self.proc.pid, os.WNOHANG)
        if pid == 0:
            return False
        self.status = status
        self.rusage_maxrss = rusage.ru_maxrss * 1024
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        return True

    def _kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)

    def _wait_dead(self, seconds: float = 5.0) -> bool:
        end = time.monotonic() + seconds
        while not self._reap():
            if time.monotonic() > end:
                return False
            time.sleep(0.01)
        return True

    def _execution(self, wall: float, timed_out: bool, cancelled: bool, flood: bool) -> Execution:
        code = self.proc.returncode
        sig = -code if code is not None and code < 0 else None
        return Execution(
            events=tuple(self.events),
            exit_code=code if code is not None and code >= 0 else None,
            signal=sig,
            timed_out=timed_out,
            cancelled=cancelled,
            wall_seconds=wall,
            stdout=self.stdout.text(),
            stderr=self.stderr.text(),
            stdout_truncated=self.stdout.truncated,
            stderr_truncated=self.stderr.truncated,
            output_limit_hit=flood,
            cpu_limit_hit=sig == signal.SIGXCPU,
            peak_rss_bytes=self.rusage_maxrss,
        )
