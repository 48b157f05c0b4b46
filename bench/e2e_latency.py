"""End-to-end latency of `tiled_matmul` through HTTP vs the same kernel run in-process.

Usage: .venv/bin/python bench/e2e_latency.py [--repeats 3] [--sandbox local|hardened|auto]

Everything is measured in one run on this machine, so the ratios are meaningful even when the
absolute figures are noisy. Rows:
- in-process, warm: one more call of the jitted kernel in a process that already ran it;
- in-process, first call: trace + compile + run in a process that has JAX imported;
- fresh process: `python -c` importing JAX and running the kernel once (what a naive sandbox pays);
- HTTP end to end: POST /api/runs → `done` through the real server and sandbox, which checks two
  cases against the reference, times the kernel and accounts memory;
- time to first verdict: POST → case 1's SSE event, against the in-process first call with the same
  trace recording, and where the difference goes (when each earlier event arrived).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KERNEL = ROOT / "kernels_catalog" / "tiled_matmul" / "kernel.py"
IN_PROCESS = f"""
import contextlib, time, json, sys
t0 = time.perf_counter()
import jax, jax.numpy as jnp
from jax.experimental.pallas import tpu as pltpu
pltpu.set_tpu_interpret_mode(pltpu.InterpretParams())
recording = contextlib.nullcontext
if sys.argv[1:] == ["trace"]:  # the harness's trace recorder, installed before the kernel is defined
    from sandbox.harness.trace import capture
    recording = capture.install().recording
ns = {{}}
exec(compile(open({str(KERNEL)!r}).read(), "kernel.py", "exec"), ns)
x = jax.random.normal(jax.random.key(0), (256, 256), jnp.float32)
y = jax.random.normal(jax.random.key(1), (256, 256), jnp.float32)
dev = jax.sharding.AbstractDevice("TPU v5p", 1, "tpu")
with jax.sharding.use_abstract_mesh(jax.sharding.AbstractMesh((), (), abstract_device=dev)):
    jax.block_until_ready(x + y)
    t1 = time.perf_counter()
    with recording():
        jax.block_until_ready(ns["matmul"](x, y))
    t2 = time.perf_counter()
    warm = []
    for _ in range(5):
        t = time.perf_counter(); jax.block_until_ready(ns["matmul"](x, y)); warm.append(time.perf_counter() - t)
print(json.dumps({{"process": t2 - t0, "first": t2 - t1, "warm": sorted(warm)[2]}}))
"""


def in_process(*args: str) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", IN_PROCESS, *args], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# Events before the first verdict, in the order they come (case 1 is the verdict).
MILESTONES = ("running", "started", "versions", "imported", "compiled", "trace", "case")


def http_run(base: str, arrivals: dict[str, list[float]] | None = None) -> float:
    """Seconds to `done`; `arrivals` gets, per milestone, seconds from POST to its first event."""
    body = json.dumps({"source": KERNEL.read_text(), "entry": "tiled_matmul", "fresh": True}).encode()
    request = urllib.request.Request(
        f"{base}/api/runs", data=body, headers={"content-type": "application/json"}
    )
    t0 = time.perf_counter()
    created = json.load(urllib.request.urlopen(request))
    seen: dict[str, float] = {"posted": time.perf_counter() - t0}
    with urllib.request.urlopen(base + created["events_url"]) as stream:
        for line in stream:
            if line.startswith(b"event: "):
                kind = line[7:].decode().strip()
                seen.setdefault(kind, time.perf_counter() - t0)
                if kind == "done":
                    break
    elapsed = time.perf_counter() - t0
    if arrivals is not None:
        for kind, at in seen.items():
            arrivals.setdefault(kind, []).append(at)
    state = json.load(urllib.request.urlopen(base + created["url"]))
    if state["result"]["status"] != "passed":
        raise SystemExit(f"benchmark run did not pass: {state['result']['summary']}")
    return elapsed


def start_server(sandbox: str, data_dir: Path, slots: int | None = 1) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    env = {
        **os.environ,
        "PLAYGROUND_PORT": str(port),
        "PLAYGROUND_SANDBOX": sandbox,
        "PLAYGROUND_DATA_DIR": str(data_dir),
        "PLAYGROUND_CACHE_SIZE": "0",
    }
    if slots is not None:
        env["PLAYGROUND_SLOTS"] = str(slots)
    return serve(env, port, "/api/health")


def serve(
    env: dict[str, str], port: int, ready_path: str, tries: int = 200
) -> tuple[subprocess.Popen[bytes], str]:
    """`python -m server` with `env`, once `ready_path` answers on `port`: the process and its base URL."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "server"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    for _ in range(tries):
        try:
            urllib.request.urlopen(f"{base}{ready_path}", timeout=1)
            return proc, base
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise SystemExit("the web server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--sandbox", default="auto")
    args = parser.parse_args()
    import tempfile

    local = [in_process() for _ in range(args.repeats)]
    traced = [in_process("trace") for _ in range(args.repeats)]
    arrivals: dict[str, list[float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        proc, base = start_server(args.sandbox, Path(tmp))
        try:
            http_run(base)  # the first run warms caches (and a warm pool, if any)
            http = [http_run(base, arrivals) for _ in range(args.repeats)]
            backend = json.load(urllib.request.urlopen(f"{base}/api/version"))["sandbox"]
        finally:
            proc.terminate()
            proc.wait(10)
    rows = {
        "in-process, warm call": statistics.median(r["warm"] for r in local),
        "in-process, first call (compile + run)": statistics.median(r["first"] for r in local),
        "fresh process (import + compile + run)": statistics.median(r["process"] for r in local),
        f"HTTP end to end, full check ({backend} sandbox)": statistics.median(http),
    }
    http_s = rows[f"HTTP end to end, full check ({backend} sandbox)"]
    print(
        f"tiled_matmul f32 256³, median of {args.repeats}, {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}"
    )
    print(f"{'measurement':52} {'seconds':>9} {'HTTP / this':>12}")
    for name, seconds in rows.items():
        print(f"{name:52} {seconds:9.3f} {http_s / seconds:11.1f}x")
    verdict = statistics.median(arrivals["case"])
    first_traced = statistics.median(r["first"] for r in traced)
    print(
        f"\ntime to first verdict (case 1 over SSE) {verdict:.3f} s vs in-process first call with the trace "
        f"recorded {first_traced:.3f} s: {verdict / first_traced:.2f}x"
    )
    print("where it goes (median seconds from POST to each event's arrival):")
    for kind in ("posted", *MILESTONES):
        if kind in arrivals:
            print(f"  {kind:10} {statistics.median(arrivals[kind]):7.3f}")


if __name__ == "__main__":
    main()
