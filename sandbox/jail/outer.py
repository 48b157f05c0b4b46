"""The outer jail: the bubblewrap command line the pool runs under.

Own pid namespace with the pool as its init (`--as-pid-1`), no network, IPC or UTS of the host, an
empty environment, a capability set cut to what the pool needs, and a root made of read-only binds
of /usr, the job runtime and the sandbox package (at `APP_DIR`), plus /sys (with cgroupfs writable:
the pool manages job cgroups) and private /proc, /dev, /tmp and /run. Nothing of the server (its
checkout, config, database, secrets, /root, /home, /etc) is mounted.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
from pathlib import Path
from typing import Any

from sandbox.jail.runtime import APP_DIR, Runtime

TPU_DEVICE_GLOBS = ("/dev/accel*", "/dev/vfio/*")  # v4/v5p expose accel nodes, v5e/v6e VFIO groups
POOL_CAPS = ("CAP_SYS_ADMIN", "CAP_SETUID", "CAP_SETGID", "CAP_KILL", "CAP_DAC_OVERRIDE")
_BOOT = "import sys; sys.path.insert(0, {app!r}); from {module} import main; sys.exit(main(sys.argv))"


def command(
    runtime: Runtime, sandbox_dir: Path, info_fd: int, module: str, config: dict[str, Any]
) -> list[str]:
    """bwrap … python -I -B -u -c "<module>.main(argv)" CONFIG_JSON."""
    boot = _BOOT.format(app=APP_DIR, module=module)
    python = [str(runtime.python), "-I", "-B", "-u", "-c", boot, json.dumps(config)]
    return [*bwrap_args(runtime, sandbox_dir, info_fd), *python]


def bwrap_args(runtime: Runtime, sandbox_dir: Path, info_fd: int) -> list[str]:
    bwrap = shutil.which("bwrap") or "bwrap"
    # --as-pid-1: the pool itself is the namespace's init (it reaps everything, and when it dies the
    # kernel kills every job); with bwrap's own init in between, that init would be left a zombie.
    args = [bwrap, "--unshare-pid", "--as-pid-1", "--unshare-net", "--unshare-ipc", "--unshare-uts"]
    args += ["--die-with-parent", "--new-session", "--clearenv", "--cap-drop", "ALL"]
    for cap in POOL_CAPS:
        args += ["--cap-add", cap]
    prefix = str(runtime.prefix)
    # bwrap makes missing parents of a mount point mode 0700; jobs (slot uids) must traverse them.
    parents = {str(p) for d in ("/etc/x", f"{prefix}/x", f"{APP_DIR}/x") for p in Path(d).parents}
    for parent in sorted(parents - {"/"}):
        args += ["--perms", "0755", "--dir", parent]
    args += ["--ro-bind", "/usr", "/usr"]
    for top in ("bin", "sbin", "lib", "lib32", "lib64"):
        path = Path("/") / top
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    for etc in ("/etc/ld.so.cache", "/etc/localtime"):
        args += ["--ro-bind-try", etc, etc]
    args += ["--ro-bind", prefix, prefix, "--ro-bind", str(sandbox_dir), f"{APP_DIR}/sandbox"]
    args += ["--ro-bind", "/sys", "/sys", "--bind", "/sys/fs/cgroup", "/sys/fs/cgroup"]
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/run", "--chdir", "/"]
    for node in tpu_device_nodes():
        args += ["--dev-bind", node, node]
    args += ["--info-fd", str(info_fd)]
    return args


def tpu_device_nodes() -> list[str]:
    """The TPU device nodes of this host (none on a CPU machine); only these reach the jobs."""
    return sorted(path for pattern in TPU_DEVICE_GLOBS for path in glob.glob(pattern))
