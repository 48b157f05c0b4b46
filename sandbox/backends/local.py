"""The `local` backend: one fresh `python -I` child per job, rlimits, wall clock, capped output.

For development only: it isolates crashes, hangs, floods and memory bombs, but not the filesystem or
the network (the hardened backend does), so creating it logs a warning and `check_bind_allowed`
refuses to serve it beyond loopback. The child runs in its own session, so a timeout or cancel
kills the whole process group; `streams.Watch` reads output and protocol events.

On a TPU VM it runs kernel jobs natively: the host's first chip slot (`sandbox.host.tpuhost`), one
job at a time (libtpu lets one process own a chip), each in a fresh process (a kernel that halts the
core leaves its process unable to run anything more), with the slot's libtpu environment and no
address-space limit. A reference's job never takes the chip. This is how a VM without root runs the
playground (the hardened backend needs root for its jail).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import replace
from pathlib import Path

from sandbox.backends.base import BackendHealth, EventSink
from sandbox.backends.chip_wait import run_waiting_for_chip
from sandbox.backends.watch import Outcome, Pipes, Watch, close_quietly
from sandbox.host.jobenv import base_environment, job_environment
from sandbox.host.tpuhost import TpuHostError, TpuSlot, host_slots, runs_on_chip
from sandbox.limits import JOB_NICE, NICE, on_chip
from sandbox.protocol import Execution, Job, never_ran, to_json_dict

log = logging.getLogger(__name__)
# The child imports the harness from this checkout, whichever runtime's interpreter runs it (an older
# runtime's venv does not have the playground installed).
_ROOT = str(Path(__file__).resolve().parents[2])
_BOOT = f"import sys; sys.path.insert(0, {_ROOT!r}); from sandbox.harness.main import main; main(sys.argv)"


class LocalBackend:
    name = "local"

    def __init__(self, python: str = sys.executable, tpu_slots: tuple[TpuSlot, ...] | None = None) -> None:
        """`tpu_slots`: the chips native jobs run on (default: this host's; only the first is used)."""
        self.python = python
        self.tpu_problem = ""
        try:
            slots = host_slots() if tpu_slots is None else tpu_slots
        except TpuHostError as exc:
            slots, self.tpu_problem = (), str(exc)
            log.warning("this host's TPU chips cannot be used: %s", exc)
        self.tpu_slot = slots[0] if slots else None
        self._chip = threading.Lock()
        log.warning(
            "sandbox backend 'local' is for development only: jobs run as this user with this "
            "user's filesystem and network; never expose it beyond loopback"
        )

    def run(self, job: Job, on_event: EventSink, cancel: threading.Event) -> Execution:
        slot = self.tpu_slot
        if slot is None or not runs_on_chip(job.mode, job.chip, slot.chip, job.role):
            return self._run_once(job, None, on_event, cancel)
        while not self._chip.acquire(timeout=0.1):  # waits in the queue, not against the job's clock
            if cancel.is_set():
                return never_ran(None, cancelled=True)
        try:
            chip_job = on_chip(job)
            ran = run_waiting_for_chip(lambda: self._run_once(chip_job, slot, on_event, cancel), cancel)
            return replace(ran, on_chip=True)  # the host's word: this job had the chip
        finally:
            self._chip.release()

    def _run_once(
        self, job: Job, slot: TpuSlot | None, on_event: EventSink, cancel: threading.Event
    ) -> Execution:
        scratch = tempfile.mkdtemp(prefix="playground-job-")
        try:
            return _Child(self.python, job, scratch, slot).run(on_event, cancel)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def health(self) -> BackendHealth:
        chip = f"; native runs on {self.tpu_slot.describe()}" if self.tpu_slot else ""
        if self.tpu_problem:
            chip = f"; no native runs: {self.tpu_problem}"
        return BackendHealth(ok=True, detail=f"development backend: jobs run unjailed as this user{chip}")

    def close(self) -> None:
        pass


class _Child:
    def __init__(self, python: str, job: Job, scratch: str, slot: TpuSlot | None = None) -> None:
        self.job = job
        events_r, events_w = os.pipe()
        self.proc = subprocess.Popen(
            # At a lower CPU weight than the server (`limits.JOB_NICE`); `nice` execs, same pid.
            [NICE, "-n", str(JOB_NICE), python, "-I", "-u", "-c", _BOOT, str(events_w)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(events_w,),
            start_new_session=True,
            cwd=scratch,
            env=job_environment(base_environment(os.environ, home=scratch), devices=job.devices, tpu=slot),
        )
        os.close(events_w)
        assert self.proc.stdin and self.proc.stdout and self.proc.stderr
        self.pipes = Pipes(
            os.dup(self.proc.stdin.fileno()), self.proc.stdout.fileno(), self.proc.stderr.fileno(), events_r
        )
        self.proc.stdin.close()
        self.rusage_maxrss = 0
        self.status: int | None = None

    def run(self, on_event: EventSink, cancel: threading.Event) -> Execution:
        data = json.dumps(to_json_dict(self.job)).encode()
        watch = Watch(self.job.limits, self.pipes, data, on_event, cancel)
        try:
            outcome = watch.run(self._reap, self._kill, self._wait_dead)
        finally:
            self._kill()
            self._wait_dead(5.0)
            close_quietly(self.pipes.events)
            for stream in (self.proc.stdout, self.proc.stderr):
                assert stream is not None
                stream.close()
        return self._execution(outcome)

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

    def _wait_dead(self, seconds: float) -> bool:
        end = time.monotonic() + seconds
        while not self._reap():
            if time.monotonic() > end:
                return False
            time.sleep(0.01)
        return True

    def _execution(self, outcome: Outcome) -> Execution:
        code = self.proc.returncode
        sig = -code if code is not None and code < 0 else None
        return outcome.execution(
            exit_code=code if code is not None and code >= 0 else None,
            signal=sig,
            cpu_limit_hit=sig == signal.SIGXCPU,
            peak_rss_bytes=self.rusage_maxrss,
            infra_error="the job could not be stopped"
            if outcome.unkillable and self.status is None
            else None,
        )
