"""Measured runs kept beside their estimates, so the time model can be checked on the operator's chips.

`python -m sandbox tune … --measure` appends one JSON line per measured config to a file
(`--record`, default `tune-measurements.jsonl`): what was run (file, entry, parameters, target
size, chip and the device JAX reported), the model's estimate with its band, and the device time
and host dispatch the profiler traces gave. `compare` reads such a file back into the model's
error per line, the number `tests/model/test_validation.py` computes for published points.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sandbox.protocol import ConfigResult

DEFAULT_PATH = Path("tune-measurements.jsonl")


def records(
    configs: Iterable[ConfigResult],
    *,
    chip: str,
    file: str,
    entry: str | None,
    size: dict[str, int],
    jax_version: str,
    device: str = "",
    libtpu: str | None = None,
    commit: str = "",
) -> list[dict[str, Any]]:
    """One record per config that was measured: `device` is the kind JAX reported (`TPU v5 lite`),
    `commit` the playground's own (the model that made the estimate)."""
    found = []
    for c in configs:
        if c.measured_seconds is None:
            continue
        e = c.estimate
        found.append(
            {
                "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "chip": chip,
                "jax": jax_version,
                "libtpu": libtpu,
                "device": device,
                "commit": commit,
                "file": file,
                "entry": entry,
                "params": dict(c.params),
                "size": dict(size),
                "estimated_seconds": c.estimated_seconds,
                "low_seconds": e.low_seconds if e else None,
                "high_seconds": e.high_seconds if e else None,
                "family": e.family if e else None,
                "validation": e.validation if e else None,
                "measured_device_seconds": c.measured_seconds,
                "measured_host_seconds": c.measured_host_seconds,
                "xla_estimated_seconds": e.xla_seconds if e else None,
                "xla_measured_device_seconds": c.xla_measured_seconds,
                **({"xla_not_measured": c.xla_not_measured} if c.xla_not_measured else {}),
            }
        )
    return found


def playground_commit() -> str:
    """The checkout's commit (with `+` when it has changes), or "" outside a git checkout; a copy
    without its git directory (as shipped to a TPU VM) names it in `PLAYGROUND_COMMIT`."""
    if os.environ.get("PLAYGROUND_COMMIT"):
        return os.environ["PLAYGROUND_COMMIT"]
    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(
            ["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
        )
        dirty = subprocess.run(
            ["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except (OSError, subprocess.SubprocessError):
        return ""
    commit = head.stdout.strip() if head.returncode == 0 else ""
    return commit + ("+" if commit and dirty.stdout.strip() else "")


def append(path: Path, found: list[dict[str, Any]]) -> None:
    with path.open("a", encoding="utf-8") as out:
        for record in found:
            out.write(json.dumps(record, sort_keys=True) + "\n")


def model_error(record: dict[str, Any], scale: float = 1.0) -> float | None:
    """The model's error on one record: estimate × scale / measured device time - 1; None without both."""
    est, real = record.get("estimated_seconds"), record.get("measured_device_seconds")
    return est * scale / real - 1 if est and real else None


def compare(path: Path) -> list[tuple[dict[str, Any], float | None]]:
    """Each record and the model's error on it (`model_error`)."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            rows.append((record, model_error(record)))
    return rows
