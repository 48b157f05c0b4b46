"""`OpenStreams`: a stream's place is freed when it ends, when its reader leaves, and when the server
never started it (collected unstarted)."""

from __future__ import annotations

import asyncio
import gc
from concurrent.futures import ThreadPoolExecutor

import pytest

from server.problems import ProblemError
from server.streams import OpenStreams


def _run(coroutine):
    """On a thread of its own: another test in this process may have left an event loop running here."""
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, coroutine).result()


async def _events(n: int):
    for i in range(n):
        yield f"event {i}\n\n"


def test_a_finished_stream_and_an_unstarted_one_free_their_places():
    streams = OpenStreams(per_address=1)
    finished = streams.opened("a", _events(2))
    assert streams.held("a") == 1

    async def read_all():
        return [e async for e in finished]

    assert _run(read_all()) == ["event 0\n\n", "event 1\n\n"]
    assert streams.held("a") == 0
    unstarted = streams.opened("a", _events(1))
    with pytest.raises(ProblemError) as refused:
        streams.opened("a", _events(1))
    assert refused.value.status == 429 and streams.held("b") == 0
    del unstarted
    gc.collect()
    assert streams.held("a") == 0


def test_a_reader_that_leaves_mid_stream_frees_its_place():
    streams = OpenStreams(per_address=3)

    async def leave_after_one():
        counted = streams.opened("a", _events(100))
        assert await anext(counted) == "event 0\n\n"
        await counted.aclose()

    _run(leave_after_one())
    assert streams.held("a") == 0


def test_zero_is_unlimited():
    streams = OpenStreams(per_address=0)
    held = [streams.opened("a", _events(1)) for _ in range(500)]
    assert streams.held("a") == 500 and len(held) == 500
