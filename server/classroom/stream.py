"""A class's live view as Server-Sent Events: the whole view at once, then again after each change.

The teacher's grid and a student's page are small (a room of students × the lesson's steps), so each
event carries the whole view, not a diff: a client that reconnects (the page's stream resumes by
itself) simply gets the current view, and nothing can drift. Changes from the class's feed
(`server.classroom.live`, shared by every web server through Redis when configured) arrive within
`COALESCE_SECONDS` of each other are sent as one view; a view equal to the last one sent is not sent
again. Every `REFRESH_SECONDS` the view is made again anyway: it settles runs whose watch was lost
with another web server and lets an old "editing" fade.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable

from server.classroom.live import ClassLive
from server.streams import strict_json

log = logging.getLogger(__name__)

COALESCE_SECONDS = 0.1
REFRESH_SECONDS = 5.0
KEEPALIVE_SECONDS = 15.0
HEADERS = {"Cache-Control": "no-store", "X-Accel-Buffering": "no"}


async def views(
    live: ClassLive,
    class_id: str,
    kinds: frozenset[str] | None,
    make: Callable[[], Awaitable[str]],
    gone: Callable[[], Awaitable[bool]],
    event: str,
) -> AsyncIterator[str]:
    """SSE text: `event` events with `make()`'s JSON, sent at once and after each change of a kind in
    `kinds` (None: every kind); ends when `gone()` says the client left or the feed fails."""
    dirty = asyncio.Event()
    listener = asyncio.create_task(_listen(live, class_id, kinds, dirty))
    sent, number, quiet = None, 0, 0.0
    try:
        while True:
            text = await make()
            if text != sent:
                number, sent, quiet = number + 1, text, 0.0
                yield f"id: {number}\nevent: {event}\ndata: {text}\n\n"
            elif quiet >= KEEPALIVE_SECONDS:
                quiet = 0.0
                yield ": keepalive\n\n"
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(dirty.wait(), REFRESH_SECONDS)
            quiet += REFRESH_SECONDS if not dirty.is_set() else 0.0
            if listener.done() or await gone():
                break
            dirty.clear()
            await asyncio.sleep(COALESCE_SECONDS)
        if listener.done() and listener.exception() is not None:
            yield "retry: 2000\n\n"  # the feed failed (Redis away): the page reconnects
    finally:
        listener.cancel()
        with contextlib.suppress(BaseException):
            await listener


async def _listen(live: ClassLive, class_id: str, kinds: frozenset[str] | None, dirty: asyncio.Event) -> None:
    try:
        async for change in live.changes(class_id, KEEPALIVE_SECONDS):
            if change is not None and (kinds is None or change.kind in kinds):
                dirty.set()
    except Exception:
        log.warning("the change feed of class %s failed", class_id, exc_info=True)
        dirty.set()
        raise


def as_json(model: object) -> str:
    """A wire model as one line of JSON (SSE data is one line) that a browser reads (`strict_json`)."""
    dump = getattr(model, "model_dump", None)
    return strict_json(dump(mode="json") if dump else model, compact=True)
