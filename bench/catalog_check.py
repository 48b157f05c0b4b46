"""The full check of every catalog entry's solution, timed, optionally against another checkout of the code.

Usage: .venv/bin/python bench/catalog_check.py [--repeats 3] [--backend hardened] [--against DIR]

Each entry's worked solution runs as a user's run would (`sandbox.backends.execute`: the reference's
job when its expected outputs are not kept yet, the kernel's job, the checker, `classify`) on one
backend with one slot, to its whole result (every case, the lowering check, timing, memory, the
trace, the estimate). A first run per entry warms the backend (the pool, the entry's expected outputs)
and is not counted; then `--repeats` timed runs, as medians of wall seconds.

`--against DIR` runs the same in a second process whose `sandbox` package is DIR's (e.g. an export of
an older commit: `git archive <commit> | tar -x -C DIR`), entry by entry, run by run, alternating
between the two, so both see the same load; the table then has both and their ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def serve(backend_name: str) -> None:
    """Worker mode: read a slug per line, run its solution, print the run's wall seconds and status."""
    from sandbox.backends import create_backend
    from sandbox.backends.execute import execute
    from sandbox.catalog.entries import load_catalog
    from sandbox.jobs.build import make_job
    from sandbox.limits import default_limits

    catalog = load_catalog()
    backend = create_backend(backend_name)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        entry = catalog.get(line.strip())
        assert entry is not None, line
        # Four times the usual wall and CPU limits: on a loaded machine a run must end by itself.
        limits = replace(default_limits(), wall_seconds=240.0, cpu_seconds=480)
        job = make_job(entry.solution_source, entry=entry, chip=entry.chips[0], limits=limits)
        t0 = time.monotonic()
        finished = execute(backend, job, threading.Event(), lambda kind, data: None)
        seconds = time.monotonic() - t0
        print(json.dumps({"seconds": seconds, "status": finished.result.status.value}), flush=True)
    backend.close()


class Checkout:
    """A worker process running one checkout's code."""

    def __init__(self, name: str, tree: Path, backend: str) -> None:
        env = {**os.environ, "PYTHONPATH": str(tree)}
        self.name = name
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--serve", "--backend", backend],
            cwd=tree,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert json.loads(self.proc.stdout.readline())["ready"]  # type: ignore[union-attr]

    def run(self, slug: str) -> dict[str, object]:
        self.proc.stdin.write(slug + "\n")  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]
        return json.loads(self.proc.stdout.readline())  # type: ignore[union-attr]

    def close(self) -> None:
        self.proc.stdin.close()  # type: ignore[union-attr]
        self.proc.wait(60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--backend", default="hardened")
    parser.add_argument("--against", type=Path, help="another checkout (its sandbox package is timed too)")
    parser.add_argument("--only", default="", help="comma-separated slugs (default: every entry)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.backend)
        return
    sys.path.insert(0, str(ROOT))
    from sandbox.catalog.entries import load_catalog

    slugs = [s for s in args.only.split(",") if s] or list(load_catalog().slugs)
    loads = [f"{os.getloadavg()[0]:.2f}"]
    checkouts = [Checkout("this", ROOT, args.backend)]
    if args.against:
        checkouts.insert(0, Checkout("against", args.against.resolve(), args.backend))
    times: dict[tuple[str, str], list[float]] = {}
    try:
        for slug in slugs:
            for checkout in checkouts:
                checkout.run(slug)  # warm-up
            for _ in range(args.repeats):
                for checkout in checkouts:
                    out = checkout.run(slug)
                    if out["status"] != "passed":
                        print(f"{slug} ({checkout.name}): {out['status']}", file=sys.stderr)
                    times.setdefault((slug, checkout.name), []).append(float(out["seconds"]))  # type: ignore[arg-type]
            loads.append(f"{os.getloadavg()[0]:.2f}")
    finally:
        for checkout in checkouts:
            checkout.close()
    names = [c.name for c in checkouts]
    print(
        f"full check per entry, {args.backend} backend, 1 slot, median of {args.repeats} (after a warm-up run)"
    )
    print(
        f"{'entry':28}" + "".join(f"{n:>12}" for n in names) + ("  this/against" if len(names) == 2 else "")
    )
    for slug in slugs:
        row = [statistics.median(times[(slug, n)]) for n in names]
        ratio = f"  {row[1] / row[0]:12.2f}" if len(row) == 2 else ""
        print(f"{slug:28}" + "".join(f"{v:12.2f}" for v in row) + ratio)
    print(f"load average (1 min) at the start and after each entry: {' '.join(loads)}")


if __name__ == "__main__":
    main()
