"""The job runner as its own service: `python -m sandbox.backends.service --socket PATH [--backend hardened]`.

In production the web server runs as an unprivileged user and never starts a sandbox itself: it
talks to this service (root in its own container, no network, no credentials) over a unix socket.
The channel is narrow: one connection per job; the client sends one line, the job as JSON; the
service answers with protocol events, one JSON line each (`{"event": …}`), then the raw facts
(`{"execution": …}`) and closes. The client cancels by sending `cancel` or by hanging up. Peers
are checked with SO_PEERCRED against the allowed uids.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import socket
import struct
import threading
from pathlib import Path

from sandbox.backends import Backend, create_backend
from sandbox.protocol import Event, Job, from_json_dict, to_json_dict

log = logging.getLogger(__name__)
MAX_JOB_BYTES = 4 * 1024 * 1024


def peer_uid(conn: socket.socket) -> int:
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


class Service:
    def __init__(
        self, backend: Backend, path: Path, allowed_uids: set[int], socket_group: int | None = None
    ) -> None:
        """`socket_group`: the group that may connect (the web server's; its uid must also be allowed)."""
        self.backend, self.path, self.allowed = backend, path, allowed_uids
        self.socket_group = socket_group
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._stop = threading.Event()

    def serve(self) -> None:
        # Bind and listen under a temporary name, then rename: a client never finds the path while
        # connecting to it would still be refused.
        staging = self.path.with_name(f".{self.path.name}.{os.getpid()}")
        staging.unlink(missing_ok=True)
        self.listener.bind(str(staging))
        os.chmod(staging, 0o660)
        if self.socket_group is not None:
            os.chown(staging, -1, self.socket_group)  # root-owned 0660 alone: EACCES for the web uid
        self.listener.listen(64)
        os.replace(staging, self.path)
        log.info("job runner listening on %s (backend %s)", self.path, self.backend.name)
        while not self._stop.is_set():
            try:
                conn, _ = self.listener.accept()
            except OSError:
                break
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def stop(self) -> None:
        self._stop.set()
        self.listener.close()
        self.backend.close()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            reader = conn.makefile("rb")
            line = reader.readline(MAX_JOB_BYTES)
            uid = peer_uid(conn)
            if uid not in self.allowed:
                log.warning("refused a job from uid %d", uid)
                _send(conn, {"refused": f"uid {uid} may not submit jobs"})
                return
            if line.strip() == b"health":
                _send(conn, {"health": to_json_dict(self.backend.health())})
                return
            try:
                job = from_json_dict(Job, json.loads(line))
            except (ValueError, TypeError, KeyError) as exc:
                _send(conn, {"refused": f"not a job: {exc}"})
                return
            cancel = threading.Event()
            threading.Thread(target=_watch_cancel, args=(reader, cancel), daemon=True).start()
            lock = threading.Lock()

            def sink(event: Event) -> None:
                with lock:
                    _send(conn, {"event": to_json_dict(event)})

            execution = self.backend.run(job, sink, cancel)
            with lock:
                _send(conn, {"execution": to_json_dict(execution)})


def _watch_cancel(reader: object, cancel: threading.Event) -> None:
    """Any further line, or the client hanging up, cancels the job."""
    with contextlib.suppress(OSError):
        reader.readline()  # type: ignore[attr-defined]
    cancel.set()


def _send(conn: socket.socket, message: dict[str, object]) -> None:
    with contextlib.suppress(OSError):  # the client went away; the job is being cancelled
        conn.sendall((json.dumps(message) + "\n").encode())


def _backend(args: argparse.Namespace) -> Backend:
    if args.backend != "hardened":
        return create_backend(args.backend)
    from sandbox.backends.hardened import BackendUnavailable
    from sandbox.host.tpuhost import TpuHostError, host_slots

    # One runner per host: a slot per chip set (one chip each by default) and CPU slots beside them,
    # shared by the pools of every installed JAX runtime.
    try:
        return create_backend("hardened", slots=args.cpu_slots, tpu_slots=host_slots(args.chips_per_slot))
    except (TpuHostError, BackendUnavailable) as exc:
        raise SystemExit(f"job runner: {exc}") from exc


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m sandbox.backends.service", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--socket", type=Path, required=True)
    parser.add_argument("--backend", default="hardened")
    parser.add_argument(
        "--socket-group", type=int, help="gid that may connect to the socket (the web server's)"
    )
    parser.add_argument("--cpu-slots", type=int, help="hardened: interpret-mode jobs at once (default 8)")
    parser.add_argument(
        "--chips-per-slot", type=int, default=1, help="hardened, on a TPU host: chips each chip slot owns"
    )
    parser.add_argument(
        "--allow-uid",
        type=int,
        action="append",
        default=[],
        help="uid allowed to submit jobs (repeatable; default: this process's uid)",
    )
    return parser


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    service = Service(_backend(args), args.socket, set(args.allow_uid) or {os.getuid()}, args.socket_group)
    try:
        service.serve()
    finally:
        service.stop()


if __name__ == "__main__":
    main()
