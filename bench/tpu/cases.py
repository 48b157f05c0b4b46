"""Run every case of every single-device catalog entry that lists the host's chip, natively, through the
playground's own CLI (`python -m sandbox run … --mode tpu --json`), and append one JSON line per case
(and one per run) to `--out`. Run on a TPU VM; `bench/tpu/README.md` says how, and what was measured.

Fields of a `case` line: entry, case, status (passed | mismatch | error | not run), max_abs_error,
measured_device_seconds (the timed case: the last one of the entry on a chip), reference_device_seconds,
device, jax, jaxlib, libtpu, commit. A `run` line: the run's status, summary, wall time of the whole
command (a fresh process per job: the chip's start is in it) and its phases.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from sandbox.catalog.entries import load_catalog  # noqa: E402
from sandbox.results.measured import playground_commit  # noqa: E402


def run_entry(slug: str, chip: str, timeout: float) -> tuple[dict[str, Any] | None, float, str]:
    command = [sys.executable, "-m", "sandbox", "run", f"kernels_catalog/{slug}/kernel.py", "--entry", slug]
    command += ["--chip", chip, "--mode", "tpu", "--backend", "local", "--json"]
    started = time.monotonic()
    try:
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, time.monotonic() - started, f"no answer within {timeout:.0f} s"
    wall = time.monotonic() - started
    try:
        return json.loads(done.stdout), wall, done.stderr[-2000:]
    except ValueError:
        return None, wall, (done.stdout + done.stderr)[-2000:]


def records(
    slug: str, result: dict[str, Any] | None, wall: float, log: str, commit: str
) -> list[dict[str, Any]]:
    when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    versions = (result or {}).get("versions") or {}
    common = {
        "entry": slug,
        "device": versions.get("device_kind", ""),
        "jax": versions.get("jax", ""),
        "jaxlib": versions.get("jaxlib", ""),
        "libtpu": versions.get("libtpu"),
        "commit": commit,
        "recorded_at": when,
    }
    run = {
        "kind": "run",
        **common,
        "status": (result or {}).get("status", "error"),
        "summary": (result or {}).get("summary", log.strip().splitlines()[-1:] or ""),
        "wall_seconds": round(wall, 3),
        "phases": (result or {}).get("phases"),
        "log_tail": log[-600:] if result is None or result.get("status") not in ("passed",) else "",
    }
    timing = (result or {}).get("timing") or {}
    lines = [run]
    for case in (result or {}).get("cases", []):
        timed = timing.get("case") == case["name"]
        errors = [
            o.get("max_abs_error") for o in case.get("outputs", []) if o.get("max_abs_error") is not None
        ]
        lines.append(
            {
                "kind": "case",
                **common,
                "case": case["name"],
                "dtype": case.get("dtype"),
                "dims": case.get("dims"),
                "status": "passed" if case.get("passed") else "mismatch",
                "max_abs_error": max(errors) if errors else None,
                "measured_device_seconds": timing.get("device_seconds") if timed else None,
                "reference_device_seconds": timing.get("reference_device_seconds") if timed else None,
            }
        )
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--chip", default="v5e")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--timeout", type=float, default=240.0)
    p.add_argument("--only", default="", help="comma-separated entry slugs (default: every one)")
    args = p.parse_args()
    only = {s for s in args.only.split(",") if s}
    commit = playground_commit()
    entries = [
        e
        for e in load_catalog().entries
        if e.devices == 1 and args.chip in e.chips and (not only or e.slug in only)
    ]
    for entry in entries:
        result, wall, log = run_entry(entry.slug, args.chip, args.timeout)
        found = records(entry.slug, result, wall, log, commit)
        with args.out.open("a", encoding="utf-8") as out:
            for line in found:
                out.write(json.dumps(line, sort_keys=True) + "\n")
        print(f"{entry.slug}: {found[0]['status']} in {wall:.1f} s: {found[0]['summary']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
