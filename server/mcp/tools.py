"""The MCP tools: each one an existing operation, its input schema the API's wire type for it.

| tool | input | what it does, as the API does it |
|---|---|---|
| `run_kernel` | `RunRequest` (`POST /api/runs`) | run, check, time and estimate a kernel; the verdict |
| `lower_kernel` | `RunRequest` | the same run, lowered for the chips asked (all when none): the compiler's verdict and Mosaic IR per chip |
| `tune_kernel` | `SweepRequest` (`POST /api/sweeps`) | a sweep: every config checked, lowered, estimated; the best |
| `list_catalog` | `CatalogQuery` | the catalog's entries (`GET /api/catalog`) |
| `read_catalog_entry` | `EntryRef` | an entry's README, template, reference, cases and tolerances (not its solution) |
| `explain_run` | `RunRef` | a run's state; when done, why it failed and what to do next |
| `cancel_run` | `RunRef` | cancel a run (`DELETE /api/runs/{id}`) |
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from sandbox.jobs import sweeps as sweep_text
from sandbox.protocol import CHIPS, RunResult, RunStatus, SweepResult, from_json_dict
from server import convert, deps
from server.classroom.runs import class_admission
from server.mcp import digest
from server.mcp.follow import Progress, follow_run, follow_sweep
from server.mcp.wire import CatalogQuery, EntryRef, RunRef
from server.problems import ProblemError
from server.queue.interface import RunQueue
from server.queue.problems import queue_problems
from server.submit import start_run
from server.sweeps import start_sweep, sweep_jobs
from server.wire.schemas import RunRequest, Wire
from server.wire.sweeps import SweepRequest


@dataclass(frozen=True)
class Call:
    """One tool call: the HTTP request it came in (the app, the caller's identity) and its progress."""

    request: Request
    progress: Progress

    @property
    def state(self) -> Any:
        return self.request.app.state

    @property
    def queue(self) -> RunQueue:
        return self.state.queue


@dataclass(frozen=True)
class Output:
    structured: dict[str, Any]
    text: str


@dataclass(frozen=True)
class ToolSpec:
    name: str
    title: str
    description: str
    input: type[Wire]
    handler: Callable[[Call, Any], Awaitable[Output]]
    read_only: bool = False


async def run_kernel(call: Call, body: RunRequest) -> Output:
    run_id, result = await _run(call, body)
    return Output(digest.run_digest(run_id, result), f"run {run_id}\n{digest.report(result)}")


async def lower_kernel(call: Call, body: RunRequest) -> Output:
    asked = body.model_copy(update={"lower_chips": body.lower_chips or list(CHIPS)})
    run_id, result = await _run(call, asked)
    text = f"run {run_id}\n{digest.report(result, ir='mosaic')}"
    return Output(digest.lowering_digest(run_id, result, "mosaic"), text)


async def tune_kernel(call: Call, body: SweepRequest) -> Output:
    state = call.state
    jobs, spec = await sweep_jobs(body, state.settings, state.catalog, call.queue)
    client = deps.run_client_of(call.request)
    sweep = await start_sweep(state.sweeps, call.queue, jobs, spec, client, fresh=body.fresh)
    await follow_sweep(state.sweeps, call.queue, sweep, call.progress)
    result = sweep.result or {}
    rows = sweep_text.rows(from_json_dict(SweepResult, result["sweep"])) if result.get("sweep") else []
    text = "\n".join([f"sweep {sweep.id}", *rows, str(result.get("summary", ""))])
    return Output({"sweep_id": sweep.id, **result}, text)


async def list_catalog(call: Call, body: CatalogQuery) -> Output:
    entries = [
        convert.catalog_summary(e).model_dump()
        for e in call.state.catalog.entries
        if (body.level is None or e.level == body.level)
        and (body.concept is None or any(body.concept.lower() in c.lower() for c in e.concepts))
    ]
    text = "\n".join(f"{e['slug']:28} {e['level']:13} {e['title']}" for e in entries) or "no entry matches"
    return Output({"entries": entries}, text)


async def read_catalog_entry(call: Call, body: EntryRef) -> Output:
    entry = call.state.catalog.get(body.slug)
    if entry is None:
        raise ProblemError(404, "Unknown entry", f"entry {body.slug!r} is not in the catalog", field="slug")
    # The worked solution and the known-wrong kernels stay out: an agent is asked to write the kernel.
    detail = convert.catalog_detail(entry).model_dump(exclude={"solution", "wrong"})
    text = (
        f"# {entry.title} ({entry.slug}, entry point `{entry.entry_point}`)\n\n{entry.readme}\n\n"
        f"## template.py\n```python\n{entry.template_source}```\n\n"
        f"## reference.py\n```python\n{entry.reference_source}```"
    )
    return Output(detail, text)


async def explain_run(call: Call, body: RunRef) -> Output:
    with queue_problems():
        view = await call.queue.view(body.run_id)
    if view is None:
        raise ProblemError(404, "Unknown run", _forgotten(body.run_id), field="run_id")
    if view.result is None:
        waiting = f" at position {view.position}" if view.position is not None else ""
        return Output(
            {"run_id": view.id, "state": view.state, "position": view.position}, f"{view.state}{waiting}"
        )
    result = from_json_dict(RunResult, view.result)
    return Output({"state": "done", **digest.run_digest(view.id, result)}, digest.report(result))


async def cancel_run(call: Call, body: RunRef) -> Output:
    with queue_problems():
        view = await call.queue.cancel(body.run_id)
    if view is None:
        raise ProblemError(404, "Unknown run", _forgotten(body.run_id), field="run_id")
    return Output({"run_id": view.id, "state": view.state}, f"run {view.id}: {view.state}")


async def _run(call: Call, body: RunRequest) -> tuple[str, RunResult]:
    state = call.state
    view = await start_run(
        body,
        settings=state.settings,
        catalog=state.catalog,
        runtimes=state.runtimes,
        queue=call.queue,
        client=deps.run_client_of(call.request),
        admit=class_admission(deps.classes_of(call.request), call.queue, deps.classroom_of(call.request)),
    )
    await call.progress(0, None, f"run {view.id} {view.state}")
    found = view.result
    if found is None:
        with queue_problems():
            found = await follow_run(call.queue, view.id, call.progress)
    if found is None:
        raise ProblemError(404, "Unknown run", _forgotten(view.id), field="run_id")
    return view.id, from_json_dict(RunResult, found)


def _forgotten(run_id: str) -> str:
    return f"no run {run_id!r} (finished runs are kept for a while, then forgotten)"


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "run_kernel",
        "Run a Pallas kernel",
        "Run a Pallas TPU kernel file in the playground's sandbox (TPU interpret mode on the CPU, or "
        "natively on a TPU) and check it: with `entry`, against a catalog entry's reference; without, "
        "a scratch file defining make_inputs(seed), kernel(*inputs) and optionally reference(*inputs). "
        f"Returns the verdict (`status`: {', '.join(RunStatus)}), the error in the kernel's own names and line, each "
        "case, timings, memory against the chip's VMEM/SMEM, and the TPU time model's estimate. "
        "Progress notifications follow the run; cancelling the call cancels the run.",
        RunRequest,
        run_kernel,
    ),
    ToolSpec(
        "lower_kernel",
        "Lower a kernel for TPU chips",
        "Run a kernel as run_kernel does and lower it with the real TPU compiler (Mosaic) for the chips "
        "in `lower_chips` (all chips when empty): per chip whether it lowers, the compiler's error and "
        "the Mosaic IR.",
        RunRequest,
        lower_kernel,
    ),
    ToolSpec(
        "tune_kernel",
        "Sweep a kernel's parameters",
        "A sweep (Tune): every config of `params` (e.g. block sizes) checked for correctness at a small "
        "size, lowered, and its time estimated at `size` on `chip`; ranked, best first. A catalog entry's "
        "[tune] table fills what is left out. One progress notification per judged config.",
        SweepRequest,
        tune_kernel,
    ),
    ToolSpec(
        "list_catalog",
        "List catalog entries",
        "The catalog's exercises: slug, title, summary, level, concepts, chips, devices.",
        CatalogQuery,
        list_catalog,
        read_only=True,
    ),
    ToolSpec(
        "read_catalog_entry",
        "Read a catalog entry",
        "One entry's README, template (the kernel with TODO holes), reference, cases, tolerances, "
        "interpret options and [tune] table; write the kernel, then run_kernel with its slug as `entry`.",
        EntryRef,
        read_catalog_entry,
        read_only=True,
    ),
    ToolSpec(
        "explain_run",
        "Explain a run",
        "A run's state, and once it is done why it failed (the translated error, the first mismatches, "
        "the compiler's verdict) and what to try next.",
        RunRef,
        explain_run,
        read_only=True,
    ),
    ToolSpec(
        "cancel_run",
        "Cancel a run",
        "Cancel a queued or running run (a finished one is left as it is).",
        RunRef,
        cancel_run,
    ),
)
