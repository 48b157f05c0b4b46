"""The Redis run queue at scale, measured in one run on this machine (it starts its own Redis).

Usage: .venv/bin/python bench/scale.py [--runs 60] [--job-seconds 2.0] [--clients 30] [--skip-burst]

- queue cost: submit → result over HTTP minus the job's own time, p50 / p99, with a job that takes
  no time (a worker whose backend only reports events), one run at a time;
- throughput against 1, 2, 4, 8 workers (one slot each) with a fixed-duration job that sleeps: the
  distribution layer alone (a sleeping job leaves the 2 cores to the queue); efficiency = ideal
  makespan (runs × duration / workers) over the measured one;
- the 30-client `tiled_matmul` burst (bench/burst.py) through Redis (one web server, one worker with
  as many slots as cores, same sandbox) against the in-process queue, with `/api/health` latency.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

from burst import burst, percentile
from e2e_latency import ROOT, free_port, serve, start_server

HERE = Path(__file__).resolve().parent


def services():  # tests/services.py: Debian's redis-server on loopback in a temporary directory
    spec = importlib.util.spec_from_file_location("services", ROOT / "tests" / "services.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["services"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def web_server(redis_url: str, prefix: str, data: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {
        **os.environ,
        "PLAYGROUND_PORT": str(port),
        "PLAYGROUND_REDIS_URL": redis_url,
        "PLAYGROUND_REDIS_PREFIX": prefix,
        "PLAYGROUND_DATA_DIR": str(data),
        "PLAYGROUND_CACHE_SIZE": "0",
        "PLAYGROUND_QUEUE_SIZE": "1000",
        "PLAYGROUND_PER_CLIENT_QUEUE": "1000",
        "PLAYGROUND_PER_ADDRESS_QUEUE": "1000",
        "PLAYGROUND_RATE_PER_MINUTE": "0",
        "PLAYGROUND_ADDRESS_RATE_PER_MINUTE": "0",
    }
    return serve(env, port, "/api/version", tries=300)  # health is 503 until a worker beats


def sleep_workers(redis_url: str, prefix: str, count: int, seconds: float) -> list[subprocess.Popen[bytes]]:
    argv = [sys.executable, str(HERE / "sleep_worker.py"), "--redis", redis_url, "--prefix", prefix]
    return [
        subprocess.Popen(
            [*argv, "--seconds", str(seconds), "--name", f"w{i}"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for i in range(count)
    ]


def wait_workers(base: str, count: int) -> None:
    for _ in range(600):
        try:
            pools = json.load(urllib.request.urlopen(f"{base}/api/health"))["pools"]
        except urllib.error.HTTPError as exc:  # 503 until a worker is live
            pools = json.load(exc)["pools"]
        if sum(p["workers"] for p in pools) >= count:
            return
        time.sleep(0.1)
    raise SystemExit(f"{count} workers did not show up")


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for proc in procs:
        proc.terminate()
    for proc in procs:
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()


def timed_run(base: str, client: str) -> tuple[float, float]:
    """Seconds from POST to the `done` event, and the job's own wall time."""
    body = json.dumps({"source": f"# {uuid.uuid4().hex}\n", "fresh": True}).encode()
    request = urllib.request.Request(
        f"{base}/api/runs",
        data=body,
        headers={"content-type": "application/json", "x-playground-client": client},
    )
    t0 = time.perf_counter()
    created = json.load(urllib.request.urlopen(request))
    with urllib.request.urlopen(base + created["events_url"]) as stream:
        kind = ""
        for raw in stream:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: ") and kind == "done":
                return time.perf_counter() - t0, json.loads(line[6:])["wall_seconds"]
    raise RuntimeError("no done event")


def queue_cost(redis_url: str, tmp: Path, runs: int) -> list[float]:
    prefix = f"cost{uuid.uuid4().hex[:6]}:"
    proc, base = web_server(redis_url, prefix, tmp / "cost")
    workers = sleep_workers(redis_url, prefix, 1, 0.0)
    try:
        wait_workers(base, 1)
        for _ in range(5):
            timed_run(base, "warm")
        return [total - job for total, job in (timed_run(base, "solo") for _ in range(runs))]
    finally:
        stop([*workers, proc])


def throughput(redis_url: str, tmp: Path, workers: int, seconds: float, per_worker: int) -> float:
    prefix = f"tp{workers}{uuid.uuid4().hex[:6]}:"
    proc, base = web_server(redis_url, prefix, tmp / f"tp{workers}")
    procs = sleep_workers(redis_url, prefix, workers, seconds)
    try:
        wait_workers(base, workers)
        runs = workers * per_worker
        t0 = time.perf_counter()
        with concurrent.futures.ThreadPoolExecutor(runs) as pool:
            list(pool.map(lambda i: timed_run(base, f"c{i}"), range(runs)))
        makespan = time.perf_counter() - t0
        return runs * seconds / workers / makespan
    finally:
        stop([*procs, proc])


