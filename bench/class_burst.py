"""A class of 30 behind one address presses Run at once, through a class session.

Usage: .venv/bin/python bench/class_burst.py [--students 30] [--sandbox auto]

Against a real server (subprocess) with real sandboxed runs of `tiled_matmul`, all from 127.0.0.1 (one
"school address"): a lesson, a class on it, every student joined with their own token, then every student
submits one run at the same moment (sources differ by a comment, so nothing comes from the cache). Reports
failures (any refusal or a run that did not pass), and for each student the queue's first wait estimate
(`eta_seconds` of the first `queued` event) against the wait that followed (submit to `running`):
the median student's estimate error, and the spread; and the start predicted by the estimate a
student saw half-way through their wait. Two solo runs first give the queue its mean run time.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import statistics
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from e2e_latency import KERNEL, start_server


def call(
    base: str, method: str, path: str, body: dict | None = None, headers: dict | None = None
) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        f"{base}{path}",
        data=data,
        method=method,
        headers={"content-type": "application/json", **(headers or {})},
    )
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.load(response)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def follow(base: str, run_id: str, t0: float) -> tuple[list, float | None, float, dict]:
    """([(seconds since submit, eta_seconds) of each `queued` event], seconds from submit to `running`,
    seconds in a slot, the result) from the run's event stream."""
    etas, started, kind = [], None, ""
    with urllib.request.urlopen(f"{base}/api/runs/{run_id}/events") as stream:
        for raw in stream:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                kind = line.removeprefix("event: ")
            elif line.startswith("data: "):
                data = json.loads(line.removeprefix("data: "))
                if kind == "queued" and data.get("eta_seconds") is not None:
                    etas.append((time.perf_counter() - t0, data["eta_seconds"]))
                elif kind == "running" and started is None:
                    started = time.perf_counter() - t0
                elif kind == "done":
                    return etas, started, time.perf_counter() - t0 - (started or 0.0), data
    raise RuntimeError(f"the event stream of run {run_id} ended without `done`")


def student_run(base: str, token: str, tag: str, barrier) -> dict:
    source = KERNEL.read_text() + f"\n# {tag}\n"
    barrier.wait()
    t0 = time.perf_counter()
    status, body = call(
        base,
        "POST",
        "/api/runs",
        {"source": source, "entry": "tiled_matmul", "class_token": token, "step": 1},
    )
    if status != 201:
        return {"refused": status, "detail": body.get("detail")}
    etas, started, slot, result = follow(base, body["id"], t0)
    # The estimate shown half-way through the wait: the start it predicted then.
    halfway = [at + eta for at, eta in etas if started and at <= started / 2]
    return {
        "eta": etas[0][1] if etas else None,
        "halfway": halfway[-1] if halfway else None,
        "wait": started,
        "slot": slot,
        "status": result["status"],
        "latency": time.perf_counter() - t0,
    }


def start(sandbox: str, data_dir: Path) -> tuple:
    """The server with its default slots and no cache, given up to two minutes to start (its warm
    sandbox pool takes a while on a loaded machine)."""
    return start_server(sandbox, data_dir, slots=None, tries=1200)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--sandbox", default="auto")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        proc, base = start(args.sandbox, Path(tmp))
        try:
            slots = json.load(urllib.request.urlopen(f"{base}/api/health"))["slots"]
            step = {"source": KERNEL.read_text(), "entry": "tiled_matmul", "chip": "v5p", "note": "Run it."}
            lesson = call(base, "POST", "/api/lessons", {"title": "Burst", "steps": [step]})[1]
            room = call(base, "POST", "/api/classes", {"lesson": lesson["id"]})[1]
            tokens = [
                call(base, "POST", f"/api/classes/{room['code']}/join", {"name": f"s{i}"})[1]["student_token"]
                for i in range(args.students)
            ]
            solos = [  # the queue learns the run time from these
                student_run(base, tokens[0], f"solo {i}", threading.Barrier(1)) for i in range(2)
            ]
            barrier = threading.Barrier(args.students)
            t0 = time.perf_counter()
            with concurrent.futures.ThreadPoolExecutor(args.students) as pool:
                outcomes = list(
                    pool.map(
                        lambda i: student_run(base, tokens[i], f"student {i}", barrier), range(args.students)
                    )
                )
            makespan = time.perf_counter() - t0
            grid = call(
                base,
                "GET",
                f"/api/classes/{room['id']}/progress",
                headers={"Authorization": f"Bearer {room['teacher_token']}"},
            )[1]
        finally:
            proc.terminate()
            proc.wait(10)
    failures = [o for o in outcomes if "refused" in o or o["status"] != "passed"]
    waited = sorted(
        (o for o in outcomes if o.get("eta") is not None and o.get("wait")), key=lambda o: o["wait"]
    )
    median = waited[len(waited) // 2] if waited else None
    errors = [(o["eta"] - o["wait"]) / o["wait"] for o in waited if o["wait"] > 1.0]
    print(
        f"class of {args.students} from one address · tiled_matmul · {slots} slots · {time.strftime('%Y-%m-%d')}"
    )
    rows = [
        ("failures (refused or not passed)", f"{len(failures)} {failures[:2] if failures else ''}"),
        (
            "makespan / latency median / max",
            f"{makespan:.1f} s / {statistics.median(o.get('latency', 0) for o in outcomes):.1f} s / {max(o.get('latency', 0) for o in outcomes):.1f} s",
        ),
        (
            "teacher's grid: passed",
            f"{sum(1 for s in grid['students'] if s['steps'].get('1', {}).get('status') == 'passed')} of {len(grid['students'])}",
        ),
    ]
    if median is not None:
        rows.append(
            (
                "median student: estimated / actual wait",
                f"{median['eta']:.1f} s / {median['wait']:.1f} s ({(median['eta'] - median['wait']) / median['wait']:+.0%})",
            )
        )
    halfway = [(o["halfway"] - o["wait"]) / o["wait"] for o in waited if o["wait"] > 1.0 and o.get("halfway")]
    if halfway:
        rows.append(
            (
                "estimate shown half-way through the wait: error median / worst",
                f"{statistics.median(halfway):+.0%} / {max(halfway, key=abs):+.0%}",
            )
        )
    if errors:
        rows.append(
            (
                "estimate error over students who waited > 1 s: median / worst",
                f"{statistics.median(errors):+.0%} / {max(errors, key=abs):+.0%}",
            )
        )
    rows.append(
        (
            "seconds in a slot: solo runs / burst median",
            f"{' + '.join(f'{o["slot"]:.1f}' for o in solos)} / "
            f"{statistics.median(o.get('slot', 0) for o in outcomes):.1f}",
        )
    )
    for name, value in rows:
        print(f"  {name:64} {value}")


if __name__ == "__main__":
    main()
