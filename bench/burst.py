"""A class presses Run at once: 30 clients run `tiled_matmul` together, then a greedy client joins.

Usage: .venv/bin/python bench/burst.py [--clients 30] [--greedy-runs 100] [--sandbox auto]

Measured in one run against a real server (subprocess) and real sandboxed runs:
- single-run time T1 (one run alone);
- burst: every client submits one run at the same moment; makespan, throughput against the ideal
  (slots / T1), each client's latency, and `/api/health` latency percentiles during the burst;
- greedy: one client fires `--greedy-runs` runs (honouring 429/503 Retry-After) while the others
  submit one each; the others' latencies against the plain burst show what the greedy one costs them.
Each run's source differs by a comment, so no result comes from the cache.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import statistics
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from e2e_latency import KERNEL, start_server


def post_run(base: str, client: str, tag: str) -> tuple[int, dict, dict]:
    source = KERNEL.read_text() + f"\n# {tag}\n"
    body = json.dumps({"source": source, "entry": "tiled_matmul"}).encode()
    request = urllib.request.Request(
        f"{base}/api/runs",
        data=body,
        headers={"content-type": "application/json", "x-playground-client": client},
    )
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.load(response), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, json.load(exc), dict(exc.headers)


def wait_done(base: str, run_id: str) -> dict:
    """Follow the run's Server-Sent Events until `done`, as the page does (no polling load)."""
    with urllib.request.urlopen(f"{base}/api/runs/{run_id}/events") as stream:
        kind = ""
        for raw in stream:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                kind = line.removeprefix("event: ")
            elif line.startswith("data: ") and kind == "done":
                return json.loads(line.removeprefix("data: "))
    raise RuntimeError(f"the event stream of run {run_id} ended without `done`")


def one_run(base: str, client: str, tag: str) -> tuple[float, str]:
    t0 = time.perf_counter()
    while True:
        status, body, headers = post_run(base, client, tag)
        if status == 201:
            break
        time.sleep(float(headers.get("Retry-After", "1")))
    result = wait_done(base, body["id"])
    if result["status"] != "passed":
        print(f"run {body['id']} ({tag}): {result['summary'][:500]}", file=sys.stderr)
    return time.perf_counter() - t0, result["status"]


class HealthProbe(threading.Thread):
    def __init__(self, base: str) -> None:
        super().__init__(daemon=True)
        self.base, self.samples, self.stop = base, [], threading.Event()
        self.unhealthy = 0

    def run(self) -> None:
        while not self.stop.is_set():
            t0 = time.perf_counter()
            try:
                urllib.request.urlopen(f"{self.base}/api/health").read()
            except urllib.error.HTTPError as exc:  # an unhealthy answer is still an answer: time it
                exc.read()
                self.unhealthy += 1
            self.samples.append(time.perf_counter() - t0)
            time.sleep(0.05)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def burst(base: str, clients: int, label: str) -> tuple[float, list[float]]:
    probe = HealthProbe(base)
    probe.start()
    t0 = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(clients) as pool:
        outcomes = list(pool.map(lambda i: one_run(base, f"student-{i}", f"{label} {i}"), range(clients)))
    makespan = time.perf_counter() - t0
    probe.stop.set()
    bad = [s for _, s in outcomes if s != "passed"]
    if bad:
        raise SystemExit(f"{len(bad)} runs did not pass: {bad[:3]}")
    burst.health = probe.samples  # type: ignore[attr-defined]
    return makespan, [seconds for seconds, _ in outcomes]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=30)
    parser.add_argument("--greedy-runs", type=int, default=100)
    parser.add_argument("--sandbox", default="auto")
    args = parser.parse_args()
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        proc, base = start_server(args.sandbox, Path(tmp), slots=None)
        try:
            version = json.load(urllib.request.urlopen(f"{base}/api/version"))
            slots = json.load(urllib.request.urlopen(f"{base}/api/health"))["slots"]
            one_run(base, "warmup", "warm-up")
            single = statistics.median(one_run(base, "solo", f"solo {i}")[0] for i in range(2))
            makespan, latencies = burst(base, args.clients, "burst")
            health = burst.health  # type: ignore[attr-defined]
            greedy_done: list[float] = []
            greedy_stop = threading.Event()

            def greedy_client() -> None:
                for i in range(args.greedy_runs):
                    if greedy_stop.is_set():
                        return
                    greedy_done.append(one_run(base, "greedy", f"greedy {i}")[0])

            greedy = threading.Thread(target=greedy_client, daemon=True)
            greedy.start()
            time.sleep(1.0)
            _, latencies_g = burst(base, args.clients - 1, "with-greedy")
            greedy_stop.set()
            greedy.join(timeout=120)  # its run in flight finishes; no new one starts
        finally:
            proc.terminate()
            proc.wait(10)
    ideal = slots / single
    print(
        f"burst of {args.clients} clients · tiled_matmul · {slots} slots · sandbox {version['sandbox']} · "
        f"{time.strftime('%Y-%m-%d')}"
    )
    rows = [
        ("single run alone (T1)", f"{single:.2f} s"),
        ("burst makespan", f"{makespan:.1f} s"),
        ("throughput / ideal (slots / T1)", f"{args.clients / makespan / ideal:.0%}"),
        ("client latency median / max", f"{statistics.median(latencies):.1f} s / {max(latencies):.1f} s"),
        (
            "/api/health p50 / p99 during burst",
            f"{percentile(health, 0.5) * 1e3:.1f} ms / {percentile(health, 0.99) * 1e3:.1f} ms",
        ),
        (
            f"with a greedy client: others' median / max ({args.clients - 1} clients)",
            f"{statistics.median(latencies_g):.1f} s / {max(latencies_g):.1f} s",
        ),
        ("greedy client's runs finished meanwhile", f"{len(greedy_done)}"),
        ("others' max latency with greedy / without", f"{max(latencies_g) / max(latencies):.2f}x"),
    ]
    for name, value in rows:
        print(f"  {name:62} {value}")


if __name__ == "__main__":
    main()
