"""The worker's threads: one per slot (take a run, execute it, end it) and one keeper (heartbeats,
leases, cancels), so a slow job never delays the signs of life that keep its run from being taken
over, and a cancel reaches a job within `poll_seconds`.

A slot must outlive whatever a job or Redis does: every step is guarded, a run's result is handed
over at most once per attempt (Redis refuses a superseded one), and a Redis outage only pauses
slots until it is back.
"""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import redis

from sandbox.backends import Backend
from sandbox.backends.execute import Finished, execute, lost_result
from sandbox.backends.pairing import RunSlots
from sandbox.host.logfmt import run_context
from sandbox.protocol import Job, RunResult, from_json_dict, to_json_dict
from sandbox.queue import Claim, WorkerQueue

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class WorkerOptions:
    slots: int
    heartbeat_seconds: float = 5.0  # a worker is live for 3 heartbeats after its last one
    poll_seconds: float = 0.25  # how often held leases are renewed and cancels looked for
    idle_seconds: float = 1.0  # an idle slot wakes this often (for lost runs to reclaim)


@dataclass
class Held:
    """A run a slot is executing: its claim, the job's cancel switch, whether the lease was lost."""

    claim: Claim
    cancel: threading.Event = field(default_factory=threading.Event)
    lost: bool = False


