"""Choosing a backend: the capability probe, the loopback rule for `local`, cgroup layout detection."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from sandbox.backends import (
    UnsafeBindError,
    capability_report,
    check_bind_allowed,
    create_backend,
    default_backend_name,
)
from sandbox.jail import cgroup_layout, probe
from sandbox.jail.runtime import Runtime


@pytest.mark.parametrize("host", ["127.0.0.1", "127.3.4.5", "localhost", "::1", "[::1]"])
def test_local_backend_may_serve_loopback(host):
    check_bind_allowed("local", host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.10", "example.org", ""])
def test_local_backend_refuses_anything_else(host):
    with pytest.raises(UnsafeBindError, match="only serves on loopback"):
        check_bind_allowed("local", host)


def test_hardened_backend_may_serve_anywhere():
    check_bind_allowed("hardened", "0.0.0.0")


def test_local_backend_warns_loudly(caplog):
    with caplog.at_level(logging.WARNING):
        create_backend("local").close()
    assert any(r.levelno == logging.WARNING and "development only" in r.message for r in caplog.records)


def test_default_backend_follows_the_probe():
    found = probe.probe()
    assert default_backend_name() == ("hardened" if found.ok else "local")
    assert capability_report() == found.report()
    assert capability_report().startswith("hardened: " if found.ok else "local (hardened unavailable: ")


def test_probe_names_what_is_missing(monkeypatch, tmp_path):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    found = probe.probe(Runtime(prefix=tmp_path / "nothing"))
    assert not found.ok
    report = found.report()
    assert "not root (euid 1000)" in report
    assert "job runtime not installed" in report


@pytest.mark.skipif(os.geteuid() != 0 or not Runtime().python.exists(), reason="needs root and the runtime")
def test_this_machine_runs_the_hardened_backend():
    # CI runs as root after scripts/install-job-runtime: there, the hardened backend must be the default.
    assert default_backend_name() == "hardened", capability_report()


# -- cgroup layout detection, on recorded /proc files of the three kinds of machine --------------

HYBRID_MOUNTS = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
HYBRID_CGROUP = "8:pids:/\n4:memory:/process_api/abc\n1:cpu:/\n9:name=systemd:/\n0::/\n"


def write(tmp_path: Path, mounts: str, groups: str) -> tuple[str, str]:
    (tmp_path / "mountinfo").write_text(mounts)
    (tmp_path / "cgroup").write_text(groups)
    return str(tmp_path / "mountinfo"), str(tmp_path / "cgroup")


def test_detect_hybrid_uses_v1_controllers_and_v2_kill(tmp_path):
    layout = cgroup_layout.detect(*write(tmp_path, HYBRID_MOUNTS, HYBRID_CGROUP))
    assert layout.mode == "hybrid"
    assert layout.memory is not None and layout.memory.version == 1
    assert layout.memory.here == Path("/sys/fs/cgroup/memory/process_api/abc")
    assert layout.pids is not None and layout.pids.version == 1
    assert layout.kill is not None and layout.kill.mount == Path("/sys/fs/cgroup/unified")


def test_detect_pure_v2_uses_it_for_everything(tmp_path):
    root = tmp_path / "cg"
    (root / "system.slice" / "playground.service").mkdir(parents=True)
    (root / "system.slice" / "playground.service" / "cgroup.controllers").write_text(
        "cpuset cpu io memory pids\n"
    )
    mounts = f"30 23 0:27 / {root} rw,nosuid,nodev,noexec,relatime - cgroup2 cgroup2 rw,nsdelegate\n"
    layout = cgroup_layout.detect(*write(tmp_path, mounts, "0::/system.slice/playground.service\n"))
    assert layout.mode == "v2"
    assert layout.memory is layout.pids is layout.cpu is layout.kill
    assert layout.memory is not None and layout.memory.here == root / "system.slice/playground.service"


def test_a_v2_runner_in_its_supervisor_leaf_makes_pools_beside_it(tmp_path):
    # v2 enables controllers below a cgroup only while no process lives in it: the runner sits in a
    # leaf `supervisor`, and its pools go in the (process-free) delegated cgroup above it.
    root = tmp_path / "cg"
    (root / "runner.service" / "supervisor").mkdir(parents=True)
    (root / "runner.service" / "cgroup.controllers").write_text("cpu memory pids\n")
    mounts = f"30 23 0:27 / {root} rw,relatime - cgroup2 cgroup2 rw\n"
    layout = cgroup_layout.detect(*write(tmp_path, mounts, "0::/runner.service/supervisor\n"))
    assert layout.memory is not None and layout.memory.here == root / "runner.service"
    assert layout.memory.controllers == {"cpu", "memory", "pids"}


def test_detect_v1_without_unified_kills_by_signal(tmp_path):
    mounts = "\n".join(line for line in HYBRID_MOUNTS.splitlines() if "cgroup2" not in line) + "\n"
    layout = cgroup_layout.detect(*write(tmp_path, mounts, HYBRID_CGROUP.replace("0::/\n", "")))
    assert layout.mode == "v1" and layout.kill is None
    assert "SIGKILL of cgroup.procs" in layout.describe()


def test_detect_reports_missing_controllers(tmp_path):
    mounts = "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
    layout = cgroup_layout.detect(*write(tmp_path, mounts, "0::/\n"))
    assert layout.problem() == "no usable cgroup controller for memory and pids"


# -- the outer jail's command line ---------------------------------------------------------------


def test_outer_jail_mounts_nothing_of_the_server(tmp_path):
    from sandbox.jail import outer

    args = outer.bwrap_args(Runtime(prefix=tmp_path / "rt"), tmp_path / "checkout" / "sandbox", 9)
    for flag in ("--unshare-pid", "--as-pid-1", "--unshare-net", "--clearenv", "--die-with-parent"):
        assert flag in args
    sources = {
        args[i + 1] for i, a in enumerate(args) if a in ("--ro-bind", "--bind", "--ro-bind-try", "--dev-bind")
    }
    allowed = {"/usr", "/sys", "/sys/fs/cgroup", "/etc/ld.so.cache", "/etc/localtime", str(tmp_path / "rt")}
    allowed |= {str(tmp_path / "checkout" / "sandbox")} | {
        f"/{d}" for d in ("bin", "sbin", "lib", "lib32", "lib64")
    }
    assert sources <= allowed, sources - allowed
    assert args[args.index("--cap-drop") + 1] == "ALL"


def test_outer_jail_passes_only_the_chip_slots_device_nodes(tmp_path):
    from sandbox.jail import outer

    nodes = ["/dev/vfio/vfio", "/dev/vfio/17", "/dev/vfio/vfio", "/dev/vfio/19"]
    args = outer.bwrap_args(Runtime(prefix=tmp_path), tmp_path, 9, nodes)
    binds = [args[i + 1] for i, a in enumerate(args) if a == "--dev-bind"]
    assert binds == ["/dev/vfio/17", "/dev/vfio/19", "/dev/vfio/vfio"]
    # made before the binds, traversable: bwrap would make a missing parent 0700, closed to slot uids
    folder = args.index("/dev/vfio")
    assert args[folder - 3 : folder] == ["--perms", "0755", "--dir"] and folder < args.index("--dev-bind")
    assert "--dev-bind" not in outer.bwrap_args(Runtime(prefix=tmp_path), tmp_path, 9)
