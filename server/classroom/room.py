"""The app's one `Classroom`: the live state of every class (in this process or in Redis), and the
class runs this web server watches to their end.

A class run is watched from the moment it is submitted: when the queue says it is running and when
it is done, the cell is settled (stored, with the board's time on a challenge step) and the class's
feed told, so every teacher's stream, on any web server, sends the new grid at once. A watch lost
with its web server is made good by the next read of the grid, which settles what is still pending
(`progress.settle`). Watches are bounded by the runs in flight (`PLAYGROUND_CLASS_QUEUE` per class)
and by `WATCHES` per process.
"""

from __future__ import annotations

import asyncio
import logging

from server.classroom import progress
from server.classroom.judging import Judging
from server.classroom.lesson_facts import lesson_facts
from server.classroom.live import ClassLive, InProcessLive, LiveState
from server.queue.interface import RunQueue
from server.settings import Settings
from server.store import class_steps
from server.store.classes import ClassStore, StepStatus, Student

log = logging.getLogger(__name__)

WATCHES = 2000


class Classroom:
    def __init__(self, live: ClassLive) -> None:
        self.live = live
        self.watches: set[asyncio.Task[None]] = set()

    def watch(self, store: ClassStore, queue: RunQueue, student: Student, step: int, run_id: str) -> None:
        """Follow the class run `run_id` to its end in the background (see the module's docstring)."""
        if len(self.watches) >= WATCHES:
            return  # the grid's next read settles it
        task = asyncio.create_task(
            self._watch(store, queue, student, step, run_id), name=f"class-run-{run_id}"
        )
        self.watches.add(task)
        task.add_done_callback(self.watches.discard)

    async def close(self) -> None:
        for task in list(self.watches):
            task.cancel()
        await asyncio.gather(*self.watches, return_exceptions=True)
        await self.live.close()

    async def _watch(
        self, store: ClassStore, queue: RunQueue, student: Student, step: int, run_id: str
    ) -> None:
        class_id = student.class_id
        try:
            await self.live.publish(class_id, "runs")  # the new run's cell: queued (or a cached result)
            async for event in queue.follow(run_id, None):
                if event is not None and event.kind == "running":
                    await self.live.publish(class_id, "runs")
            judged = await class_judging(store, class_id)
            cell = StepStatus(student.id, step, "queued", "", run_id, 0.0)
            _, scored = await progress.settle_one(store, class_id, cell, await queue.view(run_id), judged)
            await self.live.publish(class_id, "board" if scored else "runs")
        except asyncio.CancelledError:
            raise
        except Exception:  # the grid's next read settles the run; a watch never takes the server down
            log.exception("watching class run %s failed", run_id)


async def class_judging(store: ClassStore, class_id: str) -> Judging:
    """How the class's runs are read: the chip of each challenge step (the teacher's, else the lesson
    step's), and the steps whose lesson file asks for a Pallas kernel."""
    setups = await asyncio.to_thread(class_steps.setups, store.database, class_id)
    session = await asyncio.to_thread(store.get, class_id)
    if session is None:
        return Judging()
    facts = await asyncio.to_thread(lesson_facts, store, session)
    room = progress.Room(session, [], LiveState(), setups, [], facts.chips, facts.kernel_steps)
    return progress.judging_of(room)


def create_classroom(settings: Settings) -> Classroom:
    """The live state where the queue keeps its own: Redis when configured, else this process."""
    if settings.redis_url:
        from server.classroom.live_redis import RedisLive  # imports redis only when it is used

        return Classroom(RedisLive(settings.redis_url, settings.redis_prefix))
    return Classroom(InProcessLive())
