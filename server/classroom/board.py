"""The class board of a challenge step: the room's correct kernels ranked by time on a named chip.

Only a `passed` verdict counts, and only one the trusted checker made against the lesson's own
reference (`RunResult.checked_by`: the step's catalog entry, or the step file's `reference`, never
the student's); `no_kernel`, `mismatch` and the rest never rank.

The time of a run on a chip is the host's (`RunResult.host_timing`, `sandbox.backends.rerun`): the
program the kernel's process exported, checked again against the lesson's reference on inputs of a
seed that process never saw and timed by a process that runs no user code. What the kernel's own
process measured is never believed, and a run on a chip without the host's time does not rank (a
student who breaks the export does not get their process's word instead). A simulated run has no
measured time anywhere: it ranks by the TPU time model's estimate for the challenge's chip, which the
kernel's process computes (it traces the student's code) and reports, labelled as such. A reported
time no kernel can take does not rank: not a finite number, under `FASTEST_SECONDS`, over an hour,
or under the time the chip needs to write the case's outputs to HBM (`write_floor`, from what the
trusted checker saw: a made-up 2 µs for a 4096² f32 result is not believed).
Each row says which is which, so nobody reads a reported number as a checked one (SECURITY.md, "The
class board"). Rows show nicknames only.
"""

from __future__ import annotations

import math
import re
from typing import Any

from sandbox.protocol import CHIP_TABLE
from sandbox.results.checked_by import CHECKED_BY_CATALOG, CHECKED_BY_LESSON
from server.store.class_steps import Basis, Mark, StepSetup
from server.store.classes import Student
from server.wire.classes import Board, BoardRow

# Verdicts of the lesson's own reference: its catalog entry's (a class run on a catalog step runs that
# entry, `server.classroom.lesson_check`) or its step file's; never a student's own `reference`.
LESSONS_REFERENCE = frozenset({CHECKED_BY_CATALOG, CHECKED_BY_LESSON})
# No kernel launch on any TPU takes less (the dispatch alone is microseconds); nothing takes an hour.
FASTEST_SECONDS = 1e-6
SLOWEST_SECONDS = 3600.0
VERDICT = "checked: the trusted checker compared the outputs outside the kernel's process"
REPORTED = {
    "estimate": "reported by the kernel's process: the TPU time model's estimate on {chip}",
    "measured": (
        "measured by the host on a {chip}: the kernel's exported program, checked again on new inputs "
        "and timed outside the kernel's process"
    ),
}


def score(result: dict[str, Any], chip: str) -> tuple[float, Basis] | None:
    """A finished run's time for the board on `chip`, or None when it does not rank."""
    if result.get("status") != "passed" or result.get("checked_by") not in LESSONS_REFERENCE:
        return None
    if result.get("chip") != chip:
        return None
    timing = result.get("timing") or {}
    if not isinstance(timing, dict):
        return None
    if result.get("ran_on_chip") is True:
        return _host_measured(result, chip)
    floor = write_floor(result.get("cases"), timing.get("case"), chip)
    estimate = result.get("estimate") or {}
    seconds = _plausible(estimate.get("seconds"), floor) if isinstance(estimate, dict) else None
    if isinstance(estimate, dict) and estimate.get("chip") == chip and seconds is not None:
        return seconds, "estimate"
    return None


def _host_measured(result: dict[str, Any], chip: str) -> tuple[float, Basis] | None:
    """A chip run's time: the host's, or none at all."""
    host = result.get("host_timing")
    if not isinstance(host, dict) or host.get("chip") != chip:
        return None
    seconds = _plausible(host.get("seconds"), write_floor(result.get("cases"), host.get("case"), chip))
    return (seconds, "measured") if seconds is not None else None


def write_floor(cases: Any, timed: Any, chip: str) -> float:
    """The least time a `chip` needs to write the timed case's outputs to HBM: their bytes, as the
    trusted checker saw them (each output's shape and dtype), at the chip's peak bandwidth. A reported
    time under it is not believed. The case the kernel's process says it timed, else the smallest (a
    process naming another case lowers the floor to the smallest case's at most)."""
    info = CHIP_TABLE.get(chip)  # type: ignore[call-overload]  # a board's chip is a lesson's: always known
    if info is None or not isinstance(cases, list) or not cases:
        return 0.0
    sizes = {c.get("name"): _output_bytes(c) for c in cases if isinstance(c, dict)}
    written = (
        sizes.get(timed) if isinstance(timed, str) and timed in sizes else min(sizes.values(), default=0)
    )
    return (written or 0) / info.device_hbm_bandwidth


def _output_bytes(case: dict[str, Any]) -> int:
    total = 0
    for output in case.get("outputs") or []:
        shape, dtype = output.get("shape"), output.get("dtype")
        if not isinstance(shape, list) or not all(isinstance(n, int) and n >= 0 for n in shape):
            continue
        bits = re.search(r"\d+", dtype) if isinstance(dtype, str) else None
        size = 8 if dtype == "bool" else int(bits.group()) if bits else 0
        total += math.prod(shape) * size // 8
    return total


def _plausible(seconds: Any, floor: float = 0.0) -> float | None:
    """`seconds` if a kernel could take that long (and no less than `floor`), else None."""
    if isinstance(seconds, bool) or not isinstance(seconds, int | float):
        return None
    fastest = max(FASTEST_SECONDS, floor)
    return float(seconds) if math.isfinite(seconds) and fastest <= seconds <= SLOWEST_SECONDS else None


def challenge_chip(setup: StepSetup, lesson_chip: str) -> str:
    return setup.chip or lesson_chip


def board(setup: StepSetup, chip: str, students: list[Student], marks: list[Mark]) -> Board:
    """The board of one challenge step: each current student's best on `chip`, the host's measured
    times first, fastest first; equal times share a rank (`ranked`)."""
    names = {s.id: s.name for s in students}
    kept = [
        m
        for m in marks
        if m.step == setup.step
        and m.student_id in names
        and m.best_seconds is not None
        and m.best_chip == chip
    ]
    rows = [
        BoardRow(
            rank=rank,
            name=names[m.student_id],
            seconds=float(m.best_seconds or 0.0),
            basis=m.best_basis,  # type: ignore[arg-type]  # scored() stores only Basis values
            verdict=VERDICT,
            reported=REPORTED[m.best_basis].format(chip=chip),
        )
        for rank, m in ranked(kept, names)
    ]
    return Board(step=setup.step, chip=chip, hidden=setup.board_hidden, rows=rows)


def ranked(marks: list[Mark], names: dict[str, str]) -> list[tuple[int, Mark]]:
    """`marks` in board order, each with its rank (issue 41, fifth round).

    A time the host measured on the chip ranks above every estimate the kernel's own process
    reported: on a server with the challenge's chip a student could send a class run in interpret
    mode and rank, by a made-up estimate a hair above the write floor, above every kernel the host
    timed. And equal times share a rank (1, 1, 3): ties were broken by nickname, which the student
    chooses, so a copied kernel served from the cache (the same time to the last bit) under the
    nickname "!" took first place from the student who wrote it. Names only order the rows of a tie."""
    order = sorted(marks, key=lambda m: (m.best_basis != "measured", m.best_seconds, names[m.student_id]))
    out: list[tuple[int, Mark]] = []
    for place, mark in enumerate(order, start=1):
        tied = bool(out) and _time_of(out[-1][1]) == _time_of(mark)
        out.append((out[-1][0] if tied else place, mark))
    return out


def _time_of(mark: Mark) -> tuple[str, float | None]:
    return mark.best_basis, mark.best_seconds
