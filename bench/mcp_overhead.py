"""What the MCP server costs per call against the HTTP API: the same runs (fake sandbox, so only the
server's own work is timed) through the SDK's MCP client and through `pallas_playground.Client`
(POST + SSE), interleaved, on one live server. Prints the median and p90 seconds of each, and the
time to open an MCP session. One run; the machine's load matters (print `uptime` beside it).

    .venv/bin/python bench/mcp_overhead.py [--runs 40]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pallas_playground import Client
from server.app import create_app
from server.settings import Settings
from tests.api.fakes import FakeBackend
from tests.live import serving
from tests.mcp_session import call, session

SOURCE = "def matmul(x, y):\n    return x @ y\n"


def quantiles(times: list[float]) -> str:
    ordered = sorted(times)
    return f"median {statistics.median(ordered) * 1e3:.1f} ms, p90 {ordered[int(0.9 * (len(ordered) - 1))] * 1e3:.1f} ms"


async def measure(url: str, runs: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {"mcp": [], "http": [], "session": []}
    client = Client(url)
    for i in range(runs):
        start = time.perf_counter()
        async with session(url) as mcp:
            times["session"].append(time.perf_counter() - start)
            start = time.perf_counter()
            done = await call(mcp, "run_kernel", {"source": f"# {i} mcp\n{SOURCE}", "entry": "tiled_matmul"})
            times["mcp"].append(time.perf_counter() - start)
            assert done.structured["status"] == "passed", done.text
        start = time.perf_counter()
        finished = await anyio.to_thread.run_sync(
            lambda i=i: client.run(f"# {i} http\n{SOURCE}", entry="tiled_matmul")
        )
        times["http"].append(time.perf_counter() - start)
        assert finished.result.status.value == "passed"
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    limits = {"rate_per_minute": 0, "address_rate_per_minute": 0, "mcp_calls_per_minute": 0}
    with tempfile.TemporaryDirectory() as data:
        settings = Settings(data_dir=Path(data), slots=1, **limits)
        with serving(create_app(settings, backend=FakeBackend())) as url:
            times = anyio.run(measure, url, args.runs)
    print(f"{args.runs} runs each, fake sandbox, one live server")
    print(f"  run_kernel over MCP (call to result): {quantiles(times['mcp'])}")
    print(f"  POST /api/runs + SSE to done (Client.run): {quantiles(times['http'])}")
    print(f"  opening an MCP session (initialize): {quantiles(times['session'])}")


if __name__ == "__main__":
    main()
