"""The live state of a class and its change feed: who is editing which step, the raised hands in the
order they went up, the step the teacher asks everyone to follow, and a feed of changes that the
teacher's and the students' streams wait on.

Two implementations behind one interface, chosen once per app: `InProcessLive` (this process; one
web server) and `server.classroom.live_redis.RedisLive` (`PLAYGROUND_REDIS_URL`: every web server
sees the same room and wakes on the same feed). A change names its kind so a student's stream can
skip what only the teacher sees (a classmate's edits).

What is kept is bounded: per class, one editing report and one hand per current student (students
are bounded by `PLAYGROUND_CLASS_STUDENTS`), one follow step, and the last `FEED_LENGTH` changes; a
class idle for `IDLE_SECONDS` is forgotten (in Redis by key expiry), and at most `ROOMS` classes are
held in one process.
"""

from __future__ import annotations

import asyncio
import collections
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Literal, Protocol

FEED_LENGTH = 256
IDLE_SECONDS = 12 * 3600
ROOMS = 2000
# A student typing on the same step tells the teacher again only after this long (the page throttles
# its reports too; this holds whatever a client sends).
EDIT_REFRESH_SECONDS = 5.0
JOIN_WINDOW_SECONDS = 60

# Kinds of change. Students' streams wake only on what changes their own page.
Kind = Literal["runs", "board", "editing", "hands", "follow", "students", "steps", "joins"]
STUDENT_KINDS: frozenset[str] = frozenset({"hands", "follow", "students", "steps", "board"})


@dataclass(frozen=True)
class Editing:
    step: int
    at: float


@dataclass(frozen=True)
class LiveState:
    editing: dict[str, Editing] = field(default_factory=dict)
    hands: tuple[tuple[str, float], ...] = ()  # (student id, raised at), first raised first
    follow: int | None = None


@dataclass(frozen=True)
class Change:
    id: str
    kind: str


class ClassLive(Protocol):
    async def report_editing(self, class_id: str, student_id: str, step: int) -> bool:
        """Keep that the student edits `step` now; True when the teacher should be told (a new step,
        or the last report on it is older than `EDIT_REFRESH_SECONDS`)."""
        ...

    async def set_hand(self, class_id: str, student_id: str, raised: bool) -> None: ...

    async def clear_hands(self, class_id: str) -> None: ...

    async def set_follow(self, class_id: str, step: int | None) -> None: ...

    async def forget_student(self, class_id: str, student_id: str) -> None: ...

    async def state(self, class_id: str) -> LiveState: ...

    async def publish(self, class_id: str, kind: Kind) -> None: ...

    def changes(self, class_id: str, idle_seconds: float) -> AsyncIterator[Change | None]:
        """Changes of the class from now on; None after `idle_seconds` without one (the caller
        checks its client is still there and may refresh what ages by itself)."""
        ...

    async def admit_join(self, address: str, per_minute: int, what: str = "join") -> float:
        """0 if `address` may join a class (`what`: or look a join code up) now, else the seconds
        until it may. A sliding window: never more than `per_minute` in any 60 seconds (a fixed
        window let twice that through across its edge)."""
        ...

    async def close(self) -> None: ...


@dataclass
class _Room:
    editing: dict[str, Editing] = field(default_factory=dict)
    hands: dict[str, float] = field(default_factory=dict)  # insertion order is the queue's
    follow: int | None = None
    feed: collections.deque[Change] = field(default_factory=lambda: collections.deque(maxlen=FEED_LENGTH))
    next_id: int = 0
    touched: float = 0.0
    wake: asyncio.Event = field(default_factory=asyncio.Event)


class InProcessLive:
    """The live state in this process's memory (one web server)."""

    def __init__(self) -> None:
        self.rooms: collections.OrderedDict[str, _Room] = collections.OrderedDict()
        # (what, address) -> the times of its admitted attempts in the last JOIN_WINDOW_SECONDS
        self.joins: dict[tuple[str, str], collections.deque[float]] = {}

    async def report_editing(self, class_id: str, student_id: str, step: int) -> bool:
        room, now = self._room(class_id), time.time()
        before = room.editing.get(student_id)
        fresh = before is None or before.step != step or now - before.at >= EDIT_REFRESH_SECONDS
        if fresh:
            room.editing[student_id] = Editing(step, now)
        return fresh

    async def set_hand(self, class_id: str, student_id: str, raised: bool) -> None:
        hands = self._room(class_id).hands
        if raised:
            hands.setdefault(student_id, time.time())
        else:
            hands.pop(student_id, None)

    async def clear_hands(self, class_id: str) -> None:
        self._room(class_id).hands.clear()

    async def set_follow(self, class_id: str, step: int | None) -> None:
        self._room(class_id).follow = step

    async def forget_student(self, class_id: str, student_id: str) -> None:
        room = self._room(class_id)
        room.editing.pop(student_id, None)
        room.hands.pop(student_id, None)

    async def state(self, class_id: str) -> LiveState:
        room = self._room(class_id)
        return LiveState(dict(room.editing), tuple(room.hands.items()), room.follow)

    async def publish(self, class_id: str, kind: Kind) -> None:
        room = self._room(class_id)
        room.next_id += 1
        room.feed.append(Change(str(room.next_id), kind))
        room.wake.set()
        room.wake = asyncio.Event()  # waiters hold the old one, already set

    async def changes(self, class_id: str, idle_seconds: float) -> AsyncIterator[Change | None]:
        watched = self._room(class_id)
        last = watched.next_id
        while True:
            room = self._room(class_id)
            if room is not watched:  # forgotten and made again: its ids start over
                watched, last = room, 0
            news = [c for c in room.feed if int(c.id) > last]
            for change in news:
                last = int(change.id)
                yield change
            if news:
                continue
            try:
                await asyncio.wait_for(room.wake.wait(), idle_seconds)
            except TimeoutError:
                yield None

    async def admit_join(self, address: str, per_minute: int, what: str = "join") -> float:
        if per_minute <= 0:
            return 0.0
        now = time.time()
        since = now - JOIN_WINDOW_SECONDS
        if len(self.joins) > ROOMS * 16:  # bounded: addresses quiet for a minute are worthless
            self.joins = {k: times for k, times in self.joins.items() if times and times[-1] > since}
        times = self.joins.setdefault((what, address), collections.deque())
        while times and times[0] <= since:
            times.popleft()
        if len(times) >= per_minute:
            return max(times[0] - since, 0.001)
        times.append(now)
        return 0.0

    async def close(self) -> None:
        self.rooms.clear()

    def _room(self, class_id: str) -> _Room:
        now = time.time()
        room = self.rooms.pop(class_id, None)
        if room is None or now - room.touched > IDLE_SECONDS:
            room = _Room()
        room.touched = now
        self.rooms[class_id] = room  # most recently used last
        while len(self.rooms) > ROOMS:
            self.rooms.popitem(last=False)
        return room
