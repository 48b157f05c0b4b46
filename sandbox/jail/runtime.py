"""Where the job runtime lives: an interpreter and venv that an unprivileged uid can run.

`scripts/install-job-runtime` creates it (root-owned, world-readable); the project's own venv cannot
serve, because it points into /root, which a slot uid cannot read. The sandbox package is not part
of it: the backend mounts the checkout's `sandbox/` read-only at `APP_DIR` inside the pool's root.
"""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass
from pathlib import Path

DEFAULT_PREFIX = Path("/opt/pallas-playground")
APP_DIR = "/app"


@dataclass(frozen=True)
class Runtime:
    prefix: Path = DEFAULT_PREFIX
    # The (package, version) pairs this runtime must hold: its own JAX (`runtimes/X.txt`), not the
    # server's. None: the server's own jax and jaxlib (the default runtime is installed at its pin).
    pins: tuple[tuple[str, str], ...] | None = None

    @property
    def python(self) -> Path:
        return self.prefix / "venv" / "bin" / "python"

    @property
    def site_packages(self) -> Path:
        return self.prefix / "venv" / "lib" / "python3.12" / "site-packages"

    def problem(self, tpu: bool = False) -> str | None:
        """None when installed and holding the JAX it is pinned to, else what is wrong.

        `tpu`: jobs will run on chips, so the runtime must hold libtpu too (without it JAX finds no
        TPU and every native run would fail).
        """
        if not (self.prefix / ".installed").is_file() or not self.python.exists():
            return f"job runtime not installed at {self.prefix} (run scripts/install-job-runtime as root)"
        if tpu and not any(self.site_packages.glob("libtpu-*.dist-info")):
            return (
                f"this host has TPU chips, but the job runtime at {self.prefix} has no libtpu "
                "(run scripts/install-job-runtime --extra tpu)"
            )
        for dist, want in self.pins if self.pins is not None else _own_pins():
            if not (self.site_packages / f"{dist}-{want}.dist-info").is_dir():
                return (
                    f"job runtime at {self.prefix} lacks {dist}=={want} (rerun scripts/install-job-runtime)"
                )
        return None


def _own_pins() -> tuple[tuple[str, str], ...]:
    """This interpreter's jax and jaxlib (the server's pin), those that are installed."""
    found = []
    for dist in ("jax", "jaxlib"):
        try:
            found.append((dist, importlib.metadata.version(dist)))
        except importlib.metadata.PackageNotFoundError:
            continue
    return tuple(found)
