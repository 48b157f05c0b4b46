"""What ranks on a class board: only a `passed` verdict of the trusted checker, timed on the board's
chip (the estimate there, or on a TPU the host's own measurement, never the kernel process's); and
the in-process live state's rules."""

from __future__ import annotations

import asyncio
import concurrent.futures

import pytest

from sandbox.jobs.build import make_job
from sandbox.results.checked_by import CHECKED_BY_AUTHOR, CHECKED_BY_CATALOG, CHECKED_BY_LESSON
from sandbox.results.classify import classify
from server.classroom.board import score
from server.classroom.live import InProcessLive
from tests.executions import finished


def run_alone(coroutine) -> None:
    """asyncio.run in a thread of its own: it refuses a thread whose loop another test left running."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, coroutine).result()


ESTIMATE = {"chip": "v6e", "seconds": 2e-5}
CHECKED = {
    "status": "passed",
    "checked_by": CHECKED_BY_LESSON,
    "chip": "v6e",
    "estimate": ESTIMATE,
}


ON_CHIP = {**CHECKED, "ran_on_chip": True}  # the host's word: the job ran in a TPU chip slot
HOST = {"seconds": 3e-5, "chip": "v6e", "case": "", "note": "measured by the host"}  # sandbox.backends.rerun
REFUSED = {"seconds": None, "chip": "v6e", "case": "", "note": "not measured by the host: refused"}


@pytest.mark.parametrize(
    ("result", "expected"),
    [
        (CHECKED, (2e-5, "estimate")),
        ({**CHECKED, "status": "no_kernel"}, None),
        ({**CHECKED, "status": "mismatch"}, None),
        ({**CHECKED, "checked_by": ""}, None),  # nothing compared it outside the kernel's process
        ({**CHECKED, "checked_by": CHECKED_BY_AUTHOR}, None),  # the student's own reference (issue 41)
        ({**CHECKED, "checked_by": CHECKED_BY_CATALOG}, (2e-5, "estimate")),
        ({**CHECKED, "chip": "v5e"}, None),  # another chip than the board's
        ({**CHECKED, "estimate": None}, None),
        ({**ON_CHIP, "host_timing": HOST, "timing": {"kernel": {"median": 9.0}}}, (3e-5, "measured")),
        ({**CHECKED, "timing": {"simulated": True, "kernel": {"median": 9.0}}}, (2e-5, "estimate")),
        # Issue 41: times the kernel's process made up. On a chip only the host's time counts: a run
        # whose program the host could not time does not rank (not even by its estimate).
        ({**CHECKED, "timing": {"simulated": False, "kernel": {"median": 1e-9}}}, (2e-5, "estimate")),
        ({**ON_CHIP, "timing": {"simulated": False, "kernel": {"median": 3e-5}}}, None),
        ({**ON_CHIP, "host_timing": REFUSED, "timing": {"kernel": {"median": 3e-5}}}, None),
        ({**ON_CHIP, "host_timing": {**HOST, "seconds": -3.0}}, None),
        ({**ON_CHIP, "host_timing": {**HOST, "chip": "v5e"}}, None),
        ({**CHECKED, "host_timing": {**HOST, "note": "not measured: not on a chip", "seconds": None}}, (2e-5, "estimate")),
        ({**CHECKED, "estimate": {**ESTIMATE, "seconds": -1.0}}, None),
        ({**CHECKED, "estimate": {**ESTIMATE, "seconds": 1e-9}}, None),
        ({**CHECKED, "estimate": {**ESTIMATE, "seconds": "2e-5"}}, None),
        ({**CHECKED, "estimate": {**ESTIMATE, "seconds": 1e9}}, None),
    ],
    ids=[
        "estimate", "no_kernel", "mismatch", "unchecked", "own-reference", "catalog", "other-chip", "no-estimate", "tpu", "simulated",
        "measured-on-a-cpu-host", "own-median-on-a-chip", "host-refused", "negative-host-time", "host-on-other-chip",
        "simulated-with-note", "negative-estimate", "one-ns-estimate",
        "text-estimate", "hours-estimate",
    ],
)  # fmt: skip
def test_only_checked_correct_kernels_score(result, expected):
    assert score(result, "v6e") == expected


def case(name: str, shape: list[int], dtype: str = "float32") -> dict:
    """A case as the trusted checker reports it: its one output's shape and dtype."""
    return {"name": name, "outputs": [{"name": "out", "shape": shape, "dtype": dtype}]}


# 4096² f32 is 64 MiB: a v6e (1.64 TB/s) needs 40.9 µs to write it; 256² takes 0.16 µs.
BIG, SMALL = case("big", [4096, 4096]), case("small", [256, 256])


