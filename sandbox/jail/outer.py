"""The outer jail: the bubblewrap command line the pool runs under.

Own pid namespace with the pool as its init (`--as-pid-1`), no network, IPC or UTS of the host, an
empty environment, a capability set cut to what the pool needs, and a root made of read-only binds
of /usr, the job runtime and the sandbox package (at `APP_DIR`), plus /sys (with cgroupfs writable:
the pool manages job cgroups) and private /proc, /dev, /tmp and /run. Nothing of the server (its
checkout, config, database, secrets, /root, /home, /etc) is mounted.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sandbox.jail.runtime import APP_DIR, Runtime

POOL_CAPS = ("CAP_SYS_ADMIN", "CAP_SETUID", "CAP_SETGID", "CAP_KILL", "CAP_DAC_OVERRIDE")
_BOOT = "import sys; sys.path.insert(0, {app!r}); from {module} import main; sys.exit(main(sys.argv))"


def command(
    runtime: Runtime,
    sandbox_dir: Path,
    info_fd: int,
    module: str,
    config: dict[str, Any],
    device_nodes: Sequence[str] = (),
) -> list[str]:
    """bwrap … python -I -B -u -c "<module>.main(argv)" CONFIG_JSON."""
    boot = _BOOT.format(app=APP_DIR, module=module)
    python = [str(runtime.python), "-I", "-B", "-u", "-c", boot, json.dumps(config)]
    return [*bwrap_args(runtime, sandbox_dir, info_fd, device_nodes), *python]


def bwrap_args(
    runtime: Runtime, sandbox_dir: Path, info_fd: int, device_nodes: Sequence[str] = ()
) -> list[str]:
    """`device_nodes`: the TPU chips' nodes this pool's chip slots own (`TpuSlot.device_nodes`);
    no other host device reaches the pool."""
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
    nodes = sorted(set(device_nodes))
    for folder in sorted({os.path.dirname(n) for n in nodes} - {"/dev"}):
        args += ["--perms", "0755", "--dir", folder]  # e.g. /dev/vfio, which slot uids must traverse
    for node in nodes:
        args += ["--dev-bind", node, node]
    args += ["--info-fd", str(info_fd)]
    return args
