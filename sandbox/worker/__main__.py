"""`python -m sandbox.worker --redis URL --pool NAME --slots N`: run jobs of one pool from the queue."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import socket
import threading
import uuid
from pathlib import Path

from sandbox.backends import backend_names
from sandbox.backends.references import keep_on_disk
from sandbox.host import logfmt
from sandbox.queue import DEFAULT_PREFIX, WorkerQueue
from sandbox.worker.loop import Worker, WorkerOptions
from sandbox.worker.slots import slot_backends

log = logging.getLogger("sandbox.worker")


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m sandbox.worker", description=__doc__.splitlines()[0])
    parser.add_argument("--redis", required=True, help="the queue, e.g. redis://queue-host:6379/0")
    parser.add_argument("--pool", default="interpret", help="interpret (any CPU) or tpu-v5e, tpu-v6e, …")
    parser.add_argument(
        "--slots", type=int, default=None, help="jobs at once (default: cores; on a TPU pool, its chip slots)"
    )
    parser.add_argument("--backend", default="hardened", choices=backend_names())
    parser.add_argument("--prefix", default=DEFAULT_PREFIX, help="key prefix (as PLAYGROUND_REDIS_PREFIX)")
    parser.add_argument(
        "--lease-seconds", type=float, default=30.0, help="a silent holder loses its run after"
    )
    parser.add_argument("--heartbeat-seconds", type=float, default=5.0)
    parser.add_argument("--max-deliveries", type=int, default=2, help="attempts per run before it ends lost")
    parser.add_argument("--name", default="", help="this worker's name (default: host-pid-random)")
    parser.add_argument("--log-format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--reference-dir",
        type=Path,
        default=Path("var/references"),
        help="where catalog entries' expected outputs are kept between restarts (as PLAYGROUND_REFERENCE_DIR)",
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse(argv)
    logfmt.configure(args.log_format)
    name = args.name or f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"
    queue = WorkerQueue(
        args.redis,
        args.pool,
        name,
        prefix=args.prefix,
        lease_seconds=args.lease_seconds,
        max_deliveries=args.max_deliveries,
    )
    backends = slot_backends(args.backend, args.pool, args.slots)
    for backend in set(backends):
        keep_on_disk(backend, args.reference_dir)
    options = WorkerOptions(
        slots=len(backends),
        heartbeat_seconds=args.heartbeat_seconds,
        poll_seconds=min(0.25, args.lease_seconds / 8),
    )
    worker = Worker(queue, backends, options)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    worker.serve(stop)


if __name__ == "__main__":
    main()
