"""`/api/matrices`: one kernel on several JAX runtimes ("Run on all versions"), and the diff of two of them.

A matrix is one ordinary run per runtime, queued like any run (so the queue, its fairness, limits
and cache all apply); its rows and verdict are read from those runs (`sandbox.results.matrix`).
"""

from __future__ import annotations

import contextlib
import dataclasses

from fastapi import APIRouter, Response

from sandbox.host.runtimes import version_key
from sandbox.protocol import CHIPS, RunResult, from_json_dict
from sandbox.results import matrix as outcomes
from sandbox.results import rundiff
from server.deps import CatalogDep, MatricesDep, QueueDep, RunClientDep, RuntimesDep, SettingsDep
from server.problems import ProblemError, problem_responses
from server.queue.interface import RunQueue, RunView
from server.queue.problems import queue_problems
from server.runtimes import Matrices, Matrix, choose
from server.submit import build_job, check_request, submit
from server.wire.runtimes import (
    ChangeOut,
    FieldDiffOut,
    MatrixOut,
    MatrixRequest,
    MatrixRowOut,
    RunDiffOut,
    SkippedRuntimeOut,
)

router = APIRouter(
    prefix="/api/matrices", tags=["runtimes"], responses=problem_responses(400, 404, 409, 413, 422, 429, 503)
)


@router.post("", status_code=201, response_model=MatrixOut)
async def create_matrix(
    body: MatrixRequest,
    queue: QueueDep,
    catalog: CatalogDep,
    settings: SettingsDep,
    client: RunClientDep,
    runtimes: RuntimesDep,
    matrices: MatricesDep,
    response: Response,
) -> MatrixOut:
    entry = check_request(
        settings, catalog, entry=body.entry, source=body.source, chip=body.chip, mode=body.mode
    )
    names = body.runtimes if body.runtimes is not None else list(runtimes.names)
    asked = sorted({choose(runtimes, n, "runtimes").name for n in names}, key=version_key)
    if not asked:
        raise ProblemError(422, "No runtime", "name at least one runtime, or leave `runtimes` out for all")
    # A runtime whose sandbox cannot start is skipped with the reason, not run into an error row.
    with queue_problems():
        down = dict((await queue.health()).sandbox.unavailable)
    chosen = [name for name in asked if name not in down]
    skipped = tuple((name, down[name]) for name in asked if name in down)
    if not chosen:
        reasons = "; ".join(f"jax {name}: {why}" for name, why in skipped)
        raise ProblemError(503, "No runtime available", reasons, headers={"Retry-After": "30"})
    lower = tuple(body.lower_chips) if body.lower_chips is not None else CHIPS
    jobs = [
        build_job(
            settings,
            entry,
            source=body.source,
            chip=body.chip,
            mode=body.mode,
            options=body.options,
            lower_chips=lower,
            runtime=name,
        )
        for name in chosen
    ]
    runs: list[RunView] = []
    try:
        for job in jobs:
            runs.append(await submit(queue, job, client, fresh=body.fresh))
    except ProblemError:
        for run in runs:  # all or nothing: a half matrix would say nothing about where things change
            with contextlib.suppress(Exception):
                await queue.cancel(run.id)
        raise
    made = matrices.add([(job.runtime, run.id) for job, run in zip(jobs, runs, strict=True)], skipped)
    response.headers["Location"] = f"/api/matrices/{made.id}"
    return await _public(made, queue)


@router.get("/{matrix_id}", response_model=MatrixOut)
async def get_matrix(matrix_id: str, queue: QueueDep, matrices: MatricesDep) -> MatrixOut:
    return await _public(_find(matrices, matrix_id), queue)


@router.get("/{matrix_id}/diff", response_model=RunDiffOut)
async def diff_matrix(
    matrix_id: str, older: str, newer: str, queue: QueueDep, matrices: MatricesDep
) -> RunDiffOut:
    """What changed from the run on `older` to the run on `newer` (both runtimes of this matrix)."""
    made = _find(matrices, matrix_id)
    results = []
    for name in (older, newer):
        run_id = dict(made.runs).get(name)
        if run_id is None:
            raise ProblemError(422, "Not in this matrix", f"this matrix has no run on jax {name}", field=name)
        with queue_problems():
            run = await queue.view(run_id)
        if run is None or run.result is None:
            raise ProblemError(
                409, "Not finished", f"the run on jax {name} has not finished (or is forgotten)"
            )
        results.append(from_json_dict(RunResult, run.result))
    found = rundiff.diff(results[0], results[1], older, newer)
    return RunDiffOut(
        **{k: v for k, v in dataclasses.asdict(found).items() if k != "fields"},
        fields=[
            FieldDiffOut(name=f.name, older=f.older, newer=f.newer, changed=f.changed) for f in found.fields
        ],
    )


def _find(matrices: Matrices, matrix_id: str) -> Matrix:
    made = matrices.get(matrix_id)
    if made is None:
        raise ProblemError(
            404, "Unknown matrix", f"no matrix {matrix_id!r} (they are kept for a while, then forgotten)"
        )
    return made


async def _public(made: Matrix, queue: RunQueue) -> MatrixOut:
    rows, out = [], []
    for runtime, run_id in made.runs:
        with queue_problems():
            run = await queue.view(run_id)
        result = from_json_dict(RunResult, run.result) if run is not None and run.result else None
        row = outcomes.row(runtime, run_id, result)
        rows.append(row)
        out.append(
            MatrixRowOut(
                **{k: v for k, v in dataclasses.asdict(row).items() if k not in ("unavailable", "status")},
                status=str(row.status) if row.status is not None else None,
                unavailable=list(row.unavailable),
                url=f"/api/runs/{run_id}",
                state=run.state if run is not None else "done",
            )
        )
    done = all(r.state == "done" for r in out)
    return MatrixOut(
        id=made.id,
        url=f"/api/matrices/{made.id}",
        state="done" if done else "running",
        rows=out,
        skipped=[SkippedRuntimeOut(runtime=name, reason=why) for name, why in made.skipped],
        changes=[ChangeOut(**dataclasses.asdict(c)) for c in outcomes.changes(rows)],
        verdict=outcomes.verdict(rows),
    )
