"""Measured runs kept beside their estimates, so the time model can be checked on the operator's chips.

`python -m sandbox tune … --measure` appends one JSON line per measured config to a file
(`--record`, default `tune-measurements.jsonl`): what was run (file, entry, parameters, target
size, chip and the device JAX reported), the model's estimate with its band, and the device time
and host dispatch the profiler traces gave. `compare` reads such a file back into the model's
error per line, the number `tests/model/test_validation.py` computes for published points.
"""

from __future__ import annotations

import json
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
) -> list[dict[str, Any]]:
    """One record per config that was measured."""
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
            }
        )
    return found


def append(path: Path, found: list[dict[str, Any]]) -> None:
    with path.open("a", encoding="utf-8") as out:
        for record in found:
            out.write(json.dumps(record, sort_keys=True) + "\n")


def compare(path: Path) -> list[tuple[dict[str, Any], float | None]]:
    """Each record and the model's error on it (estimate / measured device time - 1; None without an estimate)."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            est, real = record.get("estimated_seconds"), record.get("measured_device_seconds")
            rows.append((record, est / real - 1 if est and real else None))
    return rows
