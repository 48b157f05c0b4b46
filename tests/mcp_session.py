"""The official SDK's MCP client against a live server (`tests.live.serving`), for the MCP tests of
every tier: one session per `with`, tool calls with their progress notifications kept."""

from __future__ import annotations

import concurrent.futures
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


def run_apart[T](main: Callable[[], Awaitable[T]]) -> T:
    """`anyio.run(main)` in a thread of its own: the browser tests' Playwright keeps an event loop running
    in the main thread for the whole session, and a loop cannot start inside a running one."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, main).result()


@dataclass
class Called:
    """One tool call's answer as an agent sees it, and the progress messages that came before it."""

    is_error: bool
    structured: dict[str, Any]
    text: str
    progress: list[tuple[float, float | None, str | None]] = field(default_factory=list)


@contextlib.asynccontextmanager
async def session(url: str) -> AsyncIterator[ClientSession]:
    async with streamable_http_client(f"{url}/mcp") as (read, write), ClientSession(read, write) as client:
        await client.initialize()
        yield client


async def call(client: ClientSession, tool: str, arguments: dict[str, Any]) -> Called:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    result = await client.call_tool(tool, arguments, progress_callback=on_progress)
    text = "\n".join(getattr(block, "text", "") for block in result.content)
    return Called(result.is_error, result.structured_content or {}, text, seen)


async def call_until(
    client: ClientSession, tool: str, arguments: dict[str, Any], *, stop_after: str, timeout: float = 30
) -> list[str]:
    """Call `tool` and cancel the call once a progress message contains `stop_after`; the messages seen."""
    seen: list[str] = []
    reached = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(message or "")
        if stop_after in (message or ""):
            reached.set()

    with anyio.fail_after(timeout):
        async with anyio.create_task_group() as group:

            async def calling() -> None:
                await client.call_tool(tool, arguments, progress_callback=on_progress)

            group.start_soon(calling)
            await reached.wait()
            group.cancel_scope.cancel()
    return seen
