"""What the jail costs per job, measured inside the real pool environment (for bench/sandbox_overhead.py).

Run under the same bubblewrap as the pool (`sandbox.jail.outer`). It builds a `sandbox.jail.pool.Pool`
and times one trivial job (a jitted identity, through the same harness) from "about to set up" to
"nothing left", alternately:
- `bare`: fork, put the pipes in place, run the harness, exit; the parent reaps it;
- `jailed`: the pool's own path: job cgroup and scratch tmpfs, fork, every layer of
  `sandbox.jail.child`, the harness, then the pool's teardown (cgroup.kill, reap, unmount, rmdir).
Prints one JSON object with the per-trial seconds of each.
"""

from __future__ import annotations

import json
import os
import selectors
import time
from typing import NoReturn

from sandbox.harness import main as harness
from sandbox.jail import cgroup_layout, cgroups, channel, pool, privilege, seccomp
from sandbox.limits import default_limits
from sandbox.protocol import InterpretOptions, Job, to_json_dict

TRIVIAL = """
import numpy as np
def make_inputs(seed):
    return (np.ones(4, np.float32),)
def reference(x):
    return x
def kernel(x):
    return x
"""


def main(argv: list[str]) -> int:
    config = json.loads(argv[1])
    pool.preload()
    here, _there = channel.pair()
    layout = cgroup_layout.detect()
    pool_cgroups = cgroups.PoolCgroups(layout, config["token"])
    pool_cgroups.start()
    runner = pool.Pool(
        pool.Config(
            token=config["token"],
            slots=1,
            uid_base=config["uid_base"],
            server_uid=0,
            runtime_prefix=config["runtime_prefix"],
            cpu_cores=1.0,
            env=config["env"],
            control_fd=here.fileno(),
        ),
        here,
        layout,
        pool_cgroups,
        seccomp.build(),
    )
    job = Job(
        id="bench",
        source=TRIVIAL,
        chip="v5p",
        mode="interpret",
        options=InterpretOptions(),
        limits=default_limits(wall_seconds=30),
        timing_budget_seconds=0.0,
    )
    payload = json.dumps(to_json_dict(job)).encode()
    seconds: dict[str, list[float]] = {"bare": [], "jailed": []}
    for trial in range(config["trials"]):
        for mode in ("bare", "jailed") if trial % 2 else ("jailed", "bare"):
            seconds[mode].append(_one(runner, mode, payload, f"bench{trial}{mode}"))
    pool_cgroups.close()
    print(json.dumps(seconds))
    return 0


def _one(runner: pool.Pool, mode: str, payload: bytes, job_id: str) -> float:
    pipes = [os.pipe() for _ in range(4)]  # stdin, stdout, stderr, report
    child_ends = [pipes[0][0], pipes[1][1], pipes[2][1], pipes[3][1]]
    t0 = time.perf_counter()
    if mode == "bare":
        pid = os.fork()
        if pid == 0:
            _bare_child(child_ends)
    else:
        limits = default_limits(wall_seconds=30)
        runner._fork(job_id, 0, limits, 1, child_ends)
        pid = runner.jobs[job_id].pid
    for fd in child_ends:
        os.close(fd)
    os.write(pipes[0][1], payload)
    os.close(pipes[0][1])
    events = _drain([pipes[1][0], pipes[2][0], pipes[3][0]])
    _, status, rusage = os.wait4(pid, 0)
    if mode == "jailed":
        job = runner.jobs.pop(job_id)
        runner.by_pid.pop(pid, None)
        job.status, job.rusage = status, rusage
        runner._teardown(job)
    elapsed = time.perf_counter() - t0
    if b'"kind": "done"' not in events or os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{mode} trial failed: {events[-500:]!r}")
    return elapsed


def _bare_child(fds: list[int]) -> NoReturn:
    code = 1
    try:
        _, setup_w = os.pipe()
        stdin, stdout, stderr, events = fds
        privilege.place_fds(stdin, stdout, stderr, events, setup_w)
        os.close(privilege.SETUP_FD)
        code = harness.serve(privilege.EVENTS_FD, set_limits=False)
    finally:
        os._exit(code)


def _drain(fds: list[int]) -> bytes:
    report = bytearray()
    with selectors.DefaultSelector() as sel:
        for fd in fds:
            sel.register(fd, selectors.EVENT_READ)
        while sel.get_map():
            for key, _ in sel.select(30):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    sel.unregister(key.fd)
                    os.close(key.fd)
                elif key.fd == fds[-1]:
                    report += chunk
    return bytes(report)
