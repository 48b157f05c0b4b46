"""What this server runs kernels on: package versions (read from metadata, JAX is never imported),
the device, and the sandbox. One source for `/api/version`, the versions a share or lesson records,
and the part of a run's cache key that depends on versions."""

from __future__ import annotations

import importlib.metadata
import platform

from sandbox.protocol import chip_info
from server.settings import Settings
from server.wire.schemas import VersionInfo

# The versions a share or lesson records (the link says so when today's differ).
RECORDED = ("python", "jax", "jaxlib", "libtpu")


def dist_version(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def running(settings: Settings, backend_name: str, backend_note: str) -> VersionInfo:
    tpu = settings.has_tpu()
    chip = settings.tpu_chip()
    return VersionInfo(
        playground=dist_version("pallas-playground") or "dev",
        python=platform.python_version(),
        jax=dist_version("jax"),
        jaxlib=dist_version("jaxlib"),
        libtpu=dist_version("libtpu") or dist_version("libtpu-nightly"),
        device_kind=(f"{chip_info(chip).title} (native)" if chip else "TPU (native)")
        if tpu
        else f"{platform.machine()} CPU (TPU interpret mode)",
        mode="tpu" if tpu else "interpret",
        sandbox=backend_name,
        sandbox_note=backend_note,
    )


def recorded(info: VersionInfo) -> dict[str, str | None]:
    """The versions a share or lesson records, from what the server runs."""
    return {name: getattr(info, name) for name in RECORDED}


def cache_key() -> str:
    """The versions a cached result depends on."""
    found = []
    for name in ("jax", "jaxlib", "libtpu", "pallas-playground"):
        version = dist_version(name)
        if version is not None:
            found.append(f"{name}=={version}")
    return ",".join(found)
