"""The JAX runtimes this host runs jobs on: one per JAX version, each its own environment.

A runtime is named by its jax version ("0.11.2"); `runtimes/<version>.txt` pins its packages. The
newest is the project's own JAX: the interpreter running this code (a checkout's `.venv`) for the
local backend, and the job runtime of `scripts/install-job-runtime` for the hardened one. The others
are installed by `scripts/install-runtimes` under the runtimes folder, as `<version>` (a link to the
folder of the install that is current, so a reinstall never pulls a runtime from under a running
pool). Beside each, `runtime.json` is what `sandbox.harness.probe` found under that runtime: its
versions, the playground's features there, and its public Pallas names.

Read from files only: the server and the backends never import JAX. Pure apart from `discover`.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

RUNTIMES_DIR_ENV = "PLAYGROUND_RUNTIMES_DIR"
ROOT_RUNTIMES_DIR = Path("/opt/pallas-playground-runtimes")
PROBE_FILE = "runtime.json"
INSTALLED_STAMP = ".installed"
FEATURES = (
    "interpret_mode",
    "interpret_options",
    "race_detection",
    "core_meshes",
    "sparsecore",
    "lowering_check",
    "ir_views",
    "trace",
    "monitor",
    "interpret_fixes",
)


def version_key(version: str) -> tuple[int, ...]:
    """ "0.12.0.1" → (0, 12, 0, 1), for ordering runtimes."""
    return tuple(int(part) for part in re.findall(r"\d+", version)[:4])


def default_dir(env: Mapping[str, str] = os.environ) -> Path:
    """`PLAYGROUND_RUNTIMES_DIR`, else /opt/pallas-playground-runtimes for root (the hardened
    backend's slot uids must read it), else a folder in the user's cache."""
    if env.get(RUNTIMES_DIR_ENV):
        return Path(env[RUNTIMES_DIR_ENV])
    if os.geteuid() == 0:
        return ROOT_RUNTIMES_DIR
    return Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "pallas-playground" / "runtimes"


@dataclass(frozen=True)
class Feature:
    available: bool
    detail: str  # how it works there, or why it does not ("not available on jax 0.10.2 (…)")


@dataclass(frozen=True)
class RuntimeInfo:
    name: str  # the jax version
    jaxlib: str
    python_version: str
    libtpu: str | None
    # The interpreter the local backend runs this runtime's jobs with.
    python: Path
    # The job runtime the hardened backend mounts (None: the default job runtime, `sandbox.jail.runtime`).
    jail_prefix: Path | None
    features: dict[str, Feature] = field(default_factory=dict)
    # Public names per module alias ("pltpu" -> names), from the probe; empty if it never ran.
    names: dict[str, frozenset[str]] = field(default_factory=dict)

    @property
    def probed(self) -> bool:
        return bool(self.features)


@dataclass(frozen=True)
class RuntimeSet:
    """The installed runtimes, newest first; the first is the default."""

    runtimes: tuple[RuntimeInfo, ...]

    def __post_init__(self) -> None:
        if not self.runtimes:
            raise ValueError("a runtime set needs at least one runtime")
        ordered = tuple(sorted(self.runtimes, key=lambda r: version_key(r.name), reverse=True))
        object.__setattr__(self, "runtimes", ordered)

    @property
    def default(self) -> RuntimeInfo:
        return self.runtimes[0]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.runtimes)

    def get(self, name: str) -> RuntimeInfo | None:
        """The runtime of that jax version; "" is the default."""
        if not name:
            return self.default
        return next((r for r in self.runtimes if r.name == name), None)

    def nearest(self, name: str) -> RuntimeInfo:
        """The installed runtime closest to jax `name` by minor release; of two as close, the newer
        (Pallas adds names faster than it removes them, so code tends to keep working forward)."""
        wanted = version_key(name)

        def distance(runtime: RuntimeInfo) -> tuple[int, int, tuple[int, ...]]:
            have = version_key(runtime.name)
            minor = abs(_release(have) - _release(wanted))
            rest = tuple(abs(a - b) for a, b in zip(have[2:], wanted[2:], strict=False))
            return minor, 0 if have >= wanted else 1, rest

        return min(self.runtimes, key=distance)

    def elsewhere(self, name: str) -> dict[str, str]:
        """Pallas names runtime `name` lacks and where they exist, as an error message says it:
        {"pltpu.TensorCoreMesh": "0.11.2 and later"}."""
        runtime = self.get(name)
        if runtime is None or not runtime.names:
            return {}
        found: dict[str, list[str]] = {}
        for other in self.runtimes:
            for alias, names in other.names.items():
                for missing in names - runtime.names.get(alias, frozenset()):
                    found.setdefault(f"{alias}.{missing}", []).append(other.name)
        probed = [r.name for r in self.runtimes if r.names]
        return {qualified: where(versions, probed) for qualified, versions in sorted(found.items())}


def _release(version: tuple[int, ...]) -> int:
    """(0, 12, 0, 1) → 12: major and minor as one number."""
    major, minor = (*version, 0, 0)[:2]
    return major * 1000 + minor


def where(have: Sequence[str], every: Sequence[str]) -> str:
    """Where a name exists, in the fewest words: "0.11.2 and later", "0.10.2 and earlier", or a list."""
    order = sorted(every, key=version_key)
    have_sorted = sorted(have, key=version_key)
    first, last = order.index(have_sorted[0]), order.index(have_sorted[-1])
    contiguous = len(have_sorted) > 1 and order[first : last + 1] == have_sorted
    if contiguous and last == len(order) - 1 and first > 0:
        return f"{have_sorted[0]} and later"
    if contiguous and first == 0 and last < len(order) - 1:
        return f"{have_sorted[-1]} and earlier"
    return ", ".join(have_sorted[:-1]) + (" and " if len(have_sorted) > 1 else "") + have_sorted[-1]


def read_probe(path: Path) -> dict[str, object]:
    """A runtime's `runtime.json`, or {} if it is missing or unreadable."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def from_probe(name: str, probe: Mapping[str, object], python: Path, jail_prefix: Path | None) -> RuntimeInfo:
    features_raw = probe.get("features")
    names_raw = probe.get("names")
    features = {
        key: Feature(bool(value.get("available")), str(value.get("detail", "")))
        for key, value in (features_raw.items() if isinstance(features_raw, dict) else ())
        if isinstance(value, dict)
    }
    names = {
        alias: frozenset(str(n) for n in listed)
        for alias, listed in (names_raw.items() if isinstance(names_raw, dict) else ())
        if isinstance(listed, list)
    }
    return RuntimeInfo(
        name=name,
        jaxlib=str(probe.get("jaxlib") or name),
        python_version=str(probe.get("python") or ""),
        libtpu=str(probe["libtpu"]) if probe.get("libtpu") else None,
        python=python,
        jail_prefix=jail_prefix,
        features=features,
        names=names,
    )


def own_jax() -> str | None:
    """The jax version of the interpreter running this code (read from metadata, not imported)."""
    try:
        return importlib.metadata.version("jax")
    except importlib.metadata.PackageNotFoundError:
        return None


def _own_facts() -> dict[str, object]:
    """What metadata tells of this interpreter's own runtime, before (or without) a probe."""

    def version(name: str) -> str | None:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            return None

    return {
        "jaxlib": version("jaxlib"),
        "python": platform.python_version(),
        "libtpu": version("libtpu") or version("libtpu-nightly"),
    }


def discover(folder: Path | None = None, own_python: Path = Path(sys.executable)) -> RuntimeSet:
    """The runtimes installed here: this interpreter's own JAX, then every installed one in `folder`."""
    folder = folder if folder is not None else default_dir()
    found: dict[str, RuntimeInfo] = {}
    own = own_jax()
    if own is not None:
        facts = {**_own_facts(), **read_probe(folder / own / PROBE_FILE)}
        found[own] = from_probe(own, facts, own_python, None)
    for path in sorted(folder.iterdir()) if folder.is_dir() else ():
        if path.name in found or path.name.startswith(".") or not (path / INSTALLED_STAMP).is_file():
            continue
        prefix = path.resolve()
        python = prefix / "venv" / "bin" / "python"
        if python.exists():
            found[path.name] = from_probe(path.name, read_probe(path / PROBE_FILE), python, prefix)
    if not found:
        raise FileNotFoundError(f"no JAX runtime: jax is not installed here and {folder} holds none")
    return RuntimeSet(tuple(found.values()))