@pytest.mark.parametrize(
    ("cases", "timed", "estimate", "expected"),
    [
        ([BIG], "big", 2e-5, None),  # under the time the chip needs to write the output
        ([BIG], "big", 5e-5, (5e-5, "estimate")),
        ([SMALL, BIG], "small", 2e-5, (2e-5, "estimate")),  # the small case was timed
        ([SMALL, BIG], "no such case", 2e-5, (2e-5, "estimate")),  # the smallest case's floor, at most
        ([case("big", [4096, 4096], "bfloat16")], "big", 2e-5, None),  # 32 MiB: 20.5 µs
        ([case("big", [4096, 4096], "int4")], "big", 2e-5, (2e-5, "estimate")),  # 8 MiB: 5.1 µs
        ([case("odd", [-1, 10**30], "float32")], "odd", 2e-5, (2e-5, "estimate")),  # no shape, no floor
    ],
    ids=["under-the-floor", "over-the-floor", "small-case", "unknown-case", "bf16", "int4", "bad-shape"],
)
def test_a_time_under_what_writing_the_outputs_takes_does_not_rank(cases, timed, estimate, expected):
    result = {
        **CHECKED,
        "cases": cases,
        "timing": {"case": timed},
        "estimate": {**ESTIMATE, "seconds": estimate},
    }
    assert score(result, "v6e") == expected
    measured = {
        **result,
        "ran_on_chip": True,
        "host_timing": {**HOST, "case": timed, "seconds": estimate},
    }
    assert score({**measured, "estimate": None}, "v6e") == (
        None if expected is None else (estimate, "measured")
    )


def test_live_state_keeps_hands_in_order_and_throttles_edits():
    async def scenario():
        live = InProcessLive()
        assert await live.report_editing("c", "ada", 1) is True
        assert await live.report_editing("c", "ada", 1) is False  # the same step, just now
        assert await live.report_editing("c", "ada", 2) is True
        for who in ("bob", "ada", "bob"):
            await live.set_hand("c", who, True)
        await live.set_follow("c", 2)
        state = await live.state("c")
        assert [sid for sid, _ in state.hands] == ["bob", "ada"] and state.follow == 2
        assert state.editing["ada"].step == 2
        await live.forget_student("c", "bob")
        assert [sid for sid, _ in (await live.state("c")).hands] == ["ada"]
        assert [await live.admit_join("1.2.3.4", 2) for _ in range(3)][:2] == [0.0, 0.0]
        assert 0 < await live.admit_join("1.2.3.4", 2) <= 60

    run_alone(scenario())


def test_a_change_wakes_the_streams_of_its_class_only():
    async def scenario():
        live = InProcessLive()
        mine, other = live.changes("c", 5.0), live.changes("d", 0.05)
        waiting = asyncio.ensure_future(anext(mine))
        await asyncio.sleep(0)
        await live.publish("c", "hands")
        change = await asyncio.wait_for(waiting, 1.0)
        assert change is not None and change.kind == "hands"
        assert await anext(other) is None  # class d heard nothing: its idle tick

    run_alone(scenario())


def test_redis_out_of_reach_is_a_503_not_a_500():
    from server.classroom.live_redis import RedisLive
    from server.problems import ProblemError

    async def scenario():
        live = RedisLive("redis://127.0.0.1:1/0", "t:")  # nothing listens on port 1
        try:
            with pytest.raises(ProblemError) as refused:
                await live.set_hand("c", "ada", True)
        finally:
            await live.close()
        assert refused.value.status == 503 and refused.value.headers == {"Retry-After": "5"}

    run_alone(scenario())


def test_ran_on_chip_is_the_hosts_word_never_the_jobs():
    job = make_job("def kernel(x): ...\n")
    assert classify(job, finished()).ran_on_chip is False  # whatever the job's events say
    assert classify(job, finished(on_chip=True)).ran_on_chip is True


def test_the_hosts_times_rank_above_reported_estimates_and_ties_share_a_rank():
    """Issue 41, fifth round: a reported estimate (an interpret-mode run on a server with the chip,
    1.1 µs made up) never ranks above a time the host measured; equal times share a rank, whatever
    nickname a copier of a cached result chose."""
    from server.classroom.board import board
    from server.store.class_steps import Mark, StepSetup
    from server.store.classes import Student

    students = [
        Student("c", sid, name) for sid, name in [("a", "ada"), ("b", "!"), ("e", "eve"), ("d", "dan")]
    ]
    marks = [
        Mark("a", 1, 0.0, 4e-5, "measured", "v5e"),
        Mark("b", 1, 0.0, 4e-5, "measured", "v5e"),  # the same time: a cache hit of ada's kernel
        Mark("e", 1, 0.0, 1.1e-6, "estimate", "v5e"),
        Mark("d", 1, 0.0, 6e-5, "measured", "v5e"),
    ]
    rows = board(StepSetup(1, "challenge"), "v5e", students, marks).rows
    assert [(r.rank, r.name, r.basis) for r in rows] == [
        (1, "!", "measured"),
        (1, "ada", "measured"),
        (3, "dan", "measured"),
        (4, "eve", "estimate"),
    ]