def compare_burst(redis_url: str, tmp: Path, clients: int, sandbox: str) -> dict[str, float]:
    """Both queues up at once, bursts in the order in-process, Redis, Redis, in-process, so a drift
    of the machine's load (it is shared) weighs on both alike; makespans and health latencies summed."""
    local, local_base = start_server(sandbox, tmp / "inproc", slots=None)
    prefix = f"burst{uuid.uuid4().hex[:6]}:"
    web, redis_base = web_server(redis_url, prefix, tmp / "redis")
    backend = sandbox if sandbox != "auto" else default_backend()
    argv = [sys.executable, "-m", "sandbox.worker", "--redis", redis_url, "--prefix", prefix]
    argv += ["--slots", str(os.cpu_count() or 1), "--backend", backend]
    worker = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    makespans: dict[str, float] = {"local": 0.0, "redis": 0.0}
    health: dict[str, list[float]] = {"local": [], "redis": []}
    try:
        wait_workers(redis_base, 1)
        for name, base in (("local", local_base), ("redis", redis_base)):
            burst(base, 2, f"warm-up {name}")  # warm pools and caches before measuring
        for name in ("local", "redis", "redis", "local"):
            base = local_base if name == "local" else redis_base
            makespan, _ = burst(base, clients, f"burst {name} {uuid.uuid4().hex[:6]}")
            makespans[name] += makespan
            health[name] += burst.health  # type: ignore[attr-defined]
    finally:
        stop([worker, web, local])
    return {
        "in-process makespan": makespans["local"] / 2,
        "redis makespan": makespans["redis"] / 2,
        "ratio": makespans["local"] / makespans["redis"],
        "in-process health p99 ms": percentile(health["local"], 0.99) * 1e3,
        "redis health p99 ms": percentile(health["redis"], 0.99) * 1e3,
        "redis health p50 ms": percentile(health["redis"], 0.5) * 1e3,
    }


def default_backend() -> str:
    from sandbox.backends import default_backend_name

    return default_backend_name()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--job-seconds", type=float, default=2.0)
    parser.add_argument("--per-worker", type=int, default=4)
    parser.add_argument("--clients", type=int, default=30)
    parser.add_argument("--sandbox", default="auto")
    parser.add_argument("--skip-burst", action="store_true")
    parser.add_argument("--only-burst", action="store_true", help="skip the queue cost and the scaling")
    args = parser.parse_args()
    load = os.getloadavg()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        with services().redis_server(tmp) as server:
            version = subprocess.run(
                ["redis-server", "--version"], capture_output=True, text=True
            ).stdout.split()[2]
            cost = queue_cost(server.url, tmp, args.runs)
            scaling = {
                n: throughput(server.url, tmp, n, args.job_seconds, args.per_worker) for n in (1, 2, 4, 8)
            }
            compared = None if args.skip_burst else compare_burst(server.url, tmp, args.clients, args.sandbox)
    print(
        f"Redis queue · {os.cpu_count()} cores · Redis {version} · load average before "
        f"{load[0]:.1f} / after {os.getloadavg()[0]:.1f} · {time.strftime('%Y-%m-%d')}"
    )
    if cost:
        print(
            f"  queue cost (submit → result − job time, {args.runs} runs): "
            f"p50 {statistics.median(cost) * 1e3:.1f} ms, p99 {percentile(cost, 0.99) * 1e3:.1f} ms"
        )
    for n, efficiency in scaling.items():
        print(
            f"  {n} worker(s), {n * args.per_worker} runs of {args.job_seconds:.1f} s: scaling efficiency {efficiency:.0%}"
        )
    if compared:
        print(
            f"  {args.clients}-client tiled_matmul burst (mean of 2 each, ABBA order, sandbox {args.sandbox}): in-process {compared['in-process makespan']:.1f} s, "
            f"through Redis {compared['redis makespan']:.1f} s: throughput ratio {compared['ratio']:.2f}"
        )
        print(
            f"  /api/health during the burst: in-process p99 {compared['in-process health p99 ms']:.1f} ms; "
            f"through Redis p50 {compared['redis health p50 ms']:.1f} ms, p99 {compared['redis health p99 ms']:.1f} ms"
        )


if __name__ == "__main__":
    main()
