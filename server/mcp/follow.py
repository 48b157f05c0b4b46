"""A run or a sweep followed to its end for an MCP call: its events become progress notifications,
and when the call is cancelled (the client cancelled it or went away) the run is cancelled in the
queue, through the same `RunQueue.cancel` as `DELETE /api/runs/{id}`, before the call unwinds."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from server.queue.interface import RunQueue
from server.sweeps import Sweep, SweepRegistry

log = logging.getLogger(__name__)

# (progress so far, total if known, a line saying what happens): an MCP progress notification.
Progress = Callable[[float, float | None, str], Awaitable[None]]
WAIT_SECONDS = 15.0


async def follow_run(queue: RunQueue, run_id: str, progress: Progress) -> dict[str, Any] | None:
    """The run's result (JSON) once it is done; None if the queue forgot it meanwhile."""
    count = 0
    try:
        async for event in queue.follow(run_id, None):
            if event is None:
                continue  # a keep-alive tick: nothing happened
            if event.kind == "done":
                return event.data
            line = describe(event.kind, event.data)
            if line:
                count += 1
                await progress(count, None, line)
    except anyio.get_cancelled_exc_class():
        await _shielded(queue.cancel(run_id), f"run {run_id}")
        raise
    view = await queue.view(run_id)
    return view.result if view is not None else None


async def follow_sweep(registry: SweepRegistry, queue: RunQueue, sweep: Sweep, progress: Progress) -> None:
    """Until the sweep is done, one notification per judged config (`judged` of `total`)."""
    index = 0
    try:
        while True:
            while index < len(sweep.events):
                event = sweep.events[index]
                index += 1
                if event["kind"] == "config":
                    data = event["data"]
                    result = data.get("result", {})
                    line = f"config {result.get('params')}: {result.get('status')}"
                    await progress(data.get("judged", 0), data.get("total"), line)
            if sweep.state == "done":
                return
            await sweep.wait_for_events(index, WAIT_SECONDS)
    except anyio.get_cancelled_exc_class():
        await _shielded(registry.cancel(queue, sweep), f"sweep {sweep.id}")
        raise


def describe(kind: str, data: dict[str, Any]) -> str:
    """One line for a run's event, as a progress message ("" for events not worth a line)."""
    if kind == "queued":
        eta = data.get("eta_seconds")
        return f"queued at position {data.get('position')}" + (f", about {eta:.0f} s to start" if eta else "")
    if kind == "progress":
        steps = data.get("grid_steps")
        return f"{data.get('phase', 'running')} {data.get('case') or ''}: {steps} grid steps".replace(
            " :", ":"
        )
    if kind == "case":
        result = data.get("result", {})
        verdict = {True: "passed", False: "failed", None: "ran"}[result.get("passed")]
        return f"case {result.get('name')} ({data.get('index', 0) + 1} of {data.get('of')}): {verdict}"
    if kind == "error":
        return f"error: {data.get('error', {}).get('message', '')}"[:200]
    lines = {
        "running": "running",
        "started": "the sandbox started the kernel's process",
        "imported": "the kernel file was imported",
        "compiled": "the kernel compiled and ran once",
        "timing": "timed",
        "memory": "memory counted",
        "lowering": "the TPU lowering was checked",
    }
    return lines.get(kind, "")


async def _shielded(cancel: Awaitable[Any], what: str) -> None:
    """Cancel in the queue even though this task is being cancelled (else the run would go on)."""
    with anyio.CancelScope(shield=True):
        try:
            await cancel
        except Exception:  # the queue's outage must not hide the cancellation itself
            log.warning("could not cancel %s after its MCP call was cancelled", what, exc_info=True)
        else:
            log.info("cancelled %s: its MCP call was cancelled", what)
