"""Page weight and time to an interactive editor, measured in one run against a real server.

Usage: .venv/bin/python bench/page_load.py [--loads 7] [--screenshot docs/screenshot.png]

- Weight: every file the page loads on a first visit until the network is idle (HTML, JS modules,
  CSS, the editor's part of the CodeMirror bundle, the favicon), as transferred with gzip, and raw;
  read from the browser's resource timing. Parts loaded on first use (the diff view, Markdown, Tune,
  the lesson builder) are not in it. The page's API calls are listed apart.
- Requests: how many went to the server and the bytes transferred (headers included), on the
  first load and on a repeat load in the same context (a cached file costs nothing; a
  revalidated one a 304).
- Time to an interactive editor: navigation start to the page's ready mark (`html[data-ready]`,
  set once the editor is mounted, the catalog loaded and Run enabled), cold (fresh browser
  context: empty cache) and warm (a reload in the same context), medians of --loads.
- --screenshot: after the loads, run the `tiled_matmul` solution and save a screenshot of the
  passed result (the README's picture).

Needs Chromium (apt-get install chromium) and the test extras (playwright).
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import threading
import time
from pathlib import Path

import uvicorn

from server.__main__ import UVICORN_OPTIONS
from server.app import create_app
from server.settings import Settings

READY = "html[data-ready='1']"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]


def serve(data_dir: Path) -> str:
    app = create_app(Settings(data_dir=data_dir, sandbox="local", slots=1, timing_budget_seconds=0.3))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", **UVICORN_OPTIONS))
    threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{sock.getsockname()[1]}"


def load(page, url: str) -> float:
    """Seconds from navigation start to the ready mark, as the page itself measured them."""
    page.goto(url)
    page.wait_for_selector(READY)
    return page.evaluate("() => performance.getEntriesByName('ready')[0].startTime / 1000")


def weight(page) -> tuple[int, int, list[tuple[str, int, int]]]:
    entries = page.evaluate(
        "() => [performance.getEntriesByType('navigation')[0], ...performance.getEntriesByType('resource')]"
        ".filter(e => !e.name.includes('/api/'))"
        ".map(e => [new URL(e.name).pathname, e.encodedBodySize, e.decodedBodySize])"
    )
    unique = list({e[0]: e for e in entries}.values())  # the favicon is used three times, fetched once
    return sum(e[1] for e in unique), sum(e[2] for e in unique), unique


def api_weight(page) -> tuple[int, int]:
    """The page's own API calls on a first load (catalog, versions, chips, runtimes): requests, gzip bytes."""
    sizes = page.evaluate(
        "() => performance.getEntriesByType('resource').filter(e => e.name.includes('/api/'))"
        ".map(e => e.encodedBodySize)"
    )
    return len(sizes), sum(sizes)


def fetched(page) -> tuple[int, int]:
    """Requests that went to the server on this load (a cache hit transfers 0 bytes; a 304 its
    headers), and the bytes they transferred; the /api/ calls are left out."""
    sizes = page.evaluate(
        "() => [performance.getEntriesByType('navigation')[0], ...performance.getEntriesByType('resource')]"
        ".filter(e => !e.name.includes('/api/') && e.transferSize > 0).map(e => e.transferSize)"
    )
    return len(sizes), sum(sizes)


def screenshot(browser, url: str, path: Path) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 720}, color_scheme="light")
    page = context.new_page()
    page.goto(f"{url}/?entry=tiled_matmul")
    page.wait_for_selector(READY)
    page.click("#solution")
    page.click("#confirm-yes")  # the page asks once before it shows a solution
    page.click("#run")
    page.wait_for_selector("html[data-running='0'] #result[data-status]", timeout=120_000)
    page.evaluate("() => document.getElementById('notices').replaceChildren()")
    path.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(path))
    context.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--loads", type=int, default=7)
    parser.add_argument("--screenshot", type=Path)
    args = parser.parse_args()
    import tempfile

    from playwright.sync_api import sync_playwright

    url = serve(Path(tempfile.mkdtemp(prefix="page-load-")))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"),
            headless=True,
            args=CHROMIUM_ARGS,
        )
        cold, warm = [], []
        gz = raw = 0
        first_req = first_bytes = repeat_req = repeat_bytes = api_requests = api_bytes = 0
        files: list[tuple[str, int, int]] = []
        for trial in range(args.loads + 1):  # the first round warms the server and is not counted
            context = browser.new_context(viewport={"width": 1280, "height": 720})
            page = context.new_page()
            cold_s = load(page, url + "/")
            # What loads after the ready mark without the user doing anything counts too.
            page.wait_for_load_state("networkidle")
            gz, raw, files = weight(page)
            api_requests, api_bytes = api_weight(page)
            first_req, first_bytes = fetched(page)
            warm_s = load(page, url + "/")
            repeat_req, repeat_bytes = fetched(page)
            context.close()
            if trial:
                cold.append(cold_s)
                warm.append(warm_s)
        if args.screenshot:
            screenshot(browser, url, args.screenshot)
        browser.close()
    print(f"{'file':52} {'gzip':>9} {'raw':>9}")
    for name, enc, dec in sorted(files, key=lambda f: -f[1]):
        print(f"{name:52} {enc:9,} {dec:9,}")
    print(f"{'total (files of the page, first load)':52} {gz:9,} {raw:9,}")
    print(f"{'besides: the API calls it makes (' + str(api_requests) + ')':52} {api_bytes:9,}")
    print(
        f"\nfirst load: {first_req} requests, {first_bytes:,} B transferred; "
        f"repeat load: {repeat_req} requests, {repeat_bytes:,} B transferred"
    )
    print(
        f"time to an interactive editor (median of {args.loads}): cold {statistics.median(cold) * 1000:.0f} ms, "
        f"warm {statistics.median(warm) * 1000:.0f} ms (min cold {min(cold) * 1000:.0f} ms)"
    )
    print(f"load average during the run: {os.getloadavg()[0]:.2f} (2 cores, shared)")


if __name__ == "__main__":
    main()
