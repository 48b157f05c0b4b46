"""The forked job child: apply every layer in order, then run the same harness as `-m sandbox.harness`.

Runs in the pool's freshly forked child, still as root. If any layer fails, the job must not run:
the reason goes to the pool on the setup fd and the child exits with `SETUP_FAILED`. Nothing here
returns to the pool's code: the child always leaves through `os._exit`.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from dataclasses import dataclass
from typing import Any, NoReturn

from sandbox.harness import main as harness
from sandbox.jail import landlock, namespaces, privilege
from sandbox.jail.cgroups import JobCgroup
from sandbox.jail.runtime import APP_DIR
from sandbox.protocol import Limits

SETUP_FAILED = 125
DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")


@dataclass(frozen=True)
class Spec:
    """Everything the child needs, prepared by the pool before the fork."""

    job: str
    uid: int
    limits: Limits
    env: dict[str, str]
    scratch: str
    cgroup: JobCgroup
    memory_in_cgroup: bool
    pool_pid: int
    runtime_prefix: str
    seccomp: Any  # a built pyseccomp filter, loaded last
    # A chip slot's job: its chips' device nodes, and the CPUs its thread pools may use.
    tpu_nodes: tuple[str, ...] = ()
    cpus: tuple[int, ...] = ()


def run(spec: Spec, fds: list[int], setup_fd: int) -> NoReturn:
    code = SETUP_FAILED
    try:
        tell = setup_fd
        try:
            stdin, stdout, stderr, events = fds
            privilege.place_fds(stdin, stdout, stderr, events, setup_fd)  # first: fds 0-4 from here on
            tell = privilege.SETUP_FD
            _jail(spec)
        except BaseException:
            os.write(tell, traceback.format_exc(limit=4).encode()[-4000:])
            raise
        os.close(privilege.SETUP_FD)
        code = 1  # from here on a failure is the job's (or the harness's), not the jail's
        code = harness.serve(privilege.EVENTS_FD, set_limits=False)
    except SystemExit as exc:  # user code called sys.exit(): exit as a fresh interpreter would
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:
        traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BaseException):
                stream.flush()
        os._exit(code)


def _jail(spec: Spec) -> None:
    """The layers, in the order of notes/sandbox.md §5a; each depends on the ones before it."""
    os.setsid()
    spec.cgroup.join()  # everything below is charged to, and killable with, the job
    privilege.reset_signals()
    namespaces.enter(spec.scratch)
    privilege.set_rlimits(spec.limits, spec.memory_in_cgroup, pinned_memory=bool(spec.tpu_nodes))
    if spec.cpus:
        # libtpu sizes its thread pools by the CPUs it may run on: a slot's share, not the host's 224.
        os.sched_setaffinity(0, spec.cpus)
    privilege.replace_environ(spec.env)
    landlock.restrict(
        landlock.Policy(
            read_only=("/usr", "/etc", spec.runtime_prefix, APP_DIR, "/proc", "/sys"),
            read_write=(namespaces.JOB_TMP,),
            devices=DEVICES + spec.tpu_nodes,
            # libtpu lists /dev and /dev/vfio to find its chips; listing shows names, not contents.
            listable=("/dev",) if spec.tpu_nodes else (),
        )
    )
    privilege.drop_to(spec.uid, spec.uid)
    privilege.never_dumped()
    privilege.die_with_parent(spec.pool_pid)
    spec.seccomp.load()
