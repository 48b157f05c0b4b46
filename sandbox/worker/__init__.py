"""A runner worker: `python -m sandbox.worker --redis URL --pool NAME --slots N`.

Host side, like the backends (never JAX, never `server/`): it takes runs of one pool from the Redis
queue (`sandbox.queue`), runs each through its local sandbox backend (hardened by default), streams
the job's events to the run's event stream and ends the run with its classified result. Any number
of workers on any hosts may serve one pool.

    loop.py     Worker: slot threads, the keeper thread (heartbeats, leases, cancels)
    slots.py    which backend each slot runs its jobs on (one chip per slot on a TPU host: the seam)
    __main__.py the command line
"""

from sandbox.worker.loop import Worker, WorkerOptions

__all__ = ["Worker", "WorkerOptions"]
