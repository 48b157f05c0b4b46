"""The one rule both queues dispatch long runs (sweep shards) by: never every slot of a pool."""

import dataclasses

from sandbox.jobs.build import make_job
from sandbox.protocol import SweepSpec
from server.queue import long_runs


def test_a_sweeps_shard_is_long_and_a_run_is_not():
    run = make_job("x = 1\n", entry=None, chip="v5e")
    shard = dataclasses.replace(run, sweep=SweepSpec(params={"bm": (8,)}, size={"m": 8}))
    assert not long_runs.is_long(run) and long_runs.is_long(shard)


def test_long_runs_leave_one_slot_of_several_and_may_use_the_only_one():
    assert [long_runs.long_slots(n) for n in (0, 1, 2, 3, 8)] == [1, 1, 1, 2, 7]
    assert long_runs.may_start_long(2, 0) and not long_runs.may_start_long(2, 1)
    assert long_runs.may_start_long(1, 0) and not long_runs.may_start_long(1, 1)
    assert long_runs.may_start_long(8, 6) and not long_runs.may_start_long(8, 7)
