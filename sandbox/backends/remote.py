"""The `remote` backend: jobs run by the job-runner service (`sandbox.backends.service`) over a unix socket.

Lets the web server run unprivileged and without any sandbox machinery of its own. A job is one
connection: send the job, forward the service's events as they arrive, return its Execution. If the
service is unreachable or dies mid-job, the run fails cleanly with `infra_error`.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from dataclasses import replace
from pathlib import Path

from sandbox.backends.base import BackendHealth, EventSink, StopJob
from sandbox.protocol import Event, Execution, Job, from_json_dict, never_ran, to_json_dict

log = logging.getLogger(__name__)

POLL_SECONDS = 0.1
HEALTH_SECONDS = 2.0


class RemoteBackend:
    name = "remote"

    def __init__(self, path: Path) -> None:
        self.path = path

    def run(self, job: Job, on_event: EventSink, cancel: threading.Event) -> Execution:
        started = time.monotonic()
        try:
            conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            conn.connect(str(self.path))
        except OSError as exc:
            return _failed(f"the job runner at {self.path} is unreachable ({exc.strerror or exc})", started)
        with conn:
            conn.sendall((json.dumps(to_json_dict(job)) + "\n").encode())
            conn.settimeout(POLL_SECONDS)
            return self._follow(conn, on_event, cancel, started)

    def _follow(
        self, conn: socket.socket, on_event: EventSink, cancel: threading.Event, started: float
    ) -> Execution:
        buffer, cancel_sent, stopped = b"", False, None
        while True:
            if (cancel.is_set() or stopped) and not cancel_sent:
                conn.sendall(b"cancel\n")
                cancel_sent = True
            try:
                chunk = conn.recv(65536)
            except TimeoutError:
                continue
            except OSError as exc:
                return _failed(f"lost the job runner ({exc})", started)
            if not chunk:
                return _failed("the job runner closed the connection before the job finished", started)
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                try:
                    message = json.loads(line)
                    if "event" in message and not stopped:
                        on_event(from_json_dict(Event, message["event"]))
                    elif "execution" in message:
                        execution = from_json_dict(Execution, message["execution"])
                        return replace(execution, report_error=stopped) if stopped else execution
                    elif "refused" in message:
                        return _failed(f"the job runner refused the job: {message['refused']}", started)
                except StopJob as exc:  # the service stops it on our cancel; its end says why
                    stopped = str(exc)
                except (ValueError, TypeError, KeyError) as exc:
                    return _failed(f"the job runner sent something unreadable ({exc})", started)

    def health(self) -> BackendHealth:
        """The service's own health, asked over one short connection."""
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.settimeout(HEALTH_SECONDS)
                conn.connect(str(self.path))
                conn.sendall(b"health\n")
                answer = json.loads(conn.makefile("rb").readline(65536))
            return from_json_dict(BackendHealth, answer["health"])
        except (OSError, ValueError, KeyError, TypeError) as exc:
            # The socket's path is for the log: health is public.
            log.warning("the job runner at %s does not answer: %s", self.path, exc)
            return BackendHealth(ok=False, detail="the job runner service does not answer")

    def close(self) -> None:
        pass


def _failed(reason: str, started: float) -> Execution:
    return never_ran(reason, wall_seconds=time.monotonic() - started)