class Worker:
    def __init__(self, queue: WorkerQueue, backends: list[Backend], options: WorkerOptions) -> None:
        self.queue, self.backends, self.options = queue, backends, options
        self.host = socket.gethostname()
        self._held: dict[int, Held] = {}
        self._lock = threading.Lock()
        self._redis_down = False
        # A run holds one while it executes; its reference's job may borrow a free one (`pairing`).
        self.run_slots = RunSlots(options.slots)

    def serve(self, stop: threading.Event) -> None:
        """Run until `stop` is set; then let the runs in hand finish and leave."""
        self._until_redis(stop, self.queue.ensure_group)
        self._until_redis(stop, self._beat)
        keeper = threading.Thread(target=self._keep, args=(stop,), name="worker-keeper", daemon=True)
        keeper.start()
        slots = [
            threading.Thread(target=self._slot, args=(slot, stop), name=f"worker-slot-{slot}", daemon=True)
            for slot in range(self.options.slots)
        ]
        for thread in slots:
            thread.start()
        log.info(
            "worker %s serving pool %r with %d slots (backend %s)",
            self.queue.consumer,
            self.queue.pool,
            self.options.slots,
            self.backends[0].name if self.backends else "-",
        )
        while not stop.wait(1.0):
            pass
        for thread in slots:
            thread.join()
        self.queue.leave()
        for backend in {id(b): b for b in self.backends}.values():
            backend.close()

    # -- slots ---------------------------------------------------------------------------------

    def _slot(self, slot: int, stop: threading.Event) -> None:
        while not stop.is_set():
            try:
                claim = self.queue.take(slot)
                self._redis_up()
                if claim is None:
                    self.queue.wait_for_work(self.options.idle_seconds)
                    continue
                with run_context(claim.run_id):
                    self._handle(slot, claim)
            except redis.RedisError as exc:
                if "NOGROUP" in str(exc):
                    # Redis came back empty (restarted without persistence): make the group again.
                    log.warning("the pool's consumer group is gone; creating it again")
                    self._until_redis(stop, self.queue.ensure_group)
                    continue
                self._redis_lost(exc)
                stop.wait(1.0)
            except Exception:  # a fault of ours: the slot carries on with the next run
                log.exception("slot %d failed; it carries on", slot)
                stop.wait(0.1)

    def _handle(self, slot: int, claim: Claim) -> None:
        if claim.kind == "skip":
            return
        job = from_json_dict(Job, json.loads(claim.job))
        if claim.kind == "lost":
            log.warning("run lost %d times with its runner; ending it", claim.attempt - 1)
            self._end_outside(claim, job, lost_result(job, claim.attempt - 1))
            return
        if claim.attempt > 1:
            log.warning("running again (attempt %d): its previous runner was lost", claim.attempt)
        held = Held(claim)
        with self._lock:
            self._held[slot] = held
        try:
            finished = execute(self.backends[slot], job, held.cancel, self._forwarder(held), self.run_slots)
        finally:
            with self._lock:
                del self._held[slot]
        if held.lost:
            log.warning("this worker lost the run's lease (another runner has it); its result is dropped")
            return
        self._hand_over(claim, finished)

    def _forwarder(self, held: Held) -> Callable[[str, dict[str, Any]], None]:
        def forward(kind: str, data: dict[str, Any]) -> None:
            if held.lost:
                return
            try:
                self.queue.emit(held.claim, kind, json.dumps(data))
            except redis.RedisError as exc:  # progress is best effort; the result is not
                self._redis_lost(exc)

        return forward

    def _hand_over(self, claim: Claim, finished: Finished) -> None:
        text = json.dumps(to_json_dict(finished.result))
        status = finished.result.status.value
        phases = finished.result.phases
        counted = json.dumps(to_json_dict(phases)) if phases is not None else ""

        def hand_over() -> None:
            if not self.queue.finish(
                claim, text, status, failure=finished.failure, reusable=finished.reusable, phases=counted
            ):
                log.warning("the run was ended by someone else meanwhile; this result is dropped")

        self._retry(hand_over)

    def _end_outside(self, claim: Claim, job: Job, result: RunResult) -> None:
        text = json.dumps(to_json_dict(result))
        self._retry(lambda: self.queue.abort(claim.run_id, text, result.status.value, failure=True))

    def _retry(self, step: Callable[[], object]) -> None:
        """Redis may be away for a moment: try for about a lease, then leave it to a reclaim."""
        deadline = time.monotonic() + self.queue.lease_ms / 1000
        while True:
            try:
                step()
                return
            except redis.RedisError as exc:
                if time.monotonic() > deadline:
                    log.error("could not hand the run over (%s); another runner will run it again", exc)
                    return
                time.sleep(0.5)

    # -- the keeper ----------------------------------------------------------------------------

    def _keep(self, stop: threading.Event) -> None:
        next_beat = 0.0
        while not stop.wait(self.options.poll_seconds):
            try:
                if time.monotonic() >= next_beat:
                    self._beat()
                    next_beat = time.monotonic() + self.options.heartbeat_seconds
                self._renew_all()
                self._redis_up()
            except redis.RedisError as exc:
                self._redis_lost(exc)
            except Exception:
                log.exception("the keeper failed once; it carries on")

    def _beat(self) -> None:
        with self._lock:
            busy = len(self._held)
        self.queue.heartbeat(
            slots=self.options.slots,
            busy=busy,
            ttl_seconds=3 * self.options.heartbeat_seconds,
            host=self.host,
            unavailable=self._unavailable(),
            out_of_service=self._out_of_service(),
        )

    def _out_of_service(self) -> int:
        """Slots this worker's sandboxes hold out of service (at most its slot count)."""
        backends = {id(b): b for b in self.backends}.values()
        return min(self.options.slots, sum(b.health().quarantined_slots for b in backends))

    def _unavailable(self) -> dict[str, str]:
        """The JAX runtimes this worker's sandbox cannot start (the web servers' health tells of them)."""
        found: dict[str, str] = {}
        for backend in {id(b): b for b in self.backends}.values():
            found |= dict(backend.health().unavailable)
        return found

    def _renew_all(self) -> None:
        with self._lock:
            held = list(self._held.values())
        for item in held:
            answer = self.queue.renew(item.claim)
            if answer == "lost" and not item.lost:
                with run_context(item.claim.run_id):
                    log.warning("lease lost (this worker was too slow to renew it); stopping the job")
                item.lost = True
                item.cancel.set()
            elif answer == "cancel":
                item.cancel.set()

    # -- Redis outages -------------------------------------------------------------------------

    def _redis_lost(self, exc: Exception) -> None:
        if not self._redis_down:
            log.error("Redis is unreachable (%s); slots wait until it is back", exc)
        self._redis_down = True

    def _redis_up(self) -> None:
        if self._redis_down:
            log.info("Redis is back")
        self._redis_down = False

    def _until_redis(self, stop: threading.Event, step: Callable[[], object]) -> None:
        while not stop.is_set():
            try:
                step()
                return
            except redis.RedisError as exc:
                self._redis_lost(exc)
                stop.wait(1.0)
