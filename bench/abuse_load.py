"""A mixed load under abuse: 200 runs, half of them hostile programs, 20 clients at once.

Usage: .venv/bin/python bench/abuse_load.py [--runs 200] [--clients 20] [--sandbox hardened]

A real server (a subprocess, the hardened backend) gets `--runs` runs from `--clients` concurrent
clients; every other run is a row of the hostile corpus (`tests/sandbox/hostile_corpus.py`: escapes,
floods, bombs, forged reports, unstoppable threads, …), the rest a normal kernel that must pass.
Each client follows its run's events to `done`. Reported: HTTP 5xx (must be 0), runs never done
(stuck), runs done without a result (lost), normal runs that did not pass, health and live slots at
the end, the web server's memory (RSS at the start and the end, and its peak: the `progress_flood` row
writes 44 MiB of schema-valid events per run, which must not stay in the server), and wall time and
throughput. Rate limits are off (this measures the sandbox and the queue,
not the limiter); limits are the corpus's (20 s wall, 1 GiB).
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import json
import os
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from e2e_latency import start_server

from tests.sandbox.hostile_corpus import PASSING_KERNEL, ROWS, Host

DONE_SECONDS = 300


def request(method: str, url: str, body: dict | None = None, client: str = "") -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    headers = {"content-type": "application/json", "x-playground-client": client}
    try:
        with urllib.request.urlopen(
            urllib.request.Request(url, data, headers, method=method), timeout=60
        ) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc)


def follow(base: str, run_id: str) -> dict | None:
    """The `done` event's result, or None if the stream ended without one (a lost result)."""
    with urllib.request.urlopen(f"{base}/api/runs/{run_id}/events", timeout=DONE_SECONDS) as stream:
        kind = ""
        for raw in stream:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                kind = line.removeprefix("event: ")
            elif line.startswith("data: ") and kind == "done":
                return json.loads(line.removeprefix("data: "))
    return None


def one(base: str, index: int, host: Host) -> tuple[str, str, int, str, str]:
    """(kind, row, http status of the submit, outcome, summary)"""
    if index % 2:
        row = ROWS[(index // 2) % len(ROWS)]
        kind, name, source = "hostile", row.name, host.fill(row.source)
    else:
        kind, name, source = "normal", "passing", PASSING_KERNEL + f"\n# run {index}\n"
    status, body = request("POST", f"{base}/api/runs", {"source": source}, client=f"c{index % 20}")
    if status != 201:
        return kind, name, status, "refused", ""
    try:
        result = follow(base, body["id"])
    except TimeoutError:
        return kind, name, status, "stuck", ""
    if result is None:
        return kind, name, status, "lost", ""
    return kind, name, status, result["status"], result.get("summary", "")


def rss_mb(pid: int) -> dict[str, float]:
    """The process's resident memory now (VmRSS) and at its peak (VmHWM), in MB."""
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/status").read_text().splitlines())
    return {name: int(fields[name].split()[0]) / 1024 for name in ("VmRSS", "VmHWM")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--sandbox", default="hardened")
    args = parser.parse_args()
    host = Host(1, 1, "/nonexistent.sock", "none", "/nonexistent", "/nonexistent", "CANARY", "bench", "/")
    limits = {
        "PLAYGROUND_WALL_SECONDS": "20",
        "PLAYGROUND_CPU_SECONDS": "15",
        "PLAYGROUND_MEMORY_BYTES": str(1 << 30),
        "PLAYGROUND_OUTPUT_BYTES": str(16 << 10),
        "PLAYGROUND_RATE_PER_MINUTE": "0",
        "PLAYGROUND_ADDRESS_RATE_PER_MINUTE": "0",
        "PLAYGROUND_PER_ADDRESS_QUEUE": str(args.clients * 2),
        "PLAYGROUND_QUEUE_SIZE": str(args.runs),
    }
    os.environ.update(limits)
    with tempfile.TemporaryDirectory() as data:
        proc, base = start_server(args.sandbox, Path(data), slots=None)
        try:
            memory_before = rss_mb(proc.pid)
            started = time.monotonic()
            with concurrent.futures.ThreadPoolExecutor(args.clients) as pool:
                outcomes = list(pool.map(lambda i: one(base, i, host), range(args.runs)))
            wall = time.monotonic() - started
            health_status, health = request("GET", f"{base}/api/health")
            memory_after = rss_mb(proc.pid)
        finally:
            proc.terminate()
            proc.wait(30)
    codes = collections.Counter(code for _, _, code, _, _ in outcomes)
    normal = collections.Counter(outcome for kind, _, _, outcome, _ in outcomes if kind == "normal")
    hostile = collections.Counter(outcome for kind, _, _, outcome, _ in outcomes if kind == "hostile")
    stuck = sum(1 for *_, o, _ in outcomes if o == "stuck")
    lost = sum(1 for *_, o, _ in outcomes if o == "lost")
    print(
        f"{args.runs} runs ({args.runs // 2} hostile), {args.clients} clients, sandbox {args.sandbox}, {time.strftime('%Y-%m-%d')}"
    )
    print(f"HTTP status of submits: {dict(codes)}; 5xx: {sum(n for c, n in codes.items() if c >= 500)}")
    print(f"stuck runs: {stuck}; lost results: {lost}")
    print(f"normal runs: {dict(normal)}")
    for index, (kind, _, _, outcome, summary) in enumerate(outcomes):
        if kind == "normal" and outcome != "passed":  # with the hostile rows submitted around it
            around = [outcomes[i][1] for i in (index - 1, index + 1) if 0 <= i < len(outcomes)]
            print(f"  normal run {index} ({outcome}, next to {', '.join(around)}): {summary[:400]}")
    print(f"hostile runs: {dict(hostile)}")
    print(
        f"health at the end: HTTP {health_status}, {health['status']}, slots alive {health['slots_alive']}/{health['slots']}, "
        f"sandbox restarts {health['sandbox']['restarts']}, quarantined {health['sandbox']['quarantined_slots']}"
    )
    print(
        f"web server RSS: {memory_before['VmRSS']:.0f} MB at the start, {memory_after['VmRSS']:.0f} MB at the end, "
        f"peak {memory_after['VmHWM']:.0f} MB"
    )
    print(f"wall {wall:.1f} s, {args.runs / wall:.2f} runs/s")


if __name__ == "__main__":
    main()
